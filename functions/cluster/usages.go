package main

import (
	"strings"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	iamv1beta1 "github.com/upbound/provider-aws/v2/apis/cluster/iam/v1beta1"

	"github.com/kiso-dev/kiso/functions/internal/names"
	"github.com/kiso-dev/kiso/functions/internal/nodeidentity"
	"github.com/kiso-dev/kiso/functions/internal/ownership"
	"github.com/kiso-dev/kiso/functions/internal/usage"
)

// maxUsageName is the longest a ClusterUsage's name may be.
const maxUsageName = 253

// renderUsages orders the cluster's deletion. Organizations' NodeClasses use
// the controller role (the isolation function composes those Usages); here
// every other AWS object the cluster composes is used by that role, so
// deleting an XKarpenterCluster while tenant pools exist leaves Karpenter its
// policies, queue, rules and Pod Identity association, and the nodes their
// role, until the last tenant pool, and so its last node, is gone. The node
// identity's access entry and policy attachments hang on the node role.
// The controller role detaches its own policies when it is deleted, so
// keeping its attachments until then cannot deadlock. The placement
// policies get no Usage: Kubernetes sends no admission request for
// admission policies to a webhook, so none would be enforced; they stay
// because every tenant NodeClass uses the XKarpenterCluster itself (the
// isolation function composes those Usages).
func renderUsages(p plan, objects map[resource.Name]*composed.Unstructured) map[resource.Name]*composed.Unstructured {
	controller := usage.RefOf(iamv1beta1.Role_GroupVersionKind, p.ControllerRoleResource)
	labels := map[string]string{ownership.ManagedByLabel: ownership.ManagedByValue}
	out := map[resource.Name]*composed.Unstructured{}
	identity := nodeIdentity(p)
	hangsOnNodeRole := map[resource.Name]bool{}
	if p.CreateNodeRole {
		for name, u := range identity.Usages() {
			hangsOnNodeRole[resource.Name(strings.TrimPrefix(string(name), nodeidentity.ResourceUsagePrefix))] = true
			out[name] = u.Render(labels)
		}
	}
	for name, o := range objects {
		gvk := o.GetObjectKind().GroupVersionKind()
		if name == crControllerRole || hangsOnNodeRole[name] || !strings.HasSuffix(gvk.Group, ".aws.upbound.io") {
			continue
		}
		u := usage.Usage{
			Name: names.Join(maxUsageName, strings.ToLower(gvk.Kind), o.GetName(), "used-by-controller-role"),
			Of:   usage.RefOf(gvk, o.GetName()),
			By:   controller,
		}
		out[crUsage+name] = u.Render(labels)
	}
	return out
}
