package fnstate

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
)

// Whatever objects Crossplane returns, RequiredLabeled reads each one's name and labels as the SDK's
// GetRequiredResource, GetName and GetLabels read them.
func FuzzRequiredLabeledIsTheSDKs(f *testing.F) {
	f.Add(`[{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "acme", "labels": {"kiso.dev/organization": "acme"}, "managedFields": [{"manager": "kubectl"}]}}]`, true)
	f.Add(`[{"metadata": {"name": 1, "labels": {"a": null, "b": "c"}}}, {"metadata": "x"}, {}]`, true)
	f.Add(`[{"metadata": {"labels": {"a": 1}}}, {"metadata": {"labels": []}}, {"metadata": {"labels": {}}}]`, true)
	f.Add(`[]`, false)
	f.Fuzz(func(t *testing.T, objects string, answered bool) {
		req, ok := answering("namespaces", objects, answered)
		if !ok {
			return
		}
		found, wantResolved, err := request.GetRequiredResource(req, "namespaces")
		if err != nil {
			t.Fatal(err)
		}
		want := []Labeled{}
		for _, r := range found {
			want = append(want, Labeled{Name: r.Resource.GetName(), Labels: r.Resource.GetLabels()})
		}
		got, resolved := RequiredLabeled(req, "namespaces")
		if resolved != wantResolved {
			t.Errorf("resolved: SDK %v, RequiredLabeled %v", wantResolved, resolved)
		}
		if got == nil {
			got = []Labeled{}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("SDK -, RequiredLabeled +:\n%s", diff)
		}
	})
}

// Whatever objects Crossplane returns, Required reads them as the SDK's GetRequiredResource does, less
// metadata.managedFields and nothing else.
func FuzzRequiredIsTheSDKsLessManagedFields(f *testing.F) {
	f.Add(`[`+observedNodePool+`, {"metadata": "x"}, {}]`, true)
	f.Add(`[{"metadata": {"managedFields": null, "name": "x"}, "spec": {"metadata": {"managedFields": []}}}]`, true)
	f.Add(`[]`, false)
	f.Fuzz(func(t *testing.T, objects string, answered bool) {
		req, ok := answering("objects", objects, answered)
		if !ok {
			return
		}
		found, wantResolved, err := request.GetRequiredResource(req, "objects")
		if err != nil {
			t.Fatal(err)
		}
		want := []map[string]any{}
		for _, r := range found {
			if meta, ok := r.Resource.Object["metadata"].(map[string]any); ok {
				delete(meta, "managedFields")
			}
			want = append(want, r.Resource.Object)
		}
		got, resolved := Required(req, "objects")
		if resolved != wantResolved {
			t.Errorf("resolved: SDK %v, Required %v", wantResolved, resolved)
		}
		gotObjects := []map[string]any{}
		for _, r := range got {
			gotObjects = append(gotObjects, r.Resource.Object)
		}
		if diff := cmp.Diff(want, gotObjects); diff != "" {
			t.Errorf("SDK less managed fields -, Required +:\n%s", diff)
		}
	})
}

// answering is a request whose requirement name Crossplane has answered (if answered) with the objects, a JSON
// list; ok is false when they are not a list of objects structpb takes.
func answering(name, objects string, answered bool) (req *fnv1.RunFunctionRequest, ok bool) {
	var items []map[string]any
	if json.Unmarshal([]byte(objects), &items) != nil {
		return nil, false
	}
	req = &fnv1.RunFunctionRequest{RequiredResources: map[string]*fnv1.Resources{}}
	if !answered {
		return req, true
	}
	answer := &fnv1.Resources{}
	for _, item := range items {
		s, err := structpb.NewStruct(item)
		if err != nil {
			return nil, false
		}
		answer.Items = append(answer.Items, &fnv1.Resource{Resource: s})
	}
	req.RequiredResources[name] = answer
	return req, true
}
