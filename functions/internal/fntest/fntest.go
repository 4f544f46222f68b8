// Package fntest holds what both functions' tests need to read a
// RunFunctionResponse: desired resources as plain JSON maps, and small
// helpers to compare them with go-cmp.
package fntest

import (
	"encoding/json"
	"slices"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// Desired decodes the desired composed resources of a response, by name.
func Desired(t testing.TB, rsp *fnv1.RunFunctionResponse) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for name, r := range rsp.GetDesired().GetResources() {
		out[name] = AsMap(t, r.GetResource())
	}
	return out
}

// AsMap decodes a protobuf Struct as encoding/json would decode its JSON.
func AsMap(t testing.TB, s *structpb.Struct) map[string]any {
	t.Helper()
	b, err := s.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return JSONMap(t, string(b))
}

// JSONMap decodes a JSON object.
func JSONMap(t testing.TB, j string) map[string]any {
	t.Helper()
	m := map[string]any{}
	if err := json.Unmarshal([]byte(j), &m); err != nil {
		t.Fatalf("bad JSON %s: %v", j, err)
	}
	return m
}

// ToJSON encodes v.
func ToJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Dig returns the value at path in a decoded object, or nil.
func Dig(m map[string]any, path ...string) any {
	var v any = m
	for _, p := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[p]
	}
	return v
}

// SortedKeys returns a map's keys in order.
func SortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// AssertNoFatal stops the test if the function returned a fatal result.
func AssertNoFatal(t testing.TB, rsp *fnv1.RunFunctionResponse) {
	t.Helper()
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
			t.Fatalf("unexpected fatal result: %s", r.GetMessage())
		}
	}
}
