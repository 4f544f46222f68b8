package awsmanaged

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/kiso-dev/kiso/internal/layout"
)

// TestEveryFieldIsInProviderAWSSchema checks each kind's Go type against the CRD of the provider-aws release
// hack/crds.env names: every field kiso can set is in the schema, under its JSON name, with the schema's type.
// The renders are validated against the same CRDs, but only with the fields their examples set.
func TestEveryFieldIsInProviderAWSSchema(t *testing.T) {
	schemas := providerAWSSchemas(t)
	for gvk, o := range kinds() {
		t.Run(gvk.Kind, func(t *testing.T) {
			s, ok := schemas[gvk]
			if !ok {
				t.Fatalf("hack/crds.env lists no CRD serving %s", gvk)
			}
			spec, ok := reflect.TypeOf(o).Elem().FieldByName("Spec")
			if !ok {
				t.Fatalf("%T has no Spec", o)
			}
			for _, problem := range mismatches("spec", spec.Type, s.Properties["spec"]) {
				t.Error(problem)
			}
		})
	}
}

// mismatches lists where the Go type t differs from the schema s at path.
func mismatches(path string, t reflect.Type, s apiextensionsv1.JSONSchemaProps) []string {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var want string
	switch t.Kind() {
	case reflect.String:
		want = "string"
	case reflect.Bool:
		want = "boolean"
	case reflect.Float64:
		want = "number"
	case reflect.Map:
		want = "object"
	case reflect.Struct:
		want = "object"
	default:
		return []string{path + ": a Go " + t.Kind().String() + " this test does not know"}
	}
	if s.Type != want {
		return []string{path + ": the schema's type is " + s.Type + ", the Go field's " + want}
	}
	switch t.Kind() { //nolint:exhaustive // scalars have nothing inside to compare
	case reflect.Map:
		if s.AdditionalProperties == nil || s.AdditionalProperties.Schema == nil {
			return []string{path + ": the schema has no type for a map's values"}
		}
		return mismatches(path+"[*]", t.Elem(), *s.AdditionalProperties.Schema)
	case reflect.Struct:
		var out []string
		for field, ft := range jsonFields(t) {
			fs, ok := s.Properties[field]
			if !ok {
				out = append(out, path+"."+field+": not in the schema")
				continue
			}
			out = append(out, mismatches(path+"."+field, ft, fs)...)
		}
		return out
	}
	return nil
}

// jsonFields returns a struct's fields by JSON name, with inline ones' fields in their place.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" && f.Anonymous {
			for n, ft := range jsonFields(f.Type) {
				out[n] = ft
			}
			continue
		}
		out[name] = f.Type
	}
	return out
}

// providerAWSSchemas reads the OpenAPI schema of every kind and version of the provider-aws CRDs hack/crds.env
// lists, from the release's Go module (downloaded through the module proxy once).
func providerAWSSchemas(t *testing.T) map[schema.GroupVersionKind]apiextensionsv1.JSONSchemaProps {
	t.Helper()
	root, err := layout.Root()
	if err != nil {
		t.Fatal(err)
	}
	sources, err := layout.CRDSources(root)
	if err != nil {
		t.Fatal(err)
	}
	aws, ok := sources["PROVIDER_AWS"]
	if !ok {
		t.Fatal("hack/crds.env lists no PROVIDER_AWS module")
	}
	dir, err := layout.ModuleDir(t.Context(), aws.ModuleVersion())
	if err != nil {
		t.Fatal(err)
	}
	out := map[schema.GroupVersionKind]apiextensionsv1.JSONSchemaProps{}
	for _, file := range aws.Files {
		raw, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(file)))
		if err != nil {
			t.Fatal(err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(raw, &crd); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, v := range crd.Spec.Versions {
			if v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
				out[schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}] = *v.Schema.OpenAPIV3Schema
			}
		}
	}
	return out
}
