package fnstate

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/resource"
)

const observedNodePool = `{
	"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
	"metadata": {"name": "acme", "labels": {"kiso.dev/organization": "acme"},
		"managedFields": [{"manager": "apiextensions.crossplane.io/composed/0a1b", "operation": "Apply",
			"fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:limits": {"f:cpu": {}}}}}]},
	"spec": {"limits": {"cpu": "100"}},
	"status": {"conditions": [{"type": "Ready", "status": "True"}]}
}`

// Read gives the observed XR and every observed composed resource as the SDK would, without their managed
// fields.
func TestReadLeavesOutManagedFields(t *testing.T) {
	req := &fnv1.RunFunctionRequest{
		Observed: &fnv1.State{
			Composite: &fnv1.Resource{
				Resource: resource.MustStructJSON(`{"apiVersion":"kiso.dev/v1alpha1","kind":"XKarpenterIsolation",
					"metadata":{"name":"acme","managedFields":[{"manager":"apiextensions.crossplane.io/composite","operation":"Apply",
						"subresource":"status","fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:pools":{}}}}]},
					"spec":{"organization":"acme"},"status":{"pools":[{"name":"acme"}],"conditions":[{"type":"Synced","status":"True"}]}}`),
				ConnectionDetails: map[string][]byte{"k": []byte("v")},
			},
			Resources: map[string]*fnv1.Resource{
				"nodepool":  {Resource: resource.MustStructJSON(observedNodePool), ConnectionDetails: map[string][]byte{"k": []byte("v")}},
				"no-fields": {Resource: resource.MustStructJSON(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"a":"b"}}`)},
			},
		},
	}
	sdk, err := request.GetObservedComposedResources(req)
	if err != nil {
		t.Fatal(err)
	}
	sdkXR, err := request.GetObservedCompositeResource(req)
	if err != nil {
		t.Fatal(err)
	}
	st, err := Read(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := st.ObservedXR.Resource.Object["metadata"].(map[string]any)["managedFields"]; ok {
		t.Errorf("the observed XR keeps its managed fields")
	}
	delete(sdkXR.Resource.Object["metadata"].(map[string]any), "managedFields")
	if diff := cmp.Diff(sdkXR, st.ObservedXR); diff != "" {
		t.Errorf("observed XR, SDK (without managed fields) -, Read +:\n%s", diff)
	}
	if st.Observed.Len() != len(sdk) {
		t.Fatalf("Read gives %d observed resources, the SDK %d", st.Observed.Len(), len(sdk))
	}
	for name, want := range sdk {
		got, ok := st.Observed.Get(name)
		if !ok || got.Resource == nil {
			t.Fatalf("Read lost observed resource %q", name)
		}
		if _, ok := got.Resource.Object["metadata"].(map[string]any)["managedFields"]; ok {
			t.Errorf("observed resource %q keeps its managed fields", name)
		}
		delete(want.Resource.Object["metadata"].(map[string]any), "managedFields")
		if diff := cmp.Diff(want.Resource.Object, got.Resource.Object); diff != "" {
			t.Errorf("observed resource %q, SDK (without managed fields) -, Read +:\n%s", name, diff)
		}
		if diff := cmp.Diff(want.ConnectionDetails, got.ConnectionDetails); diff != "" {
			t.Errorf("observed resource %q connection details, SDK -, Read +:\n%s", name, diff)
		}
	}
}

// Any object reads as structpb's AsMap reads it, less metadata.managedFields and nothing else, whatever its
// metadata is (an object, a scalar, absent).
func FuzzWithoutManagedFieldsIsAsMapLessThem(f *testing.F) {
	f.Add(observedNodePool)
	f.Add(`{"metadata": "not an object", "managedFields": [1]}`)
	f.Add(`{"spec": {"metadata": {"managedFields": []}}}`)
	f.Add(`{"metadata": {"managedFields": null, "name": "x"}}`)
	f.Fuzz(func(t *testing.T, object string) {
		s, ok := structOf(object)
		if !ok {
			return
		}
		want := s.AsMap()
		if meta, ok := want["metadata"].(map[string]any); ok {
			delete(meta, "managedFields")
		}
		if diff := cmp.Diff(want, withoutManagedFields(s)); diff != "" {
			t.Errorf("AsMap less managed fields -, withoutManagedFields +:\n%s", diff)
		}
	})
}

// structOf is a fuzzed object as Crossplane would send it, if the input is a JSON object structpb can hold.
func structOf(object string) (*structpb.Struct, bool) {
	var m map[string]any
	if json.Unmarshal([]byte(object), &m) != nil {
		return nil, false
	}
	s, err := structpb.NewStruct(m)
	return s, err == nil
}

// With StatusConditionsOnly, any observed XR reads as the SDK reads it less its managed fields and, if its
// status is an object, every status field but the conditions; the request is left as it was.
func FuzzStatusConditionsOnlyIsTheSDKsLessTheRest(f *testing.F) {
	f.Add(`{"metadata":{"name":"acme","managedFields":[{"manager":"m"}]},"spec":{"organization":"acme"},
		"status":{"pools":[{"name":"acme"}],"conditions":[{"type":"Synced","status":"True"}]}}`)
	f.Add(`{"status":{"pools":[]}}`)
	f.Add(`{"status":"not an object"}`)
	f.Add(`{"status":null,"spec":{}}`)
	f.Add(`{"spec":{"status":{"pools":[]}}}`)
	f.Fuzz(func(t *testing.T, object string) {
		s, ok := structOf(object)
		if !ok {
			return
		}
		req := &fnv1.RunFunctionRequest{Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: s}}}
		sent := proto.Clone(req)
		want, err := request.GetObservedCompositeResource(req)
		if err != nil {
			t.Fatal(err)
		}
		if meta, ok := want.Resource.Object["metadata"].(map[string]any); ok {
			delete(meta, "managedFields")
		}
		if status, ok := want.Resource.Object["status"].(map[string]any); ok {
			for k := range status {
				if k != "conditions" {
					delete(status, k)
				}
			}
		}
		st, err := Read(req, StatusConditionsOnly())
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, st.ObservedXR); diff != "" {
			t.Errorf("observed XR, SDK (less managed fields and status but conditions) -, Read +:\n%s", diff)
		}
		if !proto.Equal(sent, req) {
			t.Errorf("Read changed the request")
		}
	})
}
