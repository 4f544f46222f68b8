package e2e

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kiso-dev/kiso/internal/process"
)

// The fleet benchmark in a workload cluster (make bench-fleet FLEET_CLUSTER=remote): the organizations are bound to
// an XKarpenterCluster with spec.workloadCluster, so everything kiso composes for them and reads for them there is
// a managed resource of provider-kubernetes in the management cluster, and their pools are made Ready by the
// workload cluster's Karpenter. Besides the management cluster's row, each step reads what the workload cluster
// and the providers spend: their CPU and memory, the workload apiserver's requests, each provider's requests to
// either apiserver by method (from its client's metrics, by host), and the managed resources per organization.

// The label provider-kubernetes gives each member of a collection, the collection's name; and the one Crossplane
// gives every composed resource, its XR's name.
const (
	collectionMemberLabel = "kubernetes.crossplane.io/owned-by-collection"
	compositeLabel        = "crossplane.io/composite"
)

// The servers the workload cluster adds: its own (named workload-<server>), and the providers that act in it from
// the management cluster.
const workloadServerPrefix = "workload-"

var (
	fleetProviders = []string{"provider-kubernetes", "provider-helm"}
	// remoteClients are the clients whose requests a step reads from their own metrics, by apiserver.
	remoteClients = []string{"provider-kubernetes", "provider-helm", workloadServerPrefix + "karpenter"}
)

// fleetRemoteMode is fleetClusterEnv's value, and the mode's name in docs/scale.md, for organizations in a workload
// cluster.
const fleetRemoteMode = "remote"

// remoteReadyLimit is the target for every pool of a step to be Ready from its first claim, printed beside the time
// it took: the benchmark measures, it does not fail on it.
const remoteReadyLimit = 10 * time.Minute

// remoteIdleGrace is how long a settled remote fleet is given for Crossplane's XR controllers to have nothing
// queued or running.
const remoteIdleGrace = 2 * time.Minute

// waitForRemoteIdleT waits up to remoteIdleGrace for Crossplane's XR controllers to be idle, and says so if they
// never were: provider-kubernetes rewrites the member of a collection of a cluster-scoped kind (every
// organization's namespace) at each poll, and each rewrite wakes the organization that reads it, so a remote fleet
// of hundreds of organizations keeps Crossplane busy while nothing changes. The idle minute then measures that.
func waitForRemoteIdleT(t *testing.T) {
	t.Helper()
	last := ""
	err := waitFor(t.Context(), remoteIdleGrace, "Crossplane's XR controllers idle", func(ctx context.Context) (bool, string, error) {
		idle, why, err := crossplaneIdle(ctx)
		last = why
		return idle, why, err
	})
	if err != nil {
		fmt.Printf("e2e: Crossplane never idle within %s of the fleet settling (%s): measuring idle from here\n", remoteIdleGrace, last)
	}
}

// giveNamespacesT labels, in the workload cluster, each organization's namespace <org>-web as the platform would,
// for organizations from..to-1, in batches of fleetBatch, one kubectl apply each. Nothing for organizations that
// run in the management cluster, where fleetManifest holds their namespaces.
func (bound fleetCluster) giveNamespacesT(t *testing.T, from, to int) {
	t.Helper()
	if bound.workload == nil {
		return
	}
	for first := from; first < to; first += fleetBatch {
		var b strings.Builder
		for i := first; i < min(first+fleetBatch, to); i++ {
			fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: %[1]s-web\n  labels: {kiso.dev/organization: %[1]s}\n", fleetOrganization(i))
		}
		if _, err := bound.workload.Kubectl.Run(t.Context(), []byte(b.String()), "apply", "--server-side", "-f", "-"); err != nil {
			t.Fatalf("cannot give organizations %d..%d their namespaces in the workload cluster: %v", first, min(first+fleetBatch, to)-1, err)
		}
	}
}

// serverUsage is one reading of every server's CPU and memory, by name.
type serverUsage map[string]process.Usage

func usageNow() serverUsage { return serverUsage(usageByServer(env.servers.Usage())) }

// management is the management cluster's servers, the providers that run there included: every server but the
// workload cluster's own.
func (u serverUsage) management() map[string]process.Usage {
	return u.where(func(name string) bool { return !strings.HasPrefix(name, workloadServerPrefix) })
}

func (u serverUsage) workload() map[string]process.Usage {
	return u.where(func(name string) bool { return strings.HasPrefix(name, workloadServerPrefix) })
}

func (u serverUsage) providers() map[string]process.Usage {
	return u.where(func(name string) bool { return slices.Contains(fleetProviders, name) })
}

func (u serverUsage) where(keep func(name string) bool) map[string]process.Usage {
	out := map[string]process.Usage{}
	for name, usage := range u {
		if keep(name) {
			out[name] = usage
		}
	}
	return out
}

// remoteReadingT reads the requests the workload cluster's apiserver served, and those the providers and the
// workload cluster's Karpenter sent to either apiserver ("provider-kubernetes → workload"); none for
// organizations that run in the management cluster.
func (bound fleetCluster) remoteReadingT(t *testing.T) requestReading {
	t.Helper()
	r := requestReading{clients: map[string]counterSet{}}
	if bound.workload == nil {
		return r
	}
	text, err := bound.workload.Kubectl.Run(t.Context(), nil, "get", "--raw", "/metrics")
	if err != nil {
		t.Fatalf("cannot read the workload cluster's kube-apiserver metrics: %v", err)
	}
	families, err := parseMetrics(workloadServerPrefix+"kube-apiserver", text)
	if err != nil {
		t.Fatal(err)
	}
	r.apiserver = counters(families, "apiserver_request_total", "verb", "group", "resource", "subresource")
	// A client's metrics name the apiserver by the host it dials.
	apiservers := map[string]string{hostOf(t, env.Cluster): "management", hostOf(t, bound.workload.Cluster): "workload"}
	for _, client := range remoteClients {
		families, err := env.scrapeMetrics(t.Context(), client)
		if err != nil {
			t.Fatal(err)
		}
		for key, v := range counters(families, "rest_client_requests_total", "host", "method") {
			host, method, _ := strings.Cut(key, " ")
			apiserver, ok := apiservers[host]
			if !ok {
				apiserver = host
			}
			name := client + " → " + apiserver
			if r.clients[name] == nil {
				r.clients[name] = counterSet{}
			}
			r.clients[name][method] += v
		}
	}
	return r
}

// hostOf is the host:port a client of the cluster's apiserver dials.
func hostOf(t *testing.T, c *Cluster) string {
	t.Helper()
	u, err := url.Parse(c.config.Host)
	if err != nil {
		t.Fatalf("cannot read the apiserver's address %q: %v", c.config.Host, err)
	}
	return u.Host
}

// to sums what the clients named sent to one apiserver ("management" or "workload"), between two readings.
func (r requestReading) to(earlier requestReading, apiserver string, clients ...string) float64 {
	sum := 0.0
	for _, c := range clients {
		name := c + " → " + apiserver
		sum += r.clients[name].since(earlier.clients[name]).total()
	}
	return sum
}

// managedResources counts provider-kubernetes' managed resources in the management cluster, by whom they serve
// and what they do: each organization's Objects that write an object in the workload cluster, its observe-only
// Objects (its reads), its ObservedObjectCollections and the members the provider makes for them, and the
// managed resources of the cluster they are bound to (its Objects, members and Releases).
type managedResources struct {
	organizations                           int
	written, observed, collections, members int
	cluster                                 int
}

// managedResourcesT counts them now.
func managedResourcesT(t *testing.T, cluster string) managedResources {
	t.Helper()
	m := managedResources{}
	orgs := map[string]bool{}
	for _, xr := range env.Cluster.ListT(t, IsolationKind, "", "") {
		orgs[xr.GetName()] = true
	}
	m.organizations = len(orgs)
	// Each collection serves the XR that composes it.
	owner := map[string]string{}
	for _, c := range env.Cluster.ListT(t, ObservedObjectCollectionKind, "", "") {
		xr := c.GetLabels()[compositeLabel]
		owner[c.GetName()] = xr
		switch {
		case orgs[xr]:
			m.collections++
		case xr == cluster:
			m.cluster++
		}
	}
	for _, o := range env.Cluster.ListT(t, ObjectKind, "", "") {
		xr, member := o.GetLabels()[compositeLabel], false
		if c, ok := o.GetLabels()[collectionMemberLabel]; ok {
			xr, member = owner[c], true
		}
		switch {
		case orgs[xr] && member:
			m.members++
		case orgs[xr] && observeOnly(o):
			m.observed++
		case orgs[xr]:
			m.written++
		case xr == cluster:
			m.cluster++
		}
	}
	for _, r := range env.Cluster.ListT(t, ReleaseKind, "", "") {
		if r.GetLabels()[compositeLabel] == cluster {
			m.cluster++
		}
	}
	return m
}

// observeOnly reports whether a managed resource only observes: its management policies are Observe alone.
func observeOnly(u unstructured.Unstructured) bool {
	policies, _, _ := unstructured.NestedStringSlice(u.Object, "spec", "managementPolicies")
	return slices.Equal(policies, []string{"Observe"})
}

func (m managedResources) total() int { return m.written + m.observed + m.collections + m.members }

// per divides a count by the organizations.
func (m managedResources) per(n int) float64 {
	if m.organizations == 0 {
		return 0
	}
	return float64(n) / float64(m.organizations)
}

// String says, per organization: e.g. "9.0 (4.0 written, 3.0 observe-only, 1.0 collections, 1.0 members)".
func (m managedResources) String() string {
	return fmt.Sprintf("%.1f (%.1f written, %.1f observe-only, %.1f collections, %.1f members)",
		m.per(m.total()), m.per(m.written), m.per(m.observed), m.per(m.collections), m.per(m.members))
}

// remoteStep is what one step of the benchmark read beyond the management cluster's row: every server's usage and
// the remote requests when onboarding began, when every pool was Ready (usage) or the fleet settled (requests), and
// over the idle minute; and the managed resources once settled.
type remoteStep struct {
	orgs, added                                                   int
	ready                                                         time.Duration
	idleSeconds                                                   float64
	before, onboarded, idleFrom, idle                             serverUsage
	requestsFrom, requestsSettled, requestsIdleFrom, requestsIdle requestReading
	resources                                                     managedResources
}

// row is the step's part of the summary table.
func (s remoteStep) row() *remoteRow {
	added := float64(s.added)
	return &remoteRow{
		resources:               s.resources,
		onboardingProviders:     cpuSeconds(s.before.providers(), s.onboarded.providers()) / added,
		onboardingWorkload:      cpuSeconds(s.before.workload(), s.onboarded.workload()) / added,
		idleProviders:           cpuSeconds(s.idleFrom.providers(), s.idle.providers()) / s.idleSeconds,
		idleWorkload:            cpuSeconds(s.idleFrom.workload(), s.idle.workload()) / s.idleSeconds,
		idleProvidersManagement: s.requestsIdle.to(s.requestsIdleFrom, "management", fleetProviders...) * 60 / s.idleSeconds,
		idleWorkloadRequests:    s.requestsIdle.apiserver.since(s.requestsIdleFrom.apiserver).total() * 60 / s.idleSeconds,
		idleProvidersWorkload:   s.requestsIdle.to(s.requestsIdleFrom, "workload", fleetProviders...) * 60 / s.idleSeconds,
	}
}

// String prints the step's lines.
func (s remoteStep) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-6d managed resources per organization in the management cluster, settled: %s; the cluster's own: %d\n", s.orgs, s.resources, s.resources.cluster)
	fmt.Fprintf(&b, "%-6s first claim -> every pool Ready: %s (target %s)\n", "", s.ready.Round(time.Second), remoteReadyLimit)
	fmt.Fprintf(&b, "%-6s onboarding CPU-s per new organization: workload cluster %s; providers %s\n", "",
		perServerOf(s.before.workload(), s.onboarded.workload(), float64(s.added)), perServerOf(s.before.providers(), s.onboarded.providers(), float64(s.added)))
	fmt.Fprintf(&b, "%-6s idle cores: management cluster and providers %.2f; workload cluster %s; providers %s\n", "",
		cpuSeconds(s.idleFrom.management(), s.idle.management())/s.idleSeconds,
		perServerOf(s.idleFrom.workload(), s.idle.workload(), s.idleSeconds), perServerOf(s.idleFrom.providers(), s.idle.providers(), s.idleSeconds))
	var memory []string
	for _, name := range slices.Sorted(maps.Keys(s.idle.where(func(name string) bool {
		return slices.Contains(fleetProviders, name) || strings.HasPrefix(name, workloadServerPrefix)
	}))) {
		u := s.idle[name]
		memory = append(memory, fmt.Sprintf("%s %d (peak %d)", name, u.RSSMB, u.PeakRSSMB))
	}
	fmt.Fprintf(&b, "%-6s RSS MB: %s\n", "", strings.Join(memory, ", "))
	fmt.Fprintf(&b, "%-6s onboarding requests (until settled): %s\n", "", s.requestsSettled.since(s.requestsFrom, "workload apiserver", perOrganization(s.added)))
	fmt.Fprintf(&b, "%-6s idle requests: %s", "", s.requestsIdle.since(s.requestsIdleFrom, "workload apiserver", perMinute(s.idleSeconds)))
	return b.String()
}

// perServerOf prints the CPU-seconds each of the servers used between two readings, divided by per, the busiest
// first, and the total.
func perServerOf(from, to map[string]process.Usage, per float64) string {
	used := counterSet{}
	for name, u := range to {
		used[strings.TrimPrefix(name, workloadServerPrefix)] = u.CPUSeconds - from[name].CPUSeconds
	}
	return fmt.Sprintf("all %.2f: %s", used.total()/per, used.largest(6, func(v float64) string { return fmt.Sprintf("%.2f", v/per) }))
}
