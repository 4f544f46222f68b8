package main

import (
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/kiso-dev/kiso/functions/internal/fntest"
	"github.com/kiso-dev/kiso/functions/internal/usage"
)

// Reference objects a platform owns. The NodeClass carries a field kiso does
// not know (futureField) that a clone must keep.
const (
	refNodeClass = `{"apiVersion":"karpenter.k8s.aws/v1","kind":"EC2NodeClass","metadata":{"name":"default","uid":"ref-nc","labels":{"kiso.dev/reference":"true"}},
		"spec":{"role":"KarpenterNodeRole-prod","amiSelectorTerms":[{"alias":"al2023@latest"}],
		"subnetSelectorTerms":[{"tags":{"karpenter.sh/discovery":"prod"}}],
		"securityGroupSelectorTerms":[{"tags":{"karpenter.sh/discovery":"prod"}}],
		"tags":{"team":"platform"},"futureField":{"x":1}},
		"status":{"conditions":[{"type":"Ready","status":"True"}]}}`
	refNodePool = `{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"default","uid":"ref-np","labels":{"kiso.dev/reference":"true"}},
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
func newRequest(t testing.TB, in, xrJSON string, observed map[string]string) *fnv1.RunFunctionRequest {
	t.Helper()
	return fntest.Request(in, xrJSON, observed)
}

// cluster holds the objects a fake API server returns for required resources.
type cluster = fntest.Cluster

// run calls the function as Crossplane does, resolving its requirements
// against the cluster. A new organization's first render is its lock alone
// (takeOrganization): run then applies the lock, as Crossplane would, and
// calls again, so a test sees what the organization composes. Tests of that
// first render use runOnce.
func run(t testing.TB, req *fnv1.RunFunctionRequest, c cluster) *fnv1.RunFunctionResponse {
	t.Helper()
	rsp := runOnce(t, req, c)
	if lock, taking := takingOrganization(rsp); taking {
		req = proto.Clone(req).(*fnv1.RunFunctionRequest)
		if req.GetObserved().GetResources() == nil {
			req.Observed.Resources = map[string]*fnv1.Resource{}
		}
		req.Observed.Resources[string(organizationLockResource)] = &fnv1.Resource{Resource: lock}
		rsp = runOnce(t, req, c)
	}
	return rsp
}

// runOnce is run without applying a lock the function takes.
func runOnce(t testing.TB, req *fnv1.RunFunctionRequest, c cluster) *fnv1.RunFunctionResponse {
	t.Helper()
	return fntest.Run(t, &Function{log: logging.NewNopLogger()}, req, c)
}

// takingOrganization returns the lock a response takes, if it takes a new
// organization.
func takingOrganization(rsp *fnv1.RunFunctionResponse) (*structpb.Struct, bool) {
	for _, c := range rsp.GetConditions() {
		if c.GetType() == TypePoolsSettled && c.GetReason() == ReasonTaking {
			return rsp.GetDesired().GetResources()[string(organizationLockResource)].GetResource(), true
		}
	}
	return nil, false
}

// namespace is a Namespace the platform gives organization acme, as the API
// server returns it.
func namespace(name string) string { return namespaceOf(name, "acme") }

// namespaceOf is a Namespace the platform gives an organization ("" for
// none).
func namespaceOf(name, organization string) string {
	if organization == "" {
		return `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"` + name + `"}}`
	}
	return `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"` + name + `","labels":{"kiso.dev/organization":"` + organization + `"}}}`
}

// withoutInUse is an observed object as kiso rendered it, without the label Crossplane adds while a Usage
// names it.
func withoutInUse(t *testing.T, observed string) map[string]any {
	t.Helper()
	u := &unstructured.Unstructured{Object: fntest.JSONMap(t, observed)}
	labels := u.GetLabels()
	delete(labels, usage.InUseLabel)
	u.SetLabels(labels)
	return u.Object
}
