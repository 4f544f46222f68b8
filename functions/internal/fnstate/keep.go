// AsRendered returns a composed resource exactly as a function rendered it, read back from what Crossplane
// observed. Crossplane deletes any composed resource a function stops returning, and applies what it returns
// with server-side apply, so returning an object with fewer fields than before would remove them: what is
// kept is the object's identity, its own labels and annotations, and its whole content.

package fnstate

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
)

// contentFields hold what an object is: a ConfigMap's data, a Role's rules, a RoleBinding's role and
// subjects; everything else kiso composes keeps it in spec.
var contentFields = []string{"spec", "data", "rules", "roleRef", "subjects"}

// AsRendered returns the observed object as it was rendered: apiVersion, kind, name and namespace, the labels
// that are not Crossplane's, the annotations of the keys given (the ones the function renders; Crossplane's
// and the providers' are theirs to keep), and its content.
func AsRendered(oc resource.ObservedComposed, annotations []string) *composed.Unstructured {
	u := unstructured.Unstructured{Object: map[string]any{
		"apiVersion": oc.Resource.GetAPIVersion(),
		"kind":       oc.Resource.GetKind(),
		"metadata":   map[string]any{"name": oc.Resource.GetName()},
	}}
	if ns := oc.Resource.GetNamespace(); ns != "" {
		u.SetNamespace(ns)
	}
	if labels := ownLabels(oc.Resource.GetLabels()); len(labels) > 0 {
		u.SetLabels(labels)
	}
	if kept := only(oc.Resource.GetAnnotations(), annotations); len(kept) > 0 {
		u.SetAnnotations(kept)
	}
	for _, content := range contentFields {
		if v, ok := oc.Resource.Object[content]; ok {
			u.Object[content] = runtime.DeepCopyJSONValue(v)
		}
	}
	cd := composed.New()
	cd.Unstructured = u
	return cd
}

// ownLabels drops the labels Crossplane itself puts on composed resources (its composite labels, and the
// in-use label its usage controller sets).
func ownLabels(labels map[string]string) map[string]string {
	out := make(map[string]string, len(labels))
	for k, v := range labels {
		if !strings.HasPrefix(k, "crossplane.io/") {
			out[k] = v
		}
	}
	return out
}

// only returns the annotations of the keys given.
func only(annotations map[string]string, keys []string) map[string]string {
	out := make(map[string]string, len(keys))
	for _, k := range keys {
		if v, ok := annotations[k]; ok {
			out[k] = v
		}
	}
	return out
}
