package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kiso-dev/kiso/internal/process"
)

// Steps the fleet benchmarks share (TestFleetBenchmark, its remote variant and TestReadsAtScaleBenchmark): the
// fleet's organizations, what they are bound to, and waiting for them.

// fleetBatch is how many organizations one kubectl apply holds.
const fleetBatch = 20

// fleetReadyTimeout bounds one step's pools becoming Ready; it is a failure bound, not a measurement.
const fleetReadyTimeout = 40 * time.Minute

// crossplaneIdle says whether Crossplane's XR controllers have no reconcile queued or running.
func crossplaneIdle(ctx context.Context) (bool, string, error) {
	busy, err := compositeReconciles(ctx, env)
	if err != nil {
		return false, "", err
	}
	for name, stale := range env.staleCompositeGauges {
		busy[name] -= stale
	}
	total := 0.0
	for _, v := range busy {
		total += v
	}
	return total == 0, fmt.Sprintf("Crossplane's XR controllers have %.0f reconciles queued or running", total), nil
}

// compositeReconciles reads, for each of Crossplane's XR controllers (composite/<XRD>), its queue's depth plus its
// workers busy, as its gauges say.
func compositeReconciles(ctx context.Context, e *Environment) (map[string]float64, error) {
	families, err := e.scrapeMetrics(ctx, "crossplane")
	if err != nil {
		return nil, err
	}
	busy := map[string]float64{}
	for name, v := range counters(families, "workqueue_depth", "name") {
		if strings.HasPrefix(name, "composite/") {
			busy[name] += v
		}
	}
	for name, v := range counters(families, "controller_runtime_active_workers", "controller") {
		if strings.HasPrefix(name, "composite/") {
			busy[name] += v
		}
	}
	return busy, nil
}

func fleetOrganization(i int) string { return fmt.Sprintf("fleet-%04d", i) }

// fleetCluster is what the fleet's organizations are bound to.
type fleetCluster struct {
	// binding says so, in the benchmark's first line.
	binding string
	// name is the XKarpenterCluster they are bound to, "" for none.
	name string
	// workload is the workload cluster they run in, nil when they run in the management cluster.
	workload *WorkloadCluster
}

// idleWindow is how long the fleet's idle cost is measured over: one Crossplane poll, or for a remote fleet one
// provider-kubernetes poll if longer. The provider polls each managed resource once per poll, spread by its jitter,
// and those that became Ready while the fleet onboarded are polled first a whole poll later: a shorter window right
// after the fleet settles would see only part of its steady cost.
func (bound fleetCluster) idleWindow() time.Duration {
	if bound.workload == nil {
		return fleetIdle
	}
	return max(fleetIdle, env.KubernetesProviderPoll)
}

// waitForClusterComposedT waits until the cluster organizations are bound to (the placement cluster when none) has
// composed what its organizations read: its admission policies where their pods run, type-checked by that
// apiserver, and its view for organizations. The clock starts after it: the benchmark measures onboarding
// organizations, not the cluster (with the cluster applied a moment before, the first organizations waited for
// its view and were composed again once it came).
func waitForClusterComposedT(t *testing.T, bound fleetCluster) {
	t.Helper()
	cluster, name := env.Cluster, placementCluster
	if bound.workload != nil {
		cluster, name = bound.workload.Cluster, bound.name
	}
	waitForTypeCheckedInT(t, cluster, name, placementPolicy)
	waitForTypeCheckedInT(t, cluster, name, poolsPolicy)
	env.Cluster.WaitForT(t, xrSettleTimeout, ClusterViewKind, "", clusterViewName(name), func(*unstructured.Unstructured) (bool, string) { return true, "" })
}

// fleetManifest is organizations from..to-1: each a namespace <org>-web the platform gives the organization,
// holding its claim, or (direct) beside its XR; bound to the cluster named, if any.
func fleetManifest(from, to int, direct bool, cluster string) []byte {
	var b strings.Builder
	for i := from; i < to; i++ {
		org := fleetOrganization(i)
		fmt.Fprintf(&b, `---
apiVersion: v1
kind: Namespace
metadata:
  name: %[1]s-web
  labels: {kiso.dev/organization: %[1]s}
`, org)
		if direct {
			fmt.Fprintf(&b, `---
apiVersion: kiso.dev/v1alpha1
kind: XKarpenterIsolation
metadata:
  name: %[1]s
`, org)
		} else {
			fmt.Fprintf(&b, `---
apiVersion: kiso.dev/v1alpha1
kind: KarpenterIsolation
metadata:
  name: %[1]s
  namespace: %[1]s-web
`, org)
		}
		fmt.Fprintf(&b, `spec:
  organization: %[1]s
  stacks: [{name: web}]
  nodeClassRef: {apiVersion: karpenter.kwok.sh/v1alpha1, kind: KWOKNodeClass, name: kwok-reference}
  nodePoolRef: {name: kwok-reference}
  pool: {limits: {cpu: 4}}
`, org)
		if cluster != "" {
			fmt.Fprintf(&b, "  clusterRef: {name: %s}\n", cluster)
		}
	}
	return []byte(b.String())
}

// waitForFleetReadyT waits until n organizations' XRs report every pool Ready (by Karpenter).
func waitForFleetReadyT(t *testing.T, n int) {
	t.Helper()
	waitForT(t, fleetReadyTimeout, fmt.Sprintf("%d organizations' pools Ready", n), func(ctx context.Context) (bool, string, error) {
		xrs, err := env.Cluster.List(ctx, IsolationKind, "", "")
		if err != nil {
			// Onboarding hundreds of organizations on 2 cores, the apiserver may not serve the whole list within
			// its request timeout (it resets the stream): the fleet is not Ready yet as far as anyone can tell, and
			// the wait's own timeout still bounds it.
			return false, "cannot list the organizations now: " + err.Error(), nil
		}
		ready := 0
		for _, xr := range xrs {
			pools, _, _ := unstructured.NestedSlice(xr.Object, "status", "pools")
			all := len(pools) > 0
			for _, p := range pools {
				if r, _ := p.(map[string]any)["ready"].(bool); !r {
					all = false
				}
			}
			if all {
				ready++
			}
		}
		return ready >= n, fmt.Sprintf("%d of %d organizations Ready", ready, n), nil
	})
}

func usageByServer(us []process.Usage) map[string]process.Usage {
	out := make(map[string]process.Usage, len(us))
	for _, u := range us {
		out[u.Name] = u
	}
	return out
}
