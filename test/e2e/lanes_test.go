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
//   - inLocalClusterLaneT: the scenario composes an XKarpenterCluster without workloadCluster, which renders
//     the cluster's admission policies under fixed names: one such cluster at a time per apiserver, as on EKS.
//     These scenarios wait for each other and run beside the rest.
//   - inWorkloadKarpenterLaneT: the scenario installs Karpenter's chart in the workload cluster (release
//     karpenter, namespace karpenter), which a workload cluster holds once.
//   - besideOthersT: the scenario shares nothing with another.
var (
	localClusterLane      sync.Mutex
	workloadKarpenterLane sync.Mutex
)

// inLocalClusterLaneT runs the scenario beside the others but after every other local-cluster scenario has
// ended and cleaned up.
func inLocalClusterLaneT(t *testing.T) {
	t.Helper()
	inLaneT(t, &localClusterLane)
}

// inWorkloadKarpenterLaneT runs the scenario beside the others but after every other scenario that installs
// Karpenter in the workload cluster has ended and cleaned up.
func inWorkloadKarpenterLaneT(t *testing.T) {
	t.Helper()
	inLaneT(t, &workloadKarpenterLane)
}

// besideOthersT runs the scenario beside every other that calls t.Parallel.
func besideOthersT(t *testing.T) {
	t.Helper()
	t.Parallel()
}

// inLaneT holds the lane from when the scenario starts until its last cleanup has run: the unlock is the
// first cleanup registered, so it runs last.
func inLaneT(t *testing.T, lane *sync.Mutex) {
	t.Helper()
	t.Parallel()
	lane.Lock()
	t.Cleanup(lane.Unlock)
}
