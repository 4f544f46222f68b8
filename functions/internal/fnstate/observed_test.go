package fnstate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/resource"
)

const (
	observedRole = `{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
		"metadata": {"name": "kiso-placement", "namespace": "acme", "deletionTimestamp": "2026-12-03T10:00:00Z"},
		"rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["create"]}]}`
	observedConfigMap = `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "kiso-placement", "namespace": "acme"}, "data": {"a": "b"}}`
)

func observedRequest() *fnv1.RunFunctionRequest {
	return &fnv1.RunFunctionRequest{Observed: &fnv1.State{Resources: map[string]*fnv1.Resource{
		"nodepool":  {Resource: resource.MustStructJSON(observedNodePool), ConnectionDetails: map[string][]byte{"k": []byte("v")}},
		"role":      {Resource: resource.MustStructJSON(observedRole)},
		"configmap": {Resource: resource.MustStructJSON(observedConfigMap)},
	}}}
}

// Names, Len, Has and Head read no object; Get reads the one asked for, once.
func TestObservedReadsOnlyWhatIsAskedFor(t *testing.T) {
	o := observedIn(observedRequest())
	if got, want := o.Names(), []resource.Name{"configmap", "nodepool", "role"}; !cmp.Equal(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
	if o.Len() != 3 || !o.Has("role") || o.Has("missing") {
		t.Errorf("Len() = %d, Has(role) = %t, Has(missing) = %t; want 3, true, false", o.Len(), o.Has("role"), o.Has("missing"))
	}
	h, ok := o.Head("role")
	if want := (Head{GVK: roleGVK, Namespace: "acme", Name: "kiso-placement", Deleting: true}); !ok || h != want {
		t.Errorf("Head(role) = %+v, %t; want %+v", h, ok, want)
	}
	if _, ok := o.Head("missing"); ok {
		t.Error("Head(missing) found an object")
	}
	if len(o.read) != 0 {
		t.Fatalf("reading names and heads read %d objects", len(o.read))
	}
	first, ok := o.Get("role")
	if !ok || len(o.read) != 1 {
		t.Fatalf("Get(role) = %t, and %d objects read; want true, 1", ok, len(o.read))
	}
	if again, _ := o.Get("role"); again.Resource != first.Resource {
		t.Error("a second Get read the object again")
	}
	if _, ok := o.Get("missing"); ok {
		t.Error("Get(missing) found an object")
	}
}

var roleGVK = schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role"}

// Every way of reading gives what the SDK reads, less managed fields, whether the objects came in a request or
// were read already.
func TestObservedIsTheSDKs(t *testing.T) {
	req := observedRequest()
	sdk, err := request.GetObservedComposedResources(req)
	if err != nil {
		t.Fatal(err)
	}
	for _, oc := range sdk {
		delete(oc.Resource.Object["metadata"].(map[string]any), "managedFields")
	}
	for what, o := range map[string]Observed{"request": observedIn(req), "read": ObservedOf(sdk)} {
		if diff := cmp.Diff(sdk, o.ReadAll()); diff != "" {
			t.Errorf("%s: ReadAll, SDK -, Observed +:\n%s", what, diff)
		}
		for name, oc := range sdk {
			h, _ := o.Head(name)
			if want := headOfObject(&oc.Resource.Unstructured); h != want {
				t.Errorf("%s: Head(%s) = %+v, want %+v", what, name, h, want)
			}
		}
	}
	if got := ObservedOf(nil); got.Len() != 0 || got.Has("x") || len(got.ReadAll()) != 0 {
		t.Error("ObservedOf(nil) observes something")
	}
}

// An object's Head read from the request is what its Unstructured says, whatever the object holds: fields of
// any type, apiVersions that do not parse, deletion timestamps that do not.
func FuzzHeadIsTheUnstructureds(f *testing.F) {
	f.Add(observedRole)
	f.Add(observedNodePool)
	f.Add(`{"apiVersion": "a/b/c", "kind": 1, "metadata": {"name": null, "namespace": 2, "deletionTimestamp": "yesterday"}}`)
	f.Add(`{"apiVersion": "v1", "metadata": {"deletionTimestamp": "0001-01-01T00:00:00Z"}}`)
	f.Add(`{"apiVersion": "a/b/c", "kind": "Role", "metadata": {"deletionTimestamp": "2026-12-03T10:00:00+01:00"}}`)
	f.Add(`{"metadata": "not an object"}`)
	f.Fuzz(func(t *testing.T, object string) {
		s, ok := structOf(object)
		if !ok {
			return
		}
		if got, want := headOf(s), headOfObject(&unstructured.Unstructured{Object: s.AsMap()}); got != want {
			t.Errorf("headOf = %+v, Unstructured says %+v", got, want)
		}
	})
}
