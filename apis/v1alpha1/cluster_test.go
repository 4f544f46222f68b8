package v1alpha1

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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

// TestClusterXRDMatchesGoTypes compares the XRD's spec and status fields
// with the Go types' JSON fields, recursively.
func TestClusterXRDMatchesGoTypes(t *testing.T) {
	raw, err := os.ReadFile("../karpentercluster/definition.yaml")
	if err != nil {
		t.Fatal(err)
	}
	j, err := yaml.ToJSON(raw)
	if err != nil {
		t.Fatal(err)
	}
	var xrd struct {
		Spec struct {
			Versions []struct {
				Schema struct {
					OpenAPIV3Schema schema `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(j, &xrd); err != nil {
		t.Fatal(err)
	}
	root := xrd.Spec.Versions[0].Schema.OpenAPIV3Schema
	for name, typ := range map[string]reflect.Type{
		"spec":   reflect.TypeFor[XKarpenterClusterSpec](),
		"status": reflect.TypeFor[XKarpenterClusterStatus](),
	} {
		if diff := cmp.Diff(goFields(typ, name), schemaFields(root.Properties[name], name)); diff != "" {
			t.Errorf("%s fields: -Go, +XRD:\n%s", name, diff)
		}
	}
}

type schema struct {
	Properties map[string]schema `json:"properties"`
}

// schemaFields lists the dotted paths of every property under s.
func schemaFields(s schema, prefix string) []string {
	var out []string
	for k, p := range s.Properties {
		path := prefix + "." + k
		out = append(out, path)
		out = append(out, schemaFields(p, path)...)
	}
	slices.Sort(out)
	return out
}

// goFields lists the dotted JSON paths of every field of a struct type;
// maps and scalars are leaves.
func goFields(t reflect.Type, prefix string) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	var out []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		path := prefix + "." + name
		out = append(out, path)
		out = append(out, goFields(f.Type, path)...)
	}
	slices.Sort(out)
	return out
}
