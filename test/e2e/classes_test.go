package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestCapacityClassesShareOneLimit is issue 42's outcome, with the real Karpenter (KWOK provider), kube-scheduler
// and kwok: an organization with two classes of capacity from two reference pairs (general nodes, and nodes with
// a label and a taint of their own) gets a pool of each; its pods land on the class they pick, as Karpenter's users
// pick one (a required node affinity on the class reference's label, its taint tolerated); another organization's
// pods land on neither; the organization's limit across its pools (two nodes, 4 CPUs) holds whichever class its
// pods ask for, each pool's Karpenter limit following what the other holds; capacity freed in one class becomes
// the other's; and a burst into both classes at once overshoots the limit by at most what was left, once per
// other pool, after which neither pool grows.
func TestCapacityClassesShareOneLimit(t *testing.T) {
	sharingPlacementClusterT(t)
	requireNodesT(t)
	references := readTestdataT(t, "classes", "references.yaml")
	claims := readTestdataT(t, "classes", "claims.yaml")
	env.ApplyT(t, references)
	t.Cleanup(func() { deleteAtCleanup(t, references) })
	env.ApplyT(t, claims)
	t.Cleanup(func() { deleteAtCleanup(t, claims) })

	const (
		general, tainted = "kiso-aperture", "kiso.aperture.tainted"
		limit            = "2" // nodes
		cpuLimit         = "4"
		// full is what Karpenter tells a pod a pool with no node left for it cannot take.
		full = "node limits have been exhausted for nodepool"
	)
	pools := []string{general, tainted}
	generalClass := classChoice{Label: "e2e.kiso.dev/capacity", Value: "general"}
	taintedClass := classChoice{Label: "e2e.kiso.dev/capacity", Value: "tainted", Tolerations: []corev1.Toleration{
		{Key: "e2e.kiso.dev/capacity", Operator: corev1.TolerationOpEqual, Value: "tainted", Effect: corev1.TaintEffectNoSchedule},
	}}
	var aperture, blackmesa organization
	step(t, "EachClassIsAPoolKarpenterMakesReady", func(t *testing.T) {
		aperture = waitForOrganizationT(t, "e2e-aperture", "aperture", "aperture")
		blackmesa = waitForOrganizationT(t, "e2e-blackmesa", "blackmesa", "blackmesa")
		if !slices.Equal(aperture.Pools, pools) || !slices.Equal(blackmesa.Pools, []string{"kiso-blackmesa"}) {
			t.Fatalf("pools: aperture %v, want %v (a pool per class); blackmesa %v", aperture.Pools, pools, blackmesa.Pools)
		}
		for _, pool := range append(slices.Clone(pools), blackmesa.Pools...) {
			assertReadyByKarpenterT(t, pool)
		}
		env.Cluster.WaitForConditionT(t, policyInForceTimeout, IsolationClaimKind, "e2e-aperture", "aperture", "PlacementEnforced")
		env.Cluster.WaitForConditionT(t, policyInForceTimeout, IsolationClaimKind, "e2e-blackmesa", "blackmesa", "PlacementEnforced")
	})
	lab, bm := aperture.Stacks["lab"], blackmesa.Stacks["lab"]

	step(t, "AChartsPodPickingAClassByNodeAffinityIsAdmitted", func(t *testing.T) {
		// A chart's pod: its organization and class in every term of a required node affinity, several terms.
		pod := newPod("chart-probe", lab.Namespaces[0], nil, append(slices.Clone(lab.Tolerations), taintedClass.Tolerations...)...)
		var terms []corev1.NodeSelectorTerm
		for _, arch := range []string{"amd64", "arm64", "s390x", "ppc64le"} {
			terms = append(terms, corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{
				{Key: "node-restriction.kubernetes.io/kiso.dev.organization", Operator: corev1.NodeSelectorOpIn, Values: []string{"aperture"}},
				{Key: taintedClass.Label, Operator: corev1.NodeSelectorOpIn, Values: []string{taintedClass.Value}},
				{Key: "kiso.dev/class", Operator: corev1.NodeSelectorOpIn, Values: []string{"tainted"}},
				{Key: "kubernetes.io/arch", Operator: corev1.NodeSelectorOpIn, Values: []string{arch}},
			}})
		}
		pod.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms}}}
		waitForDefaultServiceAccountT(t, pod.Namespace)
		waitUntilAdmittedT(t, pod)
	})

	step(t, "EachPodLandsOnTheClassItPicks", func(t *testing.T) {
		createClassDeploymentT(t, lab.Namespaces[0], "general", "1500m", lab, generalClass)
		createClassDeploymentT(t, lab.Namespaces[0], "tainted", "1500m", lab, taintedClass)
		for _, p := range waitForSelectedPodsOnPoolT(t, lab.Namespaces[0], "app=general", general, 1) {
			assertClassNodeT(t, p, "", generalClass)
		}
		for _, p := range waitForSelectedPodsOnPoolT(t, lab.Namespaces[0], "app=tainted", tainted, 1) {
			assertClassNodeT(t, p, "tainted", taintedClass)
		}
	})

	step(t, "AnotherOrganizationsPodsLandOnNeitherClass", func(t *testing.T) {
		createClassDeploymentT(t, bm.Namespaces[0], "general", "100m", bm, generalClass)
		waitForSelectedPodsOnPoolT(t, bm.Namespaces[0], "app=general", "kiso-blackmesa", 1)
		// blackmesa has no tainted class: its pod asking for one, though it tolerates the class's taint and
		// aperture's tainted node has room for it, runs nowhere.
		createClassDeploymentT(t, bm.Namespaces[0], "tainted", "100m", bm, taintedClass)
		waitForNoPoolToFitT(t, bm.Namespaces[0], "app=tainted")
	})

	step(t, "EachPoolMayGrowToWhatTheOrganizationHasLeft", func(t *testing.T) {
		// Each class holds one node: each pool may hold the one node the other leaves.
		waitForLimitsLeftT(t, "nodes", limit, pools)
	})

	step(t, "TheOrganizationsNodesStopAtItsLimitWhicheverClassItsPodsAskFor", func(t *testing.T) {
		before := versions(t, NodeClaimKind, nodePoolLabel+" in ("+strings.Join(pools, ",")+")")
		scaleDeploymentT(t, lab.Namespaces[0], "general", 2)
		scaleDeploymentT(t, lab.Namespaces[0], "tainted", 2)
		waitForPoolFullT(t, lab.Namespaces[0], "app=general", general, full)
		waitForPoolFullT(t, lab.Namespaces[0], "app=tainted", tainted, full)
		if got := versions(t, NodeClaimKind, nodePoolLabel+" in ("+strings.Join(pools, ",")+")"); !noneNew(before, got) {
			t.Errorf("the organization got NodeClaims past its limit: before %v, after %v", before, got)
		}
		if nodes := organizationNodes(t, pools); len(nodes) != 2 {
			t.Errorf("the organization's NodeClaims %v; want its limit, 2", nodes)
		}
	})

	step(t, "TheClaimShowsEachClassAndTheOrganizationsTotalAgainstItsLimit", func(t *testing.T) {
		// Karpenter's KWOK provider counts a node at what its NodeClaim requested, not its instance type's 2 CPUs:
		// the column says what Karpenter counts.
		want := classColumn(t, "default", general) + "," + classColumn(t, "tainted", tainted)
		claim := env.Cluster.WaitForT(t, landTimeout, IsolationClaimKind, "e2e-aperture", "aperture", func(u *unstructured.Unstructured) (bool, string) {
			got := stringAt(u, "status", "classes")
			return got == want && stringAt(u, "status", "usage", "nodes") == limit, fmt.Sprintf("status.classes %q, want %q; usage %v", got, want, nested(u, "status", "usage"))
		})
		if got := stringAt(claim, "status", "usage", "limits", "nodes"); got != limit {
			t.Errorf("status.usage.limits.nodes = %q, want the organization's limit %s", got, limit)
		}
		statusPools, _ := nested(claim, "status", "pools").([]any)
		for _, raw := range statusPools {
			p, _ := raw.(map[string]any)
			if wantClass := map[string]any{general: nil, tainted: "tainted"}[fmt.Sprint(p["name"])]; p["class"] != wantClass {
				t.Errorf("status.pools %v: class %v, want %v", p["name"], p["class"], wantClass)
			}
		}
		out, err := env.Kubectl.Run(t.Context(), nil, "get", "karpenterisolation", "aperture", "-n", "e2e-aperture", "-o", "wide")
		if err != nil {
			t.Fatalf("kubectl get karpenterisolation -o wide: %v", err)
		}
		columns := printedColumns(string(out))
		for column, want := range map[string]string{"CLASSES": want, "NODES": limit, "NODE-LIMIT": limit, "POOLS": general + "," + tainted} {
			if got := columns[column]; got != want {
				t.Errorf("kubectl get -o wide column %s = %q, want %q in\n%s", column, got, want, out)
			}
		}
		t.Logf("kubectl get karpenterisolation -o wide:\n%s", out)
	})

	step(t, "CapacityFreedInOneClassBecomesTheOthers", func(t *testing.T) {
		freed := time.Now()
		scaleDeploymentT(t, lab.Namespaces[0], "tainted", 0)
		// The tainted node empties and Karpenter removes it; the general pool may then hold both nodes, and its
		// pending pod gets one.
		waitForSelectedPodsOnPoolT(t, lab.Namespaces[0], "app=general", general, 2)
		env.Timings.Record("a class's node freed -> the other class's pending pod running", time.Since(freed))
		waitForT(t, consolidationTimeout, "the tainted pool's node to go", func(ctx context.Context) (bool, string, error) {
			claims, err := env.Cluster.List(ctx, NodeClaimKind, "", nodePoolLabel+"="+tainted)
			return err == nil && len(claims) == 0, fmt.Sprintf("%d NodeClaims", len(claims)), err
		})
		if nodes := organizationNodes(t, pools); len(nodes) != 2 {
			t.Errorf("the organization's NodeClaims %v; want its limit, 2, both general", nodes)
		}
		waitForLimitsLeftT(t, "nodes", limit, pools)
	})

	step(t, "ABurstIntoBothClassesOvershootsByAtMostWhatWasLeft", func(t *testing.T) {
		scaleDeploymentT(t, lab.Namespaces[0], "general", 0)
		waitForT(t, consolidationTimeout, "the organization's nodes to go", func(context.Context) (bool, string, error) {
			nodes := organizationNodes(t, pools)
			return len(nodes) == 0, fmt.Sprintf("NodeClaims %v", nodes), nil
		})
		// Nothing used: each pool may take all of the organization's limit.
		waitForLimitsLeftT(t, "nodes", limit, pools)
		waitForLimitsLeftT(t, "cpu", cpuLimit, pools)
		scaleDeploymentT(t, lab.Namespaces[0], "general", 3)
		scaleDeploymentT(t, lab.Namespaces[0], "tainted", 3)
		waitForPoolFullT(t, lab.Namespaces[0], "app=general", general, "limits")
		waitForPoolFullT(t, lab.Namespaces[0], "app=tainted", tainted, "limits")
		// Once kiso has followed what Karpenter counts, no pool has anything left: neither grows any more.
		waitForCountedT(t, pools)
		waitForLimitsLeftT(t, "nodes", limit, pools)
		waitForLimitsLeftT(t, "cpu", cpuLimit, pools)
		for _, resourceName := range []string{"nodes", "cpu"} {
			held, limits, err := poolsHolding(t.Context(), resourceName, pools)
			if err != nil {
				t.Fatal(err)
			}
			for _, pool := range pools {
				if l, h := limits[pool], held[pool]; l.Cmp(h) > 0 {
					t.Errorf("pool %s may grow to %s %s, holding %s: the organization, over its limit, has nothing left", pool, l.String(), resourceName, h.String())
				}
			}
		}
		// The worst case: spec.limits + (pools - 1) x what was left when the burst began (all of it).
		nodes := organizationNodes(t, pools)
		if worst := 2 * 2; len(nodes) > worst {
			t.Errorf("the organization's NodeClaims %v: %d, over the worst case of %d", nodes, len(nodes), worst)
		}
		held, _, err := poolsHolding(t.Context(), "cpu", pools)
		if err != nil {
			t.Fatal(err)
		}
		var cpus resource.Quantity
		for _, q := range held {
			cpus.Add(q)
		}
		if worst := resource.MustParse("8"); cpus.Cmp(worst) > 0 {
			t.Errorf("the organization's pools hold %s CPUs, over the worst case of %s", cpus.String(), worst.String())
		}
		t.Logf("a burst of 3 pods into each class from nothing: %d nodes (limit %s, worst case 4), %s CPUs as Karpenter counts them (limit %s, worst case 8): %v", len(nodes), limit, cpus.String(), cpuLimit, nodes)
	})
}
