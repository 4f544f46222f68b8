package e2e

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Karpenter's labels on a NodeClaim and its Node.
const (
	platformPool = "platform"
	// platformNamespace is no organization's: its pods belong on the platform pool.
	platformNamespace = "e2e-platform-apps"
)

// TestKarpenterKeepsEachOrganizationOnItsOwnNodes is the outcome kiso is for, with the real Karpenter (KWOK
// provider), kube-scheduler and kwok: two organizations' claims become pools that Karpenter makes Ready; their
// Deployments' and Jobs' pods land on nodes of their own pools only, and a platform pod on the platform pool
// only; the claims report what their pools use; a pool's limits hold and Karpenter consolidates within it; and
// deleting a claim drains and removes its nodes and leaves the other organization untouched; and switching an
// organization between stack and organization isolation moves its running pods' capacity, not its objects.
func TestKarpenterKeepsEachOrganizationOnItsOwnNodes(t *testing.T) {
	sharingPlacementClusterT(t)
	requireNodesT(t)
	references := readTestdataT(t, "karpenter", "references.yaml")
	namespaces := readTestdataT(t, "karpenter", "namespaces.yaml")
	claims := readTestdataT(t, "karpenter", "claims.yaml")
	env.ApplyT(t, references)
	t.Cleanup(func() { deleteAtCleanup(t, references) })
	env.ApplyT(t, namespaces)
	t.Cleanup(func() { deleteAtCleanup(t, namespaces) })

	var hooli, piedpiper organization
	applied := time.Now()
	env.ApplyT(t, claims)
	t.Cleanup(func() { deleteAtCleanup(t, claims) })
	step(t, "ClaimsBecomePoolsThatKarpenterMakesReady", func(t *testing.T) {
		hooli = waitForOrganizationT(t, "e2e-hooli", "hooli", "hooli")
		piedpiper = waitForOrganizationT(t, "e2e-piedpiper", "piedpiper", "piedpiper")
		for _, org := range []organization{hooli, piedpiper} {
			for _, pool := range org.Pools {
				assertReadyByKarpenterT(t, pool)
			}
		}
		env.Timings.Record("claims applied -> 3 pools Ready by Karpenter", time.Since(applied))
		if len(hooli.Pools) != 1 || len(piedpiper.Pools) != 2 {
			t.Fatalf("pools: hooli %v, piedpiper %v; want one shared pool and one per stack", hooli.Pools, piedpiper.Pools)
		}
	})

	step(t, "EachNamespacesPlacementIsInForce", func(t *testing.T) {
		// The cluster's admission policies hold both organizations' pods, and inject piedpiper's placement.
		env.Cluster.WaitForConditionT(t, policyInForceTimeout, IsolationClaimKind, "e2e-hooli", "hooli", "PlacementEnforced")
		env.Cluster.WaitForConditionT(t, policyInForceTimeout, IsolationClaimKind, "e2e-piedpiper", "piedpiper", "PlacementEnforced")
		env.Cluster.WaitForConditionT(t, policyInForceTimeout, IsolationClaimKind, "e2e-piedpiper", "piedpiper", "PlacementInjected")
		// A namespace's placement is in force once admission lets in a pod placed as its stack's pods are
		// (hooli's by hand, piedpiper's by injection).
		for _, org := range []organization{hooli, piedpiper} {
			for _, sp := range org.Stacks {
				pod := newPod("placement-probe", sp.Namespaces[0], sp.NodeSelector, sp.Tolerations...)
				if org.Name == "piedpiper" {
					pod = newPod("placement-probe", sp.Namespaces[0], nil)
				}
				waitForDefaultServiceAccountT(t, sp.Namespaces[0])
				waitForAdmittedPlacementT(t, pod, sp.NodeSelector)
			}
		}
	})

	landed := map[string][]corev1.Pod{} // pool -> pods bound to its nodes
	step(t, "EveryPodLandsOnANodeOfItsOwnOrganizationsPool", func(t *testing.T) {
		pending := time.Now()
		hooliWeb := hooli.Stacks["web"]
		createDeploymentT(t, hooliWeb.Namespaces[0], "web", 2, "100m", hooliWeb.NodeSelector, hooliWeb.Tolerations)
		hooliJobs := hooli.Stacks["jobs"]
		hooliJob := createPlacedJobT(t, hooliJobs.Namespaces[0], "report", hooliJobs.NodeSelector, hooliJobs.Tolerations)
		// piedpiper's placement is injected at admission: its workloads carry none.
		createDeploymentT(t, piedpiper.Stacks["api"].Namespaces[0], "api", 2, "100m", nil, nil)
		piedpiperJob := createPlacedJobT(t, piedpiper.Stacks["batch"].Namespaces[0], "reindex", nil, nil)
		createDeploymentT(t, platformNamespace, "agent", 1, "100m", nil, nil)

		for _, org := range []organization{hooli, piedpiper} {
			for _, stack := range slices.Sorted(maps.Keys(org.Stacks)) {
				sp := org.Stacks[stack]
				for _, pod := range waitForPodsOnPoolT(t, sp.Namespaces[0], sp.Pool) {
					landed[sp.Pool] = append(landed[sp.Pool], pod)
					assertTenantNodeT(t, pod, org, stack, sp)
				}
			}
		}
		landed[platformPool] = append(landed[platformPool], waitForPodsOnPoolT(t, platformNamespace, platformPool)...)
		env.Timings.Record("pending pods -> bound on their pools' new nodes", time.Since(pending))
		waitForJobCompleteT(t, hooliJob)
		waitForJobCompleteT(t, piedpiperJob)
		assertNoSharedNodesT(t, landed)
	})

	step(t, "NoNodeChangesTheIdentityKarpenterGaveIt", func(t *testing.T) {
		assertKubeletCannotChangeItsIdentityT(t, landed[hooli.Stacks["web"].Pool][0].Spec.NodeName, "piedpiper")
	})

	step(t, "ClaimsShowWhatTheirPoolsUseAsKarpenterCountsIt", func(t *testing.T) {
		for _, org := range []organization{hooli, piedpiper} {
			assertUsageReportedT(t, org)
		}
	})

	step(t, "APoolsLimitHoldsAndKarpenterConsolidatesWithinIt", func(t *testing.T) {
		// piedpiper's api pool holds 4 CPUs at most; a burst past it stays Pending, on no other pool.
		api := piedpiper.Stacks["api"]
		// The scenario's other pools: scenarios running beside it launch nodes of their own pools meanwhile.
		otherPools := []string{platformPool}
		for _, org := range []organization{hooli, piedpiper} {
			for _, sp := range org.Stacks {
				if sp.Pool != api.Pool {
					otherPools = append(otherPools, sp.Pool)
				}
			}
		}
		slices.Sort(otherPools)
		inOtherPools := nodePoolLabel + " in (" + strings.Join(slices.Compact(otherPools), ",") + ")"
		others := versions(t, NodeClaimKind, inOtherPools)
		createDeploymentT(t, api.Namespaces[0], "burst", 6, "800m", nil, nil)
		waitForLimitReachedT(t, api.Namespaces[0], "app=burst", api.Pool)
		if got := versions(t, NodeClaimKind, inOtherPools); !noneNew(others, got) {
			t.Errorf("other pools got NodeClaims while pool %s was at its limit: before %v, after %v", api.Pool, others, got)
		}
		// Scale down: Karpenter removes the nodes the burst no longer needs, within the pool.
		scaleDeploymentT(t, api.Namespaces[0], "burst", 0)
		waitForConsolidationT(t, api.Namespaces[0], api.Pool)
		if got := versions(t, NodeClaimKind, inOtherPools); !noneNew(others, got) {
			t.Errorf("other pools got NodeClaims while pool %s consolidated: before %v, after %v", api.Pool, others, got)
		}
		assertUsageReportedT(t, piedpiper)
	})

	step(t, "DeletingAClaimDrainsItsNodesAndNoOneElses", func(t *testing.T) {
		untouched := snapshotOrganizationT(t, piedpiper)
		platformNodeClaimsBefore := versions(t, NodeClaimKind, nodePoolLabel+"="+platformPool)
		deleted := time.Now()
		deleteClaimAndWatchT(t, hooli)
		env.Timings.Record("claim deleted -> its NodePool, NodeClass, NodeClaims and nodes gone", time.Since(deleted))
		if got := snapshotOrganizationT(t, piedpiper); !maps.Equal(got, untouched) {
			t.Errorf("deleting hooli's claim changed piedpiper's pools, nodes or pods:\nbefore %v\nafter  %v", untouched, got)
		}
		if got := versions(t, NodeClaimKind, nodePoolLabel+"="+platformPool); !noneNew(platformNodeClaimsBefore, got) {
			t.Errorf("the platform pool got NodeClaims: before %v, after %v", platformNodeClaimsBefore, got)
		}
	})

	step(t, "AModeSwitchMovesCapacityNotObjects", func(t *testing.T) { switchMovesCapacityT(t, piedpiper) })
}
