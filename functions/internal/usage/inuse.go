package usage

import (
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/kiso-dev/kiso/functions/internal/fnstate"
	"github.com/kiso-dev/kiso/functions/internal/ready"
)

// InUseLabel is what Crossplane's usage controller labels an object a Usage names as used with, and removes
// once no Usage names it any more. Crossplane's usage webhook is asked about deleting objects so labelled
// only, and refuses while a Usage exists.
const InUseLabel = "crossplane.io/in-use"

// InUse reports whether Crossplane would refuse to delete the object now.
func InUse(o *unstructured.Unstructured) bool {
	return o.GetLabels()[InUseLabel] == "true"
}

// KeepInUse adds to desired, as rendered (fnstate.AsRendered, with the annotations a function renders), every
// observed composed resource desired lacks that Crossplane would refuse to delete, and returns their names in
// order. Crossplane deletes what a function stops returning before it applies anything else, and a refused
// deletion is a conflict, on which it gives up the XR's whole reconcile (nothing applied, no status written,
// no event) and tries again with backoff. A NodeClass retired together with its NodePool and the Usage
// between them would hold the XR so until an attempt happens to delete the Usage first, and for good while
// another XR's Usage names the object. Returned until no Usage names it, an object goes only once Crossplane
// can delete it: a retired pool's Usage and NodePool first, its NodeClass once the Usage is gone.
// observed is what Crossplane observed, not a function's view of a workload cluster: the label is put on the
// objects Crossplane composes. Only cluster-scoped objects are trusted with the label: every Usage kiso composes
// is a ClusterUsage, which names cluster-scoped objects only, and a namespaced object may be labelled by whoever
// may edit it in its namespace (a tenant admin may edit a ConfigMap there); trusting the label on one would let
// a tenant keep what the platform takes away.
func KeepInUse(desired map[resource.Name]*resource.DesiredComposed, observed fnstate.Observed, annotations []string) []resource.Name {
	var kept []resource.Name
	for _, name := range observed.Names() {
		if _, ok := desired[name]; ok {
			continue
		}
		oc, _ := observed.Get(name)
		if oc.Resource == nil || oc.Resource.GetNamespace() != "" || !InUse(&oc.Resource.Unstructured) {
			continue
		}
		cd := fnstate.AsRendered(oc, annotations)
		desired[name] = &resource.DesiredComposed{Resource: cd, Ready: ready.Of(cd, oc, true)}
		kept = append(kept, name)
	}
	slices.Sort(kept)
	return kept
}
