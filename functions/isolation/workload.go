package main

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/clusterview"
	"github.com/kiso-dev/kiso/functions/internal/fnstate"
	"github.com/kiso-dev/kiso/functions/internal/remote"
)

// An organization bound to a workload cluster (its XKarpenterCluster sets spec.workloadCluster) is composed
// there and read from there: its pools, placement Roles and ConfigMaps go in provider-kubernetes Objects, and
// its reference NodeClass and NodePool, its namespaces, the cluster's placement policy and whatever holds a name
// it is about to take are read through observe-only Objects. Only the ConfigMap by which it holds its
// organization stays beside its XR: organizations are unique per control plane, whatever cluster they run in.

// fetchedCluster is the organization's cluster as Crossplane last returned it, nil before it has (on the first
// call of a reconcile) or when there is none: what the plan depends on before anything else is read.
func fetchedCluster(req *fnv1.RunFunctionRequest, spec v1alpha1.XKarpenterIsolationSpec) (*boundCluster, error) {
	if spec.ClusterRef == nil {
		return nil, nil
	}
	found, _ := fnstate.Required(req, requireCluster)
	if len(found) == 0 || !clusterview.ComposedBy(found[0].Resource, spec.ClusterRef.Name) {
		return nil, nil
	}
	return decodeCluster(found[0].Resource, spec.ClusterRef.Name)
}

// workloadReader returns the reader of the organization's workload cluster, or nil when it runs in the cluster
// that runs Crossplane. Before Crossplane has fetched the cluster, the organization is planned as a local one
// for that one call, and Crossplane calls again once it has fetched it.
func workloadReader(c *boundCluster, spec v1alpha1.XKarpenterIsolationSpec, in Input) *remote.Reader {
	if c == nil {
		return nil
	}
	providerConfig, ok := c.Spec.Remote()
	if !ok {
		return nil
	}
	lock := plannedOrganizationLock(spec, in)
	return &remote.Reader{
		ProviderConfig: providerConfig,
		Owner:          spec.Organization,
		// The organization's ConfigMap is where the claim is. (So is the claim's namespace, whose requirement
		// require adds after the reads are split off: a namespace of that name in the workload cluster, a stack's
		// by default, is read there.)
		Local: func(gvk schema.GroupVersionKind, namespace, name string) bool {
			return gvk == lock.GVK && namespace == lock.Namespace && name == lock.Name
		},
	}
}

// workloadView sets the organization's cluster as Crossplane last fetched it, the reader of its workload cluster
// (nil when it runs beside Crossplane), and the observed composed resources as the rest of the function reads
// them (see remote.Reader.Localize).
func (r *call) workloadView() error {
	var err error
	if r.fetched, err = fetchedCluster(r.Req, r.Spec); err != nil {
		return err
	}
	r.wl = workloadReader(r.fetched, r.Spec, r.In)
	if r.wl == nil {
		r.view = r.Observed
		return nil
	}
	local, err := r.wl.Localize(r.Req, r.Observed.ReadAll())
	r.view = fnstate.ObservedOf(local)
	return err
}

// siteOf is where the organization runs: in a workload cluster when it has a reader there, with what its
// cluster publishes of the placement policy there.
func siteOf(wl *remote.Reader, claim claimOf, c *boundCluster) site {
	at := site{Workload: wl != nil, ClaimNamespace: claim.Namespace}
	if at.Workload && c != nil {
		at.Placement = c.Status.Placement
	}
	return at
}
