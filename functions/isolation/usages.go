package main

import (
	"github.com/crossplane/function-sdk-go/resource"
)

// Releases before this one ordered an organization's deletion with
// ClusterUsages: per pool, its NodePool used its NodeClass, and its
// NodeClass the XKarpenterCluster and the dedicated role and instance
// profile; per dedicated identity, the role used its access entry and policy
// attachments. Crossplane polls every Usage once a minute with three
// requests, most of what an idle fleet cost; the cluster's admission
// policies now keep the same order on DELETE alone (deletionorder.go in the
// cluster function, and keepGuarded here). An organization upgraded from
// such a release releases its Usages first (releaseUsages), and their names
// stay a pool's, so that a pool whose Usage was being deleted at the upgrade
// still counts it as its own.
// The composed resource names of a pool's Usages are usage-<pool><suffix>, one suffix per object used. The
// controller role's and Karpenter's are no longer composed; their names stay a pool's, so that a pool being
// drained or retired after an upgrade still counts them as its own.
const (
	usageOfNodeClass        = ""
	usageOfNodeRole         = "-node-role"
	usageOfInstanceProfile  = "-instance-profile"
	usageOfControllerRole   = "-controller-role"
	usageOfCluster          = "-cluster"
	usageOfKarpenterRelease = "-karpenter"
)

func usageResourceName(p pool, suffix string) resource.Name {
	return resource.Name("usage-" + p.Name + suffix)
}

// nodeClassUsageResourceName is the composed resource name of the Usage that keeps a pool's NodeClass while
// its NodePool exists.
func nodeClassUsageResourceName(p pool) resource.Name { return usageResourceName(p, usageOfNodeClass) }

// poolObjectNames are the composed resource names of everything one pool is: its NodeClass, its NodePool and
// every Usage it may have or had.
func poolObjectNames(p pool) []resource.Name {
	suffixes := []string{usageOfNodeClass, usageOfNodeRole, usageOfInstanceProfile, usageOfControllerRole, usageOfCluster, usageOfKarpenterRelease}
	out := make([]resource.Name, 0, 2+len(suffixes))
	out = append(out, nodeClassResourceName(p), nodePoolResourceName(p))
	for _, suffix := range suffixes {
		out = append(out, usageResourceName(p, suffix))
	}
	return out
}
