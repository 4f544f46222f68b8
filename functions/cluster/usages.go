package main

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/kiso-dev/kiso/functions/internal/awsmanaged"
	"github.com/kiso-dev/kiso/functions/internal/names"
	"github.com/kiso-dev/kiso/functions/internal/nodeidentity"
	"github.com/kiso-dev/kiso/functions/internal/placement"
	"github.com/kiso-dev/kiso/functions/internal/usage"
)

// maxUsageName is the longest a ClusterUsage's name may be.
const maxUsageName = 253

// renderUsages orders the cluster's deletion. Every tenant NodeClass uses
// the XKarpenterCluster (the isolation function composes those Usages), so
// the cluster is not deleted while a tenant node may still drain, and it
// keeps composing what Karpenter needs meanwhile. Two Usages with no user
// keep the controller role and Karpenter's Release for as long as the cluster
// composes them, so deleting either directly is refused too; here every other
// AWS object the cluster composes is used by that role, so Karpenter keeps
// its policies, queue, rules and Pod Identity association, and the nodes
// their role, until the role goes. The node identity's access entry and
// policy attachments hang on the node role. The controller role detaches its
// own policies when it is deleted, so keeping its attachments until then
// cannot deadlock. The placement policies get no Usage: Kubernetes sends no
// admission request for admission policies to a webhook, so none would be
// enforced; they stay because every tenant NodeClass uses the
// XKarpenterCluster itself. Crossplane polls each Usage once a minute, three
// requests each: these are the cluster's, however many organizations use it.
func renderUsages(p plan, xrName string, objects map[resource.Name]*composed.Unstructured) map[resource.Name]*composed.Unstructured {
	controller := usage.RefOf(awsmanaged.RoleKind, p.ControllerRoleResource)
	labels := map[string]string{placement.ManagedByLabel: placement.ManagedByValue}
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
		switch {
		case name == crControllerRole || name == crKarpenterRelease:
			out[crUsage+name] = keptWithCluster(xrName, gvk, o.GetName()).Render(labels)
		case strings.HasSuffix(gvk.Group, ".aws.upbound.io") && !hangsOnNodeRole[name]:
			u := usage.Usage{
				Name: names.Join(maxUsageName, strings.ToLower(gvk.Kind), o.GetName(), "used-by-controller-role"),
				Of:   usage.RefOf(gvk, o.GetName()),
				By:   controller,
			}
			out[crUsage+name] = u.Render(labels)
		}
	}
	return out
}

// keptWithCluster is a Usage with no user: the object goes when the cluster stops composing it, or with the
// cluster, whose deletion its organizations' pools refuse while they exist.
func keptWithCluster(xrName string, gvk schema.GroupVersionKind, name string) usage.Usage {
	return usage.Usage{
		Name: names.Join(maxUsageName, strings.ToLower(gvk.Kind), name, "kept-with-cluster"),
		Of:   usage.RefOf(gvk, name),
		Reason: fmt.Sprintf("Karpenter needs it while XKarpenterCluster %s exists, and the cluster's organizations keep that "+
			"until their last node is gone: delete the XKarpenterCluster instead", xrName),
	}
}
