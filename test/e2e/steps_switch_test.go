package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

// Steps of an organization's switch between stack and organization isolation with pods running on the old pools:
// capacity moves, nothing is deleted before its replacement is Ready.

// movingReplicas is the switch scenario's Deployment: three replicas and no PodDisruptionBudget.
const movingReplicas = 3

// switchMovesCapacityT switches a stack-isolated organization, running a Deployment of three replicas without a
// PodDisruptionBudget on one stack's pool, to organization isolation. Once the organization's pool is Ready, the
// stack pools that still hold nodes stay (deleting a NodePool deletes all its nodes at once), launching nothing;
// the tenant admin rolls its Deployments, whose new pods get the new placement; at least one replica is available
// throughout; and each retired NodePool is deleted only once Karpenter counts no node in it.
func switchMovesCapacityT(t *testing.T, org organization) {
	api := org.Stacks["api"]
	ns := api.Namespaces[0]
	admin := org.Name + "-admin"
	if out := env.TryT(t, nil, "create", "rolebinding", "team-admin", "--clusterrole=admin", "--user="+admin, "-n", ns); out.ExitCode != 0 {
		t.Fatalf("cannot make %s the admin of %s: %s", admin, ns, out.Stderr)
	}
	createDeploymentT(t, ns, "moving", movingReplicas, "100m", nil, nil)
	waitForPodsOnPoolT(t, ns, api.Pool)
	waitForT(t, landTimeout, "deployment "+ns+"/moving to have its replicas available", func(ctx context.Context) (bool, string, error) {
		d, err := env.Cluster.Typed.AppsV1().Deployments(ns).Get(ctx, "moving", metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		return d.Status.AvailableReplicas == movingReplicas, fmt.Sprintf("%d available", d.Status.AvailableReplicas), nil
	})

	retired := make([]string, 0, len(org.Stacks))
	for _, sp := range org.Stacks {
		retired = append(retired, sp.Pool)
	}
	w := watchSwitchT(t, ns, "moving", retired)
	patchClaimAsPlatformT(t, "e2e-"+org.Name, org.Name, `{"spec":{"isolation":"organization"}}`)
	pool := "kiso-" + org.Name
	env.Cluster.WaitForT(t, landTimeout, NodePoolKind, "", pool, nil)
	assertReadyByKarpenterT(t, pool)

	// The new pool is Ready; the api pool, its nodes running the Deployment, stays and launches nothing.
	c := waitClaimConditionT(t, "e2e-"+org.Name, org.Name, "PoolsSettled", "False", "RetiringPools")
	if !strings.Contains(c.Message, api.Pool+" (") {
		t.Errorf("PoolsSettled says %q; want it to name retired pool %s and the nodes it holds", c.Message, api.Pool)
	}
	np := env.Cluster.GetT(t, NodePoolKind, "", api.Pool)
	if np.GetDeletionTimestamp() != nil {
		t.Fatalf("retired NodePool %s is being deleted while it runs the Deployment's pods", api.Pool)
	}
	if limit, _, _ := unstructured.NestedString(np.Object, "spec", "limits", "nodes"); limit != "0" {
		t.Errorf("retired NodePool %s may launch nodes: limits.nodes %q, want 0", api.Pool, limit)
	}

	// The owner rolls its workloads: their new pods get the organization's placement, and the old nodes empty.
	for _, d := range []string{"moving", "api"} {
		if out := env.TryT(t, nil, "rollout", "restart", "deployment/"+d, "-n", ns, "--as="+admin); out.ExitCode != 0 {
			t.Fatalf("%s cannot restart deployment %s/%s: %s", admin, ns, d, out.Stderr)
		}
	}
	waitForPodsOnPoolT(t, ns, pool)
	for _, p := range retired {
		env.Cluster.WaitForDeletionT(t, landTimeout, NodePoolKind, "", p)
	}
	waitClaimConditionT(t, "e2e-"+org.Name, org.Name, "PoolsSettled", "True", "Settled")
	w.check(t)
}

// switchWatch records, from a watch, the fewest available replicas of a Deployment and what each watched
// NodePool held when it was first seen being deleted (or gone).
type switchWatch struct {
	mu            sync.Mutex
	fewest        int32
	heldAtDelete  map[string]int64
	watchFailures []string
}

func watchSwitchT(t *testing.T, ns, deployment string, nodePools []string) *switchWatch {
	t.Helper()
	w := &switchWatch{fewest: movingReplicas, heldAtDelete: map[string]int64{}}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	deployments, err := env.Cluster.Typed.AppsV1().Deployments(ns).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + deployment})
	if err != nil {
		t.Fatal(err)
	}
	pools, err := env.Cluster.Resource(NodePoolKind, "")
	if err != nil {
		t.Fatal(err)
	}
	poolEvents, err := pools.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	watched := map[string]bool{}
	for _, p := range nodePools {
		watched[p] = true
	}
	go w.follow(deployments, func(e watch.Event) {
		if d, ok := e.Object.(*appsv1.Deployment); ok && d.Status.AvailableReplicas < w.fewest {
			w.fewest = d.Status.AvailableReplicas
		}
	})
	go w.follow(poolEvents, func(e watch.Event) {
		u, ok := e.Object.(*unstructured.Unstructured)
		if !ok || !watched[u.GetName()] || (u.GetDeletionTimestamp() == nil && e.Type != watch.Deleted) {
			return
		}
		if _, seen := w.heldAtDelete[u.GetName()]; !seen {
			nodes, _, _ := unstructured.NestedInt64(u.Object, "status", "nodes")
			w.heldAtDelete[u.GetName()] = nodes
		}
	})
	return w
}

// follow records each event of a watch until it ends; a watch that ends before the scenario does is a failure.
func (w *switchWatch) follow(wi watch.Interface, record func(watch.Event)) {
	for e := range wi.ResultChan() {
		w.mu.Lock()
		if e.Type == watch.Error {
			w.watchFailures = append(w.watchFailures, fmt.Sprint(e.Object))
		} else {
			record(e)
		}
		w.mu.Unlock()
	}
}

func (w *switchWatch) check(t *testing.T) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.watchFailures) > 0 {
		t.Fatalf("the watches failed: %v", w.watchFailures)
	}
	if w.fewest < 1 {
		t.Errorf("the Deployment had %d available replicas at one point of the switch; want at least 1 throughout", w.fewest)
	}
	for pool, nodes := range w.heldAtDelete {
		if nodes != 0 {
			t.Errorf("retired NodePool %s was deleted holding %d nodes: Karpenter deletes them all at once", pool, nodes)
		}
	}
	if len(w.heldAtDelete) == 0 {
		t.Error("no retired NodePool was seen being deleted")
	}
}
