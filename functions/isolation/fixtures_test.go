package main

import (
	"context"
	"encoding/json"
	"testing"

	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
)

// Reference objects a platform owns. The NodeClass carries a field kiso does
// not know (futureField) that a clone must keep.
const (
	refNodeClass = `{"apiVersion":"karpenter.k8s.aws/v1","kind":"EC2NodeClass","metadata":{"name":"default","uid":"ref-nc"},
		"spec":{"role":"KarpenterNodeRole-prod","amiSelectorTerms":[{"alias":"al2023@latest"}],
		"subnetSelectorTerms":[{"tags":{"karpenter.sh/discovery":"prod"}}],
		"securityGroupSelectorTerms":[{"tags":{"karpenter.sh/discovery":"prod"}}],
		"tags":{"team":"platform"},"futureField":{"x":1}},
		"status":{"conditions":[{"type":"Ready","status":"True"}]}}`
	refNodePool = `{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"default","uid":"ref-np"},
		"spec":{"template":{"metadata":{"labels":{"tier":"general"}},"spec":{
		"nodeClassRef":{"group":"karpenter.k8s.aws","kind":"EC2NodeClass","name":"default"},
		"requirements":[{"key":"karpenter.sh/capacity-type","operator":"In","values":["spot","on-demand"]}],
		"taints":[{"key":"arch","value":"arm64","effect":"NoSchedule"}],
		"startupTaints":[{"key":"node.cilium.io/agent-not-ready","value":"true","effect":"NoExecute"}],
		"expireAfter":"720h"}},
		"limits":{"cpu":1000,"memory":"4000Gi"},
		"disruption":{"consolidationPolicy":"WhenEmptyOrUnderutilized","consolidateAfter":"30s"}}}`
)

// xr returns an XKarpenterIsolation with the supplied spec.
func xr(spec string) string {
	return `{"apiVersion":"kiso.dev/v1alpha1","kind":"XKarpenterIsolation","metadata":{"name":"acme-x1","uid":"xr-uid"},"spec":` + spec + `}`
}

const input = `{"apiVersion":"isolation.fn.kiso.dev/v1alpha1","kind":"Input"}`

// newRequest builds a RunFunctionRequest with the XR and observed composed
// resources (composition resource name -> object).
func newRequest(t *testing.T, in, xrJSON string, observed map[string]string) *fnv1.RunFunctionRequest {
	t.Helper()
	req := &fnv1.RunFunctionRequest{
		Input:    resource.MustStructJSON(in),
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

// cluster holds the objects a fake API server returns for required resources.
type cluster []string

// run calls the function the way Crossplane does: it resolves the function's
// requirements against the cluster and calls again until the function asks
// for the same requirements twice in a row.
func run(t *testing.T, req *fnv1.RunFunctionRequest, c cluster) *fnv1.RunFunctionResponse {
	t.Helper()
	f := &Function{log: logging.NewNopLogger()}
	var asked *fnv1.Requirements
	for range 5 {
		// Each call gets its own copy, as over gRPC: response.To shares the
		// request's desired state with the response.
		rsp, err := f.RunFunction(context.Background(), proto.Clone(req).(*fnv1.RunFunctionRequest))
		if err != nil {
			t.Fatalf("RunFunction(...): unexpected error: %v", err)
		}
		if rsp.GetRequirements() == nil || (asked != nil && proto.Equal(rsp.GetRequirements(), asked)) {
			return rsp
		}
		asked = rsp.GetRequirements()
		req = proto.Clone(req).(*fnv1.RunFunctionRequest)
		req.RequiredResources = c.resolve(t, asked)
	}
	t.Fatalf("requirements did not stabilise after 5 calls")
	return nil
}

func (c cluster) resolve(t *testing.T, rq *fnv1.Requirements) map[string]*fnv1.Resources {
	t.Helper()
	out := map[string]*fnv1.Resources{}
	for name, sel := range rq.GetResources() {
		items := &fnv1.Resources{}
		for _, o := range c {
			u := &unstructured.Unstructured{}
			if err := json.Unmarshal([]byte(o), &u.Object); err != nil {
				t.Fatalf("bad cluster object: %v", err)
			}
			if u.GetAPIVersion() == sel.GetApiVersion() && u.GetKind() == sel.GetKind() && u.GetName() == sel.GetMatchName() {
				items.Items = append(items.Items, &fnv1.Resource{Resource: resource.MustStructJSON(o)})
			}
		}
		out[name] = items
	}
	return out
}
