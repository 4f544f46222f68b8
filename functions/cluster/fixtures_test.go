package main

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
)

// validSpec is a complete, defaulted spec: Pod Identity, a node role kiso
// creates, interruption and monitoring on.
func validSpec() v1alpha1.XKarpenterClusterSpec {
	spec := v1alpha1.XKarpenterClusterSpec{ClusterName: "prod", Region: "eu-west-3", AccountID: "111122223333"}
	applyDefaults(&spec)
	return spec
}

const input = `{"apiVersion":"cluster.fn.kiso.dev/v1alpha1","kind":"Input"}`

// xr returns an XKarpenterCluster with the supplied spec.
func xr(spec string) string {
	return `{"apiVersion":"kiso.dev/v1alpha1","kind":"XKarpenterCluster","metadata":{"name":"prod"},"spec":` + spec + `}`
}

// newRequest builds a RunFunctionRequest with the XR and observed composed
// resources (composition resource name -> object).
func newRequest(t testing.TB, xrJSON string, observed map[string]string) *fnv1.RunFunctionRequest {
	t.Helper()
	req := &fnv1.RunFunctionRequest{
		Input:    resource.MustStructJSON(input),
		Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: resource.MustStructJSON(xrJSON)}},
		Desired:  &fnv1.State{},
	}
	if len(observed) > 0 {
		req.Observed.Resources = map[string]*fnv1.Resource{}
		for name, o := range observed {
			req.Observed.Resources[name] = &fnv1.Resource{Resource: resource.MustStructJSON(o)}
		}
	}
	return req
}

func run(t testing.TB, req *fnv1.RunFunctionRequest) *fnv1.RunFunctionResponse {
	t.Helper()
	rsp, err := (&Function{log: logging.NewNopLogger()}).RunFunction(context.Background(), req)
	if err != nil {
		t.Fatalf("RunFunction(...): unexpected error: %v", err)
	}
	return rsp
}

// desired decodes the desired composed resources of a response.
func desired(t *testing.T, rsp *fnv1.RunFunctionResponse) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for name, r := range rsp.GetDesired().GetResources() {
		out[name] = asMap(t, r.GetResource())
	}
	return out
}

func asMap(t *testing.T, s *structpb.Struct) map[string]any {
	t.Helper()
	b, err := s.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]any{}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func jsonMap(t *testing.T, j string) map[string]any {
	t.Helper()
	m := map[string]any{}
	if err := json.Unmarshal([]byte(j), &m); err != nil {
		t.Fatalf("bad JSON %s: %v", j, err)
	}
	return m
}

func toJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// dig returns the value at path in a decoded object, or nil.
func dig(m map[string]any, path ...string) any {
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

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func assertNoFatal(t *testing.T, rsp *fnv1.RunFunctionResponse) {
	t.Helper()
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
			t.Fatalf("unexpected fatal result: %s", r.GetMessage())
		}
	}
}
