package main

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/crossplane/function-sdk-go/resource"

	iamv1beta1 "github.com/upbound/provider-aws/v2/apis/cluster/iam/v1beta1"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/names"
	"github.com/kiso-dev/kiso/functions/internal/usage"
)

// Usages order an organization's deletion: nodes go before their NodeClass,
// a NodeClass before its IAM identity, and every tenant NodeClass before its
// XKarpenterCluster, so Karpenter can still terminate the last tenant node.
// The cluster's objects are used by the NodeClass, not the NodePool:
// Karpenter keeps no finalizer on a NodePool, which goes at once while its
// NodeClaims are still draining, but holds the NodeClass (EC2NodeClass's
// termination finalizer) until no NodeClaim refers to it any more.
// Using the XKarpenterCluster is enough to keep Karpenter's permissions and
// Karpenter itself: while its deletion is refused it keeps composing them, its
// own Usages keep its controller role and Karpenter's Release from a direct
// delete, and it keeps the Release while it is in use even when its spec stops
// installing Karpenter. It is also the only way to keep the cluster's
// admission policies, which keep organizations apart: Kubernetes sends no
// admission request for those to a webhook (so no Usage of them is enforced),
// and they stay only while the XR that composes them does. Crossplane polls
// every Usage once a minute, three requests each, so a pool uses the cluster
// once instead of each of its objects (releases before this one also composed
// a Usage of the controller role and of the Release per pool).
var usageGVK = schema.FromAPIVersionAndKind(usage.APIVersion, usage.Kind)

// A poolUsage is one usage of a pool, under its composed resource name.
type poolUsage struct {
	Resource resource.Name
	usage.Usage
}

// usedObjects are the objects outside the pool its usages name besides its
// cluster: the organization's dedicated role and instance profile (empty when
// there are none).
type usedObjects struct {
	NodeRole    string
	NodeProfile string
}

// poolUsages lists the usages of one pool. Names depend on the spec only, so
// the function can plan them before it fetches anything.
func poolUsages(spec v1alpha1.XKarpenterIsolationSpec, p pool, used usedObjects) []poolUsage {
	nodeClass := nodeClassGVK(spec.NodeClassRef)
	nc := usage.RefOf(nodeClass, p.Name)
	np := usage.Ref{APIVersion: nodePoolAPIVersion, Kind: nodePoolKind, Name: p.Name}
	out := []poolUsage{{Resource: nodeClassUsageResourceName(p), Usage: usage.Usage{Name: usageName(p, "nodepool-uses-nodeclass"), Of: nc, By: np}}}
	if spec.NodeRole == v1alpha1.NodeRoleDedicated {
		out = append(out,
			poolUsage{Resource: usageResourceName(p, usageOfNodeRole), Usage: usage.Usage{Name: usageName(p, "nodeclass-uses-node-role"),
				Of: usage.RefOf(iamv1beta1.Role_GroupVersionKind, used.NodeRole), By: nc}},
			poolUsage{Resource: usageResourceName(p, usageOfInstanceProfile), Usage: usage.Usage{Name: usageName(p, "nodeclass-uses-instance-profile"),
				Of: usage.RefOf(iamv1beta1.InstanceProfile_GroupVersionKind, used.NodeProfile), By: nc}})
	}
	if spec.ClusterRef != nil {
		out = append(out, poolUsage{Resource: usageResourceName(p, usageOfCluster), Usage: usage.Usage{Name: usageName(p, "nodeclass-uses-cluster"),
			Of: usage.RefOf(clusterGVK, spec.ClusterRef.Name), By: nc}})
	}
	return out
}

func usageName(p pool, what string) string { return names.Join(253, p.Name, what) }

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
