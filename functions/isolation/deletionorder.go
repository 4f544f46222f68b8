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

// keepGuarded keeps, as rendered, each retired object the cluster's deletion
// policies would refuse to delete now: a NodeClass while an observed NodePool
// still launches from it, an identity object while an observed NodeClass
// still names its instance profile. Crossplane deletes what a function stops
// returning before it applies anything else, and a refused deletion fails
// the XR's whole reconcile: a NodeClass switched from a dedicated identity
// to the cluster's would never be applied while the identity it names could
// not go. Kept until the observed object no longer names it, each goes once
// its deletion is allowed. Returns their names in order.
func keepGuarded(rendered map[resource.Name]*resource.DesiredComposed, observed fnstate.Observed, keys placement.Keys) []resource.Name {
	nodeClasses := map[string]bool{}
	profiles := map[string]bool{}
	for _, oc := range observed.All() {
		o := oc.Resource.Object
		switch {
		case oc.Resource.GetKind() == nodePoolKind:
			ref, _, _ := unstructured.NestedMap(o, "spec", "template", "spec", "nodeClassRef")
			if name, _ := ref["name"].(string); name != "" {
				kind, _ := ref["kind"].(string)
				nodeClasses[kind+"/"+name] = true
			}
		case strings.HasSuffix(oc.Resource.GetKind(), "NodeClass"):
			if profile, _, _ := unstructured.NestedString(o, "spec", "instanceProfile"); profile != "" {
				profiles[profile] = true
			}
		}
	}
	var kept []resource.Name
	for name, oc := range observed.All() {
		if _, ok := rendered[name]; ok {
			continue
		}
		kind := oc.Resource.GetKind()
		guarded := strings.HasSuffix(kind, "NodeClass") && nodeClasses[kind+"/"+oc.Resource.GetName()] ||
			profiles[oc.Resource.GetAnnotations()[keys.InstanceProfile]] && oc.Resource.GetAnnotations()[keys.InstanceProfile] != ""
		if !guarded {
			continue
		}
		cd := fnstate.AsRendered(oc, ownAnnotations(keys))
		rendered[name] = &resource.DesiredComposed{Resource: cd, Ready: ready.Of(cd, oc, true)}
		kept = append(kept, name)
	}
	slices.Sort(kept)
	return kept
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
