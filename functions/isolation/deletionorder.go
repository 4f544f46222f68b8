package main

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/kiso-dev/kiso/functions/internal/fncall"
	"github.com/kiso-dev/kiso/functions/internal/fnstate"
	"github.com/kiso-dev/kiso/functions/internal/placement"
	"github.com/kiso-dev/kiso/functions/internal/ready"
	"github.com/kiso-dev/kiso/functions/internal/usage"
)

// A guard is a retired object kept until the cluster's deletion policies let it go (keepGuarded).
type guard struct {
	// Name is the composed resource kept.
	Name resource.Name
	// Object is what it is, by kind and name; User what still uses it, likewise.
	Object, User string
}

// keepGuarded keeps, as rendered, each retired object the cluster's deletion
// policies would refuse to delete now: a NodeClass while a NodePool still
// launches from it (one observed, or one Crossplane no longer observes but
// still returns among users: being deleted), an identity object while an
// observed NodeClass still names its instance profile. Crossplane deletes
// what a function stops returning before it applies anything else, and a
// refused deletion fails the XR's whole reconcile: a NodeClass switched from
// a dedicated identity to the cluster's would never be applied while the
// identity it names could not go. Kept until nothing uses it, each goes once
// its deletion is allowed. Returns them in order of name.
func keepGuarded(rendered map[resource.Name]*resource.DesiredComposed, observed fnstate.Observed, users []*unstructured.Unstructured, keys placement.Keys) []guard {
	nodeClasses := launchingNodeClasses(observed)
	for _, np := range users {
		if kind, name := nodeClassRef(np.Object); name != "" {
			nodeClasses[kind+"/"+name] = describeUser(np)
		}
	}
	profiles := map[string]string{}
	for _, oc := range observed.All() {
		if !isNodeClass(oc.Resource.GetKind()) {
			continue
		}
		if profile, _, _ := unstructured.NestedString(oc.Resource.Object, "spec", "instanceProfile"); profile != "" {
			profiles[profile] = describeUser(&oc.Resource.Unstructured)
		}
	}
	var kept []guard
	for name, oc := range observed.All() {
		if _, ok := rendered[name]; ok {
			continue
		}
		kind := oc.Resource.GetKind()
		user := ""
		if isNodeClass(kind) {
			user = nodeClasses[kind+"/"+oc.Resource.GetName()]
		}
		if profile := oc.Resource.GetAnnotations()[keys.InstanceProfile]; user == "" && profile != "" {
			user = profiles[profile]
		}
		if user == "" {
			continue
		}
		cd := fnstate.AsRendered(oc, ownAnnotations(keys))
		rendered[name] = &resource.DesiredComposed{Resource: cd, Ready: ready.Of(cd, oc, true)}
		kept = append(kept, guard{Name: name, Object: describeUser(&oc.Resource.Unstructured), User: user})
	}
	slices.SortFunc(kept, func(a, b guard) int { return strings.Compare(string(a.Name), string(b.Name)) })
	return kept
}

// launchingNodeClasses describes, by the NodeClass (kind/name) it launches from, each observed NodePool.
func launchingNodeClasses(observed fnstate.Observed) map[string]string {
	launching := map[string]string{}
	for _, oc := range observed.All() {
		if oc.Resource.GetKind() != nodePoolKind {
			continue
		}
		if kind, name := nodeClassRef(oc.Resource.Object); name != "" {
			launching[kind+"/"+name] = describeUser(&oc.Resource.Unstructured)
		}
	}
	return launching
}

// isNodeClass reports whether a kind is a Karpenter NodeClass, of any provider (EC2NodeClass, KWOKNodeClass, ...).
func isNodeClass(kind string) bool { return strings.HasSuffix(kind, "NodeClass") }

// nodeClassRef is the kind and name of the NodeClass a NodePool launches from.
func nodeClassRef(nodePool map[string]any) (kind, name string) {
	ref, _, _ := unstructured.NestedMap(nodePool, "spec", "template", "spec", "nodeClassRef")
	kind, _ = ref["kind"].(string)
	name, _ = ref["name"].(string)
	return kind, name
}

// describeUser names an object by kind and name for a condition, and says so if it is being deleted.
func describeUser(u *unstructured.Unstructured) string {
	if u.GetDeletionTimestamp() != nil {
		return u.GetKind() + " " + u.GetName() + " (being deleted)"
	}
	return u.GetKind() + " " + u.GetName()
}

// releasedReason is what a Usage of an earlier release says once released.
const releasedReason = "kiso no longer orders deletion with Usages (its cluster's admission policies do): this one goes at the next reconcile"

// releaseUsages lets the ClusterUsages a release before this one composed go without deleting anything. Deleted
// as they are, a Usage Crossplane composed with a user would wait for that user (the NodePool, the NodeClass) to
// be deleted, polled every 30 seconds for as long as the pool lives, and on going would replay any deletion of
// the object it kept that it once refused. So each is first rendered without its user and with replayDeletion
// off, keeping its object meanwhile; once Crossplane observes it so, it is no longer returned, and goes at once.
// observed is what Crossplane observed (Usages live where Crossplane runs, for a workload cluster's
// organization too). While any is being released, the XR is reconciled again soon.
func releaseUsages(rsp *fnv1.RunFunctionResponse, xr *resource.Composite, rendered map[resource.Name]*resource.DesiredComposed, observed fnstate.Observed) {
	releasing := 0
	for name, oc := range observed.All() {
		if oc.Resource.GroupVersionKind().Group != usage.Group || oc.Resource.GetKind() != usage.Kind {
			continue
		}
		spec, _, _ := unstructured.NestedMap(oc.Resource.Object, "spec")
		if _, by := spec["by"]; !by && spec["replayDeletion"] == false && spec["reason"] == releasedReason {
			delete(rendered, name)
			continue
		}
		// kiso rendered no annotations on its Usages.
		cd := fnstate.AsRendered(oc, nil)
		of, _, _ := unstructured.NestedMap(oc.Resource.Object, "spec", "of")
		cd.Object["spec"] = map[string]any{"of": of, "reason": releasedReason, "replayDeletion": false}
		rendered[name] = &resource.DesiredComposed{Resource: cd, Ready: resource.ReadyTrue}
		releasing++
	}
	if releasing > 0 {
		fncall.RequeueAfter(rsp, xr, false)
	}
}
