package fnstate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	"github.com/crossplane/function-sdk-go/resource/composite"
	"github.com/crossplane/function-sdk-go/response"
)

// The desired state set from what a function renders is the SDK's, whether or not it is as observed, and
// shares with the request what is.
func TestSetDesiredIsTheSDKs(t *testing.T) {
	req := &fnv1.RunFunctionRequest{
		Observed: &fnv1.State{
			Composite: &fnv1.Resource{Resource: resource.MustStructJSON(`{"apiVersion":"kiso.dev/v1alpha1","kind":"XKarpenterIsolation","metadata":{"name":"acme","uid":"u"},"status":{"pools":["acme"],"conditions":[]}}`)},
			Resources: map[string]*fnv1.Resource{
				"nodepool": {Resource: resource.MustStructJSON(observedNodePool)},
			},
		},
	}
	nodePool := composed.New()
	nodePool.Object = map[string]any{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": map[string]any{"name": "acme", "labels": map[string]any{"kiso.dev/organization": "acme"}}, "spec": map[string]any{"limits": map[string]any{"cpu": "100"}}}
	configMap := composed.New()
	configMap.Object = map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "new"}, "data": map[string]any{"a": "b"}}
	desired := map[resource.Name]*resource.DesiredComposed{
		"nodepool":  {Resource: nodePool, Ready: resource.ReadyTrue},
		"configmap": {Resource: configMap, Ready: resource.ReadyFalse},
	}
	xr := &resource.Composite{Resource: composite.New(), ConnectionDetails: resource.ConnectionDetails{"k": []byte("v")}, Ready: resource.ReadyTrue}
	xr.Resource.Object = map[string]any{"apiVersion": "kiso.dev/v1alpha1", "kind": "XKarpenterIsolation", "status": map[string]any{"pools": []any{"acme"}}}

	want := &fnv1.RunFunctionResponse{}
	if err := response.SetDesiredComposedResources(want, desired); err != nil {
		t.Fatal(err)
	}
	if err := response.SetDesiredCompositeResource(want, xr); err != nil {
		t.Fatal(err)
	}
	got := &fnv1.RunFunctionResponse{}
	if err := SetDesiredComposed(got, req, desired); err != nil {
		t.Fatal(err)
	}
	if err := SetDesiredComposite(got, req, xr); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Errorf("SDK -, SetDesired +:\n%s", diff)
	}
	if got.GetDesired().GetResources()["nodepool"].GetResource().GetFields()["spec"] != req.GetObserved().GetResources()["nodepool"].GetResource().GetFields()["spec"] {
		t.Error("the NodePool's spec is as observed, but was copied")
	}
	pools := func(r *fnv1.Resource) any {
		return r.GetResource().GetFields()["status"].GetStructValue().GetFields()["pools"]
	}
	if pools(got.GetDesired().GetComposite()) != pools(req.GetObserved().GetComposite()) {
		t.Error("the XR's status.pools is as observed, but was copied")
	}
}
