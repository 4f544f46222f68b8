package v1alpha1

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/util/yaml"
)

// TestClusterExamplesDecodeStrictly decodes every XKarpenterCluster example
// into the Go types, refusing unknown fields: an example (and so the XRD it
// is validated against) cannot carry a field the function would ignore.
func TestClusterExamplesDecodeStrictly(t *testing.T) {
	files, err := filepath.Glob("../../examples/cluster/*/xr.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples found: %v", err)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		j, err := yaml.ToJSON(raw)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		var xr struct {
			Kind string          `json:"kind"`
			Spec json.RawMessage `json:"spec"`
		}
		if err := json.Unmarshal(j, &xr); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if xr.Kind != ClusterKind {
			t.Errorf("%s: kind %q, want %s", f, xr.Kind, ClusterKind)
		}
		dec := json.NewDecoder(bytes.NewReader(xr.Spec))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&XKarpenterClusterSpec{}); err != nil {
			t.Errorf("%s: spec does not decode strictly: %v", f, err)
		}
	}
}
