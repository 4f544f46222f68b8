package e2e

import (
	"sync"
	"testing"
)

// Scenarios run side by side on the one control plane wherever they cannot see each other; each has its own
// namespaces, organizations and names. Three kinds share something and say so at their start:
//
//   - A scenario that calls none of these runs alone, before the others start (go test runs every top-level
//     test that does not call t.Parallel first, one after another): it reads or changes what every scenario
//     shares, e.g. Crossplane's idleness, every NodePool in the cluster, or the RBAC Crossplane runs with.
//     laterInLocalClusterLaneT lets such a scenario go on beside the others once it no longer needs that.
//   - sharingPlacementClusterT: the scenario binds organizations of its own to the shared local cluster
//     e2e-placement (an XKarpenterCluster without workloadCluster, which renders the cluster's admission policies
//     under fixed names: one such cluster at a time per apiserver, as on EKS) and changes nothing of it. These
//     scenarios run side by side with each other and the rest; the first applies the cluster, the last deletes it.
//   - inLocalClusterLaneT: the scenario composes a local XKarpenterCluster of its own, or changes the shared one.
//     It runs beside the rest, but alone among the scenarios of a local cluster.
//   - inWorkloadKarpenterLaneT: the scenario installs Karpenter's chart in the workload cluster (release
//     karpenter, namespace karpenter), which a workload cluster holds once.
//   - besideOthersT: the scenario shares nothing with another.
var (
	localClusterLane      sync.RWMutex
	workloadKarpenterLane sync.Mutex
)

// inLocalClusterLaneT runs the scenario beside the others but after every other local-cluster scenario has
// ended and cleaned up, and before any starts.
func inLocalClusterLaneT(t *testing.T) {
	t.Helper()
	inLaneT(t, &localClusterLane)
}

// sharingPlacementClusterT runs the scenario beside the others and every other that shares e2e-placement, which
// it applies if it is the first: after any scenario that composes a local cluster of its own has cleaned up.
func sharingPlacementClusterT(t *testing.T) {
	t.Helper()
	t.Parallel()
	localClusterLane.RLock()
	t.Cleanup(localClusterLane.RUnlock)
	usePlacementClusterT(t)
}

// inWorkloadKarpenterLaneT runs the scenario beside the others but after every other scenario that installs
// Karpenter in the workload cluster has ended and cleaned up.
func inWorkloadKarpenterLaneT(t *testing.T) {
	t.Helper()
	inLaneT(t, &workloadKarpenterLane)
}

// laterInLocalClusterLaneT is for a scenario that needs Crossplane to itself for its first steps and then changes
// a local cluster: it starts alone, as a scenario that calls none of these, and the call it returns takes the local
// cluster lane and lets the other scenarios start, the scenario going on beside them. The lane is taken before the
// others start, so no scenario of a local cluster starts meanwhile, and released after the scenario's last cleanup.
// The scenarios that run alone and come after it (go test runs them in file order) run beside its remainder: none
// may change what a local cluster's organizations need (Crossplane's RBAC, the shared references), as
// TestRBACExampleIsNeeded does, which comes before it.
func laterInLocalClusterLaneT(t *testing.T) (besideOthersInLane func()) {
	t.Helper()
	held := false
	t.Cleanup(func() {
		if held {
			localClusterLane.Unlock()
		}
	})
	return func() {
		localClusterLane.Lock()
		held = true
		t.Parallel()
	}
}

// besideOthersT runs the scenario beside every other that calls t.Parallel.
func besideOthersT(t *testing.T) {
	t.Helper()
	t.Parallel()
}

// inLaneT holds the lane from when the scenario starts until its last cleanup has run: the unlock is the
// first cleanup registered, so it runs last.
func inLaneT(t *testing.T, lane sync.Locker) {
	t.Helper()
	t.Parallel()
	lane.Lock()
	t.Cleanup(lane.Unlock)
}
