package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/kiso-dev/kiso/functions/internal/fntest"
)

// What these policies admit, refuse and inject is proven against a real
// kube-apiserver in test/e2e/admission_test.go; these tests pin what the
// function renders.

// placementNames are the composed resource names of the placement policies
// every cluster renders.
var placementNames = []string{
	"namespace-identity-binding", "namespace-identity-policy", "placement-binding", "placement-pod-binding-binding", "placement-pod-binding-policy",
	"placement-policy", "placement-pools-binding", "placement-pools-policy", "placement-warn-binding", "placement-warn-policy",
}

func TestPlacementPoliciesListNoOrganization(t *testing.T) {
	in := `{"apiVersion":"cluster.fn.kiso.dev/v1alpha1","kind":"Input","platformNamespaces":["crossplane-system"]}`
	spec := strings.Replace(podIdentitySpec, `"tags"`, `"karpenter":{"namespace":"karpenter"},"tags"`, 1)
	got := fntest.Desired(t, run(t, fntest.Request(in, xr(spec), nil)))

	policy := got["placement-policy"]
	wantAnnotations := map[string]any{
		"kiso.dev/cluster": "prod", "kiso.dev/key-domain": "kiso.dev", "kiso.dev/platform-namespaces": "crossplane-system,karpenter,kube-system",
	}
	if diff := cmp.Diff(wantAnnotations, fntest.Dig(policy, "metadata", "annotations")); diff != "" {
		t.Errorf("what the policy tells organizations: -want, +got:\n%s", diff)
	}
	outsidePlatform := []any{
		// Only "true" exempts: placement-exempt: "false" must not.
		map[string]any{"key": "kiso.dev/placement-exempt", "operator": "NotIn", "values": []any{"true"}},
		map[string]any{"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": []any{"crossplane-system", "karpenter", "kube-system"}},
	}
	organizations := append(append([]any{}, outsidePlatform...), map[string]any{"key": "kiso.dev/organization", "operator": "Exists"})
	for b, want := range map[string][]any{
		"placement-binding": outsidePlatform, "placement-pod-binding-binding": outsidePlatform, "placement-pools-binding": organizations, "placement-warn-binding": organizations,
	} {
		if diff := cmp.Diff(map[string]any{"matchExpressions": want}, fntest.Dig(got[b], "spec", "matchResources", "namespaceSelector")); diff != "" {
			t.Errorf("%s leaves out platform namespaces: -want, +got:\n%s", b, diff)
		}
	}
	// A namespace selector on the namespace policy would be matched against the labels a request sets.
	if sel := fntest.Dig(got["namespace-identity-binding"], "spec", "matchResources"); sel != nil {
		t.Errorf("the namespace identity policy must hold every namespace, has matchResources %v", sel)
	}
	wantParam := map[string]any{"name": "kiso-placement", "parameterNotFoundAction": "Deny"}
	if diff := cmp.Diff(wantParam, fntest.Dig(got["placement-pools-binding"], "spec", "paramRef")); diff != "" {
		t.Errorf("the pools policy reads each namespace's Role, and refuses pods where it is missing: -want, +got:\n%s", diff)
	}
	// Warn mode warns and audits, never refuses; where the Role is missing the pools policy refuses already.
	for b, want := range map[string]any{
		"placement-pools-binding": map[string]any{"paramRef": wantParam, "actions": []any{"Deny"}},
		"placement-warn-binding":  map[string]any{"paramRef": map[string]any{"name": "kiso-placement", "parameterNotFoundAction": "Allow"}, "actions": []any{"Warn", "Audit"}},
	} {
		got := map[string]any{"paramRef": fntest.Dig(got[b], "spec", "paramRef"), "actions": fntest.Dig(got[b], "spec", "validationActions")}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: -want, +got:\n%s", b, diff)
		}
	}
	// Kubernetes sends no admission request for admission policies to a webhook: a Usage of one would promise
	// what Crossplane cannot enforce. Tenant pools use the XR instead (the isolation function's Usages).
	for _, name := range placementNames {
		if u, ok := got["usage-"+name]; ok {
			t.Errorf("%s has a Usage, which nothing would enforce: %v", name, u)
		}
	}
	// The cost of admitting a pod must not grow with organizations: no
	// policy may name one.
	for name, o := range got {
		if (strings.HasPrefix(name, "placement-") || strings.HasPrefix(name, "namespace-")) && strings.Contains(fntest.ToJSON(t, o), "acme") {
			t.Errorf("%s names an organization", name)
		}
	}
	if _, ok := got["placement-inject-policy"]; ok {
		t.Errorf("a MutatingAdmissionPolicy is rendered although the apiserver serves no admissionregistration.k8s.io/v1beta1")
	}
}

func TestInjectPolicyFollowsTheServedAPI(t *testing.T) {
	served := `{"apiVersion":"apiregistration.k8s.io/v1","kind":"APIService","metadata":{"name":"v1beta1.admissionregistration.k8s.io"}}`
	got := fntest.Desired(t, fntest.Run(t, &Function{log: logging.NewNopLogger()}, newRequest(t, xr(podIdentitySpec), nil), withPrometheusOperator(fntest.Cluster{served})))
	if v := fntest.Dig(got["placement-inject-policy"], "apiVersion"); v != "admissionregistration.k8s.io/v1beta1" {
		t.Errorf("where the apiserver serves admissionregistration.k8s.io/v1beta1 the MutatingAdmissionPolicy is served there; got apiVersion %v", v)
	}
	in := `{"apiVersion":"cluster.fn.kiso.dev/v1alpha1","kind":"Input","mutatingAdmissionPolicy":"None"}`
	got = fntest.Desired(t, fntest.Run(t, &Function{log: logging.NewNopLogger()}, fntest.Request(in, xr(podIdentitySpec), nil), withPrometheusOperator(fntest.Cluster{served})))
	if _, ok := got["placement-inject-policy"]; ok {
		t.Errorf("mutatingAdmissionPolicy: None renders no MutatingAdmissionPolicy")
	}
}

// TestInjectPolicyFollowsTheSchemaCrossplaneReturns: where Crossplane returns required schemas (v2.2 on), the
// function asks for MutatingAdmissionPolicy's at admissionregistration.k8s.io/v1, which Kubernetes v1.36 on
// serves with no flag; returned, the policy is composed at v1; returned empty (not served), the v1beta1 APIService
// decides; not returned yet, an injecting policy composed before is kept at its API.
func TestInjectPolicyFollowsTheSchemaCrossplaneReturns(t *testing.T) {
	served := `{"apiVersion":"apiregistration.k8s.io/v1","kind":"APIService","metadata":{"name":"v1beta1.admissionregistration.k8s.io"}}`
	withSchemas := func(schema *fnv1.Schema, observed map[string]string) *fnv1.RunFunctionRequest {
		req := newRequest(t, xr(podIdentitySpec), observed)
		req.Meta = &fnv1.RequestMeta{Capabilities: []fnv1.Capability{fnv1.Capability_CAPABILITY_REQUIRED_SCHEMAS}}
		if schema != nil {
			req.RequiredSchemas = map[string]*fnv1.Schema{requireInjectV1: schema}
		}
		return req
	}
	rsp := run(t, withSchemas(nil, nil))
	asked := rsp.GetRequirements().GetSchemas()[requireInjectV1]
	if asked.GetApiVersion() != "admissionregistration.k8s.io/v1" || asked.GetKind() != "MutatingAdmissionPolicy" {
		t.Fatalf("asked Crossplane for schemas %v, want MutatingAdmissionPolicy at admissionregistration.k8s.io/v1", rsp.GetRequirements().GetSchemas())
	}
	if _, ok := fntest.Desired(t, rsp)["placement-inject-policy"]; ok {
		t.Error("a MutatingAdmissionPolicy is rendered before Crossplane returned whether its schema is served")
	}

	mapSchema, err := structpb.NewStruct(map[string]any{"type": "object", "x-kubernetes-group-version-kind": []any{
		map[string]any{"group": "admissionregistration.k8s.io", "version": "v1", "kind": "MutatingAdmissionPolicy"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	atV1 := fntest.Desired(t, fntest.Run(t, &Function{log: logging.NewNopLogger()}, withSchemas(&fnv1.Schema{OpenapiV3: mapSchema}, nil), withPrometheusOperator(fntest.Cluster{served})))
	for _, name := range []string{"placement-inject-policy", "placement-inject-binding"} {
		if v := fntest.Dig(atV1[name], "apiVersion"); v != "admissionregistration.k8s.io/v1" {
			t.Errorf("%s where the apiserver serves MutatingAdmissionPolicy at v1: apiVersion %v, want admissionregistration.k8s.io/v1", name, v)
		}
	}

	got := fntest.Desired(t, fntest.Run(t, &Function{log: logging.NewNopLogger()}, withSchemas(&fnv1.Schema{}, nil), withPrometheusOperator(fntest.Cluster{served})))
	if v := fntest.Dig(got["placement-inject-policy"], "apiVersion"); v != "admissionregistration.k8s.io/v1beta1" {
		t.Errorf("where the apiserver serves no v1 but v1beta1, the policy's apiVersion is %v, want admissionregistration.k8s.io/v1beta1", v)
	}
	if got = fntest.Desired(t, run(t, withSchemas(&fnv1.Schema{}, nil))); got["placement-inject-policy"] != nil {
		t.Error("a MutatingAdmissionPolicy is rendered where the apiserver serves neither v1 nor v1beta1")
	}

	// Composed at v1, then Crossplane has not returned the schema yet on a later call: kept at v1.
	observed := map[string]string{}
	for _, name := range []string{"placement-inject-policy", "placement-inject-binding"} {
		observed[name] = fntest.ToJSON(t, atV1[name])
	}
	req := withSchemas(nil, observed)
	if v := fntest.Dig(fntest.Desired(t, fntest.Run(t, &Function{log: logging.NewNopLogger()}, req, withPrometheusOperator(nil)))["placement-inject-policy"], "apiVersion"); v != "admissionregistration.k8s.io/v1" {
		t.Errorf("the injecting policy composed at v1 is %v while Crossplane has not returned the schema, want kept at admissionregistration.k8s.io/v1", v)
	}
}

func TestInjectPolicyIsServedAtTheInputsAPI(t *testing.T) {
	for _, api := range []string{"admissionregistration.k8s.io/v1", "admissionregistration.k8s.io/v1beta1"} {
		in := `{"apiVersion":"cluster.fn.kiso.dev/v1alpha1","kind":"Input","mutatingAdmissionPolicy":"` + api + `"}`
		got := fntest.Desired(t, run(t, fntest.Request(in, xr(podIdentitySpec), nil)))
		for _, name := range []string{"placement-inject-policy", "placement-inject-binding"} {
			if v := fntest.Dig(got[name], "apiVersion"); v != api {
				t.Errorf("%s apiVersion: want %s, got %v", name, api, v)
			}
		}
		if v := fntest.Dig(got["placement-policy"], "metadata", "annotations", "kiso.dev/inject-api-version"); v != api {
			t.Errorf("the policy must tell organizations injection is served at %s, says %v", api, v)
		}
	}
}

func TestInvalidPlacementInputIsFatal(t *testing.T) {
	in := `{"apiVersion":"cluster.fn.kiso.dev/v1alpha1","kind":"Input","platformNamespaces":["Bad_NS"],"mutatingAdmissionPolicy":"v2"}`
	rsp := run(t, fntest.Request(in, xr(podIdentitySpec), nil))
	want := `invalid function input: [input.platformNamespaces[0]: Invalid value: "Bad_NS": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', ` +
		`and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?'), ` +
		`input.mutatingAdmissionPolicy: Unsupported value: "v2": supported values: "admissionregistration.k8s.io/v1", "admissionregistration.k8s.io/v1beta1", "None"]`
	if len(rsp.GetResults()) == 0 || rsp.GetResults()[0].GetMessage() != want {
		t.Errorf("results: %v\nwant a fatal result: %s", rsp.GetResults(), want)
	}
}

// TestPoliciesCheckTheInputsKeyDomain: a platform that ships its Compositions with another keyDomain
// (docs/install.md, The label domain) gets policies that tell organizations that domain and check its keys,
// and none of kiso.dev's: the placement.kiso.dev grants stay, they are no label.
func TestPoliciesCheckTheInputsKeyDomain(t *testing.T) {
	in := `{"apiVersion":"cluster.fn.kiso.dev/v1alpha1","kind":"Input","keyDomain":"formance.com"}`
	got := fntest.Desired(t, run(t, fntest.Request(in, xr(podIdentitySpec), nil)))
	if d := fntest.Dig(got["placement-policy"], "metadata", "annotations", "kiso.dev/key-domain"); d != "formance.com" {
		t.Errorf("the placement policy tells organizations key domain %v, want formance.com", d)
	}
	identity := fmt.Sprint(fntest.Dig(got["namespace-identity-policy"], "spec"))
	for _, key := range []string{"formance.com/organization", "formance.com/placement-exempt"} {
		if !strings.Contains(identity, key) {
			t.Errorf("kiso-namespace-identity does not guard %s", key)
		}
	}
	for _, name := range placementNames {
		if got[name] == nil {
			t.Errorf("%s is not composed", name)
			continue
		}
		spec := fmt.Sprint(fntest.Dig(got[name], "spec"))
		for _, key := range []string{"kiso.dev/organization", "kiso.dev/stack", "kiso.dev/placement-exempt", "kiso.dev.organization", "kiso.dev.stack"} {
			if strings.Contains(spec, key) {
				t.Errorf("%s checks %s with keyDomain formance.com", name, key)
			}
		}
	}
}
