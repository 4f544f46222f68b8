package fntest

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kiso-dev/kiso/functions/internal/usage"
)

// LabelInUse labels every observed object (composed resource name -> JSON) an observed ClusterUsage names as
// used, as Crossplane's usage controller does while the Usage exists.
func LabelInUse(t testing.TB, observed map[string]string) {
	t.Helper()
	objects := make(map[string]any, len(observed))
	for name, o := range observed {
		objects[name] = JSONMap(t, o)
	}
	for name := range labelUsed(objects) {
		observed[name] = ToJSON(t, objects[name])
	}
}

// labelUsed labels every cluster-scoped object an object of kind ClusterUsage names as used, and returns their
// names.
func labelUsed(objects map[string]any) map[string]bool {
	used := map[string]bool{}
	for _, o := range objects {
		u, ok := o.(map[string]any)
		if !ok || u["kind"] != usage.Kind {
			continue
		}
		of, _ := Dig(u, "spec", "of").(map[string]any)
		name, _ := Dig(of, "resourceRef", "name").(string)
		apiVersion, _ := of["apiVersion"].(string)
		kind, _ := of["kind"].(string)
		used[apiVersion+"/"+kind+"/"+name] = true
	}
	labelled := map[string]bool{}
	for name, o := range objects {
		u, ok := o.(map[string]any)
		if !ok {
			continue
		}
		obj := &unstructured.Unstructured{Object: u}
		m, ok := u["metadata"].(map[string]any)
		// A ClusterUsage names cluster-scoped objects only.
		if !ok || obj.GetNamespace() != "" || !used[obj.GetAPIVersion()+"/"+obj.GetKind()+"/"+obj.GetName()] {
			continue
		}
		labels, ok := m["labels"].(map[string]any)
		if !ok {
			labels = map[string]any{}
			m["labels"] = labels
		}
		labels[usage.InUseLabel] = "true"
		labelled[name] = true
	}
	return labelled
}
