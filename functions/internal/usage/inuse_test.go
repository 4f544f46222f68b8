package usage

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/kiso-dev/kiso/functions/internal/fnstate"
)

func observedObject(kind, name string, labels map[string]any) resource.ObservedComposed {
	cd := composed.New()
	cd.Object = map[string]any{
		"apiVersion": "example.org/v1", "kind": kind,
		"metadata": map[string]any{"name": name, "labels": labels, "annotations": map[string]any{
			"kiso.dev/pool": "p", "crossplane.io/composition-resource-name": name,
		}},
		"spec":   map[string]any{"size": "big"},
		"status": map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}},
	}
	return resource.ObservedComposed{Resource: cd}
}

func TestKeepInUseKeepsOnlyWhatCrossplaneWouldRefuseToDelete(t *testing.T) {
	inUse := map[string]any{InUseLabel: "true", "crossplane.io/composite": "x", "team": "a"}
	observed := map[resource.Name]resource.ObservedComposed{
		"used-retired":     observedObject("NodeClass", "a", inUse),
		"free-retired":     observedObject("NodePool", "b", map[string]any{"team": "a"}),
		"used-still-asked": observedObject("NodeClass", "c", inUse),
		"marked-false":     observedObject("NodeClass", "d", map[string]any{InUseLabel: "false"}),
		"tenant-labelled":  observedObject("ConfigMap", "e", inUse),
	}
	// A tenant admin may label a ConfigMap in its namespace; no ClusterUsage can name it.
	observed["tenant-labelled"].Resource.SetNamespace("acme-web")
	asked := composed.New()
	asked.SetName("c-as-rendered-now")
	desired := map[resource.Name]*resource.DesiredComposed{"used-still-asked": {Resource: asked}}

	kept := KeepInUse(desired, fnstate.ObservedOf(observed), []string{"kiso.dev/pool"})
	if diff := cmp.Diff([]resource.Name{"used-retired"}, kept); diff != "" {
		t.Errorf("kept: -want, +got:\n%s", diff)
	}
	want := map[string]any{
		"apiVersion": "example.org/v1", "kind": "NodeClass",
		"metadata": map[string]any{"name": "a", "labels": map[string]any{"team": "a"}, "annotations": map[string]any{"kiso.dev/pool": "p"}},
		"spec":     map[string]any{"size": "big"},
	}
	if diff := cmp.Diff(want, desired["used-retired"].Resource.Object); diff != "" {
		t.Errorf("kept object: -as rendered, +kept:\n%s", diff)
	}
	if desired["used-retired"].Ready != resource.ReadyTrue {
		t.Errorf("kept object Ready %q, want it Ready as observed", desired["used-retired"].Ready)
	}
	if desired["used-still-asked"].Resource.GetName() != "c-as-rendered-now" {
		t.Error("an object the function still returns was replaced by its observed copy")
	}
	for _, name := range []resource.Name{"free-retired", "marked-false", "tenant-labelled"} {
		if _, ok := desired[name]; ok {
			t.Errorf("%s, which Crossplane may delete, is kept", name)
		}
	}
}
