package main

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/kiso-dev/kiso/functions/internal/fncall"
	"github.com/kiso-dev/kiso/functions/internal/fntest"
)

// Tests for the paths where kiso must not render, and must not drop what
// it rendered before.

func TestForeignObjectWithAPoolNameIsNeverAdopted(t *testing.T) {
	platformPool := `{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"kiso-acme","uid":"platform"},"spec":{"template":{"spec":{}}}}`
	rsp := run(t, newRequest(t, input, xr(orgSpec), nil), cluster{refNodeClass, refNodePool, platformPool})

	want := `NodePool "kiso-acme" already exists and is not composed by this XKarpenterIsolation; kiso never adopts or overwrites an object it did not create`
	assertFatal(t, rsp, want)
	if n := len(rsp.GetDesired().GetResources()); n != 0 {
		t.Errorf("rendered %d resources over a foreign object; want none", n)
	}
	assertCondition(t, rsp, fncall.TypeNamesAvailable, fnv1.Status_STATUS_CONDITION_FALSE, fncall.ReasonNameConflict, want)
}

func TestForeignObjectWithAClassPoolNameIsNeverAdopted(t *testing.T) {
	for name, foreign := range map[string]string{
		"NodePool":  `{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"kiso.acme.gpu","uid":"platform"},"spec":{"template":{"spec":{}}}}`,
		"NodeClass": `{"apiVersion":"karpenter.k8s.aws/v1","kind":"EC2NodeClass","metadata":{"name":"kiso.acme.gpu","uid":"platform"},"spec":{}}`,
	} {
		t.Run(name, func(t *testing.T) {
			rsp := run(t, newRequest(t, input, xr(orgSpecWith(gpuClass)), nil), cluster{refNodeClass, refNodePool, gpuNodeClass, gpuNodePool, foreign})
			kind := map[string]string{"NodePool": "NodePool", "NodeClass": "EC2NodeClass"}[name]
			want := kind + ` "kiso.acme.gpu" already exists and is not composed by this XKarpenterIsolation; kiso never adopts or overwrites an object it did not create`
			assertFatal(t, rsp, want)
			if n := len(rsp.GetDesired().GetResources()); n != 0 {
				t.Errorf("rendered %d resources over a foreign object; want none", n)
			}
		})
	}
}

func TestObjectThisXRControlsIsNotAConflict(t *testing.T) {
	// Crossplane can lose track of a composed resource (e.g. its resource
	// reference was not yet recorded); the object's controller reference
	// still says it is ours.
	ours := `{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"kiso-acme",
		"ownerReferences":[{"apiVersion":"kiso.dev/v1alpha1","kind":"XKarpenterIsolation","name":"acme-x1","uid":"xr-uid","controller":true}]},"spec":{}}`
	rsp := run(t, newRequest(t, input, xr(orgSpec), nil), cluster{refNodeClass, refNodePool, ours})
	fntest.AssertNoFatal(t, rsp)
	if _, ok := rsp.GetDesired().GetResources()["nodepool-kiso-acme"]; !ok {
		t.Errorf("the XR's own NodePool was not rendered")
	}
}

func TestSteadyStateAsksOnlyForTheReferences(t *testing.T) {
	rsp := run(t, newRequest(t, input, xr(orgSpec), composedOrg(t, false)), cluster{refNodeClass, refNodePool})
	fntest.AssertNoFatal(t, rsp)
	// The organization's namespaces are one selector, whatever their number.
	if diff := cmp.Diff([]string{requireOrganizationNamespaces, requireClusterPolicy, requireReferenceNodeClass, requireReferenceNodePool}, slices.Sorted(maps.Keys(rsp.GetRequirements().GetResources()))); diff != "" {
		t.Errorf("requirements once the pool is composed: -want, +got:\n%s", diff)
	}
}

func TestMissingReferenceKeepsComposedPools(t *testing.T) {
	observed := composedOrg(t, false)
	// Crossplane's copy of a composed resource carries its own labels too.
	withCrossplaneLabel := fntest.JSONMap(t, observed["nodepool-kiso-acme"])
	withCrossplaneLabel["metadata"].(map[string]any)["labels"].(map[string]any)["crossplane.io/composite"] = "acme-x1"
	observed["nodepool-kiso-acme"] = fntest.ToJSON(t, withCrossplaneLabel)

	// The stack list changed too: nothing new may be rendered, nothing old dropped.
	spec := strings.Replace(orgSpec, `"stacks":[{"name":"web"},{"name":"jobs"}]`, `"isolation":"stack","stacks":[{"name":"web"}]`, 1)
	rsp := run(t, newRequest(t, input, xr(spec), observed), cluster{refNodeClass})

	fntest.AssertNoFatal(t, rsp)
	got := fntest.Desired(t, rsp)
	for name, o := range composedOrg(t, false) {
		if diff := cmp.Diff(fntest.JSONMap(t, o), got[name]); diff != "" {
			t.Errorf("kept %s differs from the one composed: -composed, +kept:\n%s", name, diff)
		}
	}
	if len(got) != len(observed) {
		t.Errorf("want exactly the composed resources kept, got %v", slices.Sorted(maps.Keys(got)))
	}
	want := `spec.nodePoolRef: reference NodePool "default" not found; keeping the pools already composed unchanged meanwhile`
	assertCondition(t, rsp, TypeReferencesResolved, fnv1.Status_STATUS_CONDITION_FALSE, ReasonNotFound, want)
	assertWarning(t, rsp, want)
}

func TestMissingReferenceOnANewXRRendersNothingAndIsNotReady(t *testing.T) {
	rsp := run(t, newRequest(t, input, xr(orgSpec), nil), cluster{})
	fntest.AssertNoFatal(t, rsp)
	if n := len(rsp.GetDesired().GetResources()); n != 0 {
		t.Errorf("rendered %d resources without references; want none", n)
	}
	if r := rsp.GetDesired().GetComposite().GetReady(); r != fnv1.Ready_READY_FALSE {
		t.Errorf("XR readiness: want READY_FALSE, got %s", r)
	}
	want := `spec.nodeClassRef: reference EC2NodeClass "default" not found; spec.nodePoolRef: reference NodePool "default" not found`
	assertCondition(t, rsp, TypeReferencesResolved, fnv1.Status_STATUS_CONDITION_FALSE, ReasonNotFound, want)
}

func TestUnresolvedRequirementsKeepComposedPools(t *testing.T) {
	// The first call of a reconcile carries no required resources yet.
	observed := composedOrg(t, false)
	f := &Function{log: logging.NewNopLogger()}
	rsp, err := f.RunFunction(context.Background(), newRequest(t, input, xr(orgSpec), observed))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(slices.Sorted(maps.Keys(observed)), slices.Sorted(maps.Keys(fntest.Desired(t, rsp)))); diff != "" {
		t.Errorf("kept resources: -want, +got:\n%s", diff)
	}
	wantReq := &fnv1.Requirements{Resources: map[string]*fnv1.ResourceSelector{
		requireReferenceNodeClass: {ApiVersion: "karpenter.k8s.aws/v1", Kind: "EC2NodeClass", Match: &fnv1.ResourceSelector_MatchName{MatchName: "default"}},
		requireReferenceNodePool:  {ApiVersion: "karpenter.sh/v1", Kind: "NodePool", Match: &fnv1.ResourceSelector_MatchName{MatchName: "default"}},
		requireClusterPolicy:      {ApiVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicy", Match: &fnv1.ResourceSelector_MatchName{MatchName: "kiso-placement"}},
		requireOrganizationNamespaces: {ApiVersion: "v1", Kind: "Namespace", Match: &fnv1.ResourceSelector_MatchLabels{
			MatchLabels: &fnv1.MatchLabels{Labels: map[string]string{"kiso.dev/organization": "acme"}},
		}},
	}}
	if diff := cmp.Diff(wantReq, rsp.GetRequirements(), protocmp.Transform()); diff != "" {
		t.Errorf("requirements: -want, +got:\n%s", diff)
	}
	assertCondition(t, rsp, TypeReferencesResolved, fnv1.Status_STATUS_CONDITION_FALSE, ReasonWaiting, "waiting for Crossplane to fetch the reference NodeClass and NodePool")
}

func TestInvalidSpecIsFatalAndNamesTheField(t *testing.T) {
	spec := `{"organization":"acme","isolation":"stack","stacks":[{"name":"web"},{"name":"Web_2"}],
		"nodeClassRef":{"name":"default"},"nodePoolRef":{"name":"default"}}`
	observed := composedOrg(t, false)
	rsp := run(t, newRequest(t, input, xr(spec), observed), cluster{refNodeClass, refNodePool})
	want := `spec.stacks[1].name: Invalid value: "Web_2": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`
	assertFatal(t, rsp, want)
	assertCondition(t, rsp, fncall.TypeSpecValid, fnv1.Status_STATUS_CONDITION_FALSE, fncall.ReasonInvalidSpec, want)
	// A Fatal result stops Crossplane before it applies or deletes anything;
	// the function returns no desired state that could be mistaken for one.
	if n := len(rsp.GetDesired().GetResources()); n != 0 {
		t.Errorf("returned %d desired resources with a fatal result", n)
	}
}

func TestStaticReferenceForbidsWeight(t *testing.T) {
	static := strings.Replace(refNodePool, `"limits":{`, `"replicas":3,"limits":{`, 1)
	spec := strings.Replace(orgSpec, `"nodePoolRef":{"name":"default"}`, `"nodePoolRef":{"name":"default"},"pool":{"weight":10,"limits":{"nodes":5}}`, 1)
	rsp := run(t, newRequest(t, input, xr(spec), nil), cluster{refNodeClass, static})
	assertFatal(t, rsp, `spec.pool.weight: Forbidden: reference NodePool "default" is static (spec.replicas); Karpenter allows no weight on it`)
}

func TestNodeClassKindCannotChangeUnderExistingPools(t *testing.T) {
	observed := composedOrg(t, false)
	spot := `{"apiVersion":"karpenter.rackspace.com/v1","kind":"RackspaceSpotNodeClass","metadata":{"name":"spot","labels":{"kiso.dev/reference":"true"}},"spec":{}}`
	spec := strings.Replace(orgSpec, `"nodeClassRef":{"name":"default"}`, `"nodeClassRef":{"apiVersion":"karpenter.rackspace.com/v1","kind":"RackspaceSpotNodeClass","name":"spot"}`, 1)
	rsp := run(t, newRequest(t, input, xr(spec), observed), cluster{spot, refNodePool})
	assertFatal(t, rsp, `spec.nodeClassRef: Forbidden: NodePool "kiso-acme" uses a EC2NodeClass.karpenter.k8s.aws and Karpenter forbids changing a NodePool's NodeClass kind; remove the organization's pools first or keep EC2NodeClass.karpenter.k8s.aws`)
}

func TestInvalidInputIsFatal(t *testing.T) {
	in := `{"apiVersion":"isolation.fn.kiso.dev/v1alpha1","kind":"Input","keyDomain":"karpenter.sh"}`
	rsp := run(t, newRequest(t, in, xr(orgSpec), nil), cluster{refNodeClass, refNodePool})
	assertFatal(t, rsp, "invalid function input: input.keyDomain: Forbidden: the karpenter.sh domain is reserved")
}

func assertFatal(t *testing.T, rsp *fnv1.RunFunctionResponse, msg string) {
	t.Helper()
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
			if r.GetMessage() != msg {
				t.Errorf("fatal result:\nwant: %s\ngot:  %s", msg, r.GetMessage())
			}
			return
		}
	}
	t.Errorf("no fatal result; want %q", msg)
}

func assertWarning(t *testing.T, rsp *fnv1.RunFunctionResponse, msg string) {
	t.Helper()
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_WARNING && r.GetMessage() == msg {
			if r.GetTarget() != fnv1.Target_TARGET_COMPOSITE_AND_CLAIM {
				t.Errorf("warning %q is not shown on the claim", msg)
			}
			return
		}
	}
	t.Errorf("no warning %q in %v", msg, rsp.GetResults())
}

func assertCondition(t *testing.T, rsp *fnv1.RunFunctionResponse, typ string, status fnv1.Status, reason, msg string) {
	t.Helper()
	for _, c := range rsp.GetConditions() {
		if c.GetType() != typ {
			continue
		}
		got := []any{c.GetStatus(), c.GetReason(), c.GetMessage(), c.GetTarget()}
		want := []any{status, reason, msg, fnv1.Target_TARGET_COMPOSITE_AND_CLAIM}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("condition %s: -want, +got:\n%s", typ, diff)
		}
		return
	}
	t.Errorf("no condition %s", typ)
}

var _ = resource.MustStructJSON
