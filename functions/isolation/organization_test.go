package main

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/fntest"
	"github.com/kiso-dev/kiso/functions/internal/usage"
	"github.com/kiso-dev/kiso/functions/internal/xrcondition"
)

// claimedXR is an XKarpenterIsolation that Crossplane created for a claim in
// namespace claimNamespace.
func claimedXR(spec, claimNamespace string) string {
	return strings.Replace(xr(spec), `"spec":{`, `"spec":{"claimRef":{"apiVersion":"kiso.dev/v1alpha1","kind":"KarpenterIsolation","namespace":"`+claimNamespace+`","name":"acme"},`, 1)
}

func TestAClaimClaimsOnlyTheOrganizationOfItsNamespace(t *testing.T) {
	world := func(claimNamespace string) cluster {
		return cluster{refNodeClass, refNodePool, namespace("acme-web"), namespace("acme-jobs"), claimNamespace}
	}
	cases := map[string]struct {
		reason    string
		namespace string
		want      string
	}{
		"Given": {
			reason:    "The platform labels the claim's namespace with the organization: the claim holds it.",
			namespace: namespaceOf("tenant-acme", "acme"),
		},
		"Unlabelled": {
			reason:    "A namespace the platform gave no organization claims none.",
			namespace: namespaceOf("tenant-acme", ""),
			want: `spec.organization: Forbidden: the claim's namespace tenant-acme is not organization "acme"'s: ` +
				`a claim may claim only the organization the platform labels its namespace with (kiso.dev/organization=acme)`,
		},
		"AnotherOrganizations": {
			reason:    "A tenant of mallory may create claims in its namespace, never one for acme.",
			namespace: namespaceOf("tenant-acme", "mallory"),
			want: `spec.organization: Forbidden: the claim's namespace tenant-acme is not organization "acme"'s: ` +
				`a claim may claim only the organization the platform labels its namespace with (kiso.dev/organization=acme)`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			observed := composedOrg(t, false)
			rsp := run(t, newRequest(t, input, claimedXR(orgSpec, "tenant-acme"), observed), world(tc.namespace))
			if tc.want == "" {
				fntest.AssertNoFatal(t, rsp)
				got := fntest.Desired(t, rsp)["organization"]
				if c := fntest.Dig(got, "data", "claim"); c != "tenant-acme/acme" {
					t.Errorf("%s\nthe organization's ConfigMap names claim %v, want tenant-acme/acme", tc.reason, c)
				}
				return
			}
			assertFatal(t, rsp, tc.want)
			assertCondition(t, rsp, xrcondition.TypeSpecValid, fnv1.Status_STATUS_CONDITION_FALSE, xrcondition.ReasonInvalidSpec, tc.want)
			fntest.AssertChangesNothing(t, rsp, tc.want, observed)
		})
	}
}

func TestOneXRHoldsAnOrganizationWhateverItsMode(t *testing.T) {
	// Another XR, in organization isolation, holds acme: its pool names are not a stack-mode XR's.
	held := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"kiso-organization.acme","namespace":"crossplane-system",
		"ownerReferences":[{"apiVersion":"kiso.dev/v1alpha1","kind":"XKarpenterIsolation","name":"acme-first","uid":"other-uid","controller":true}]},
		"data":{"organization":"acme","claim":"acme/acme"}}`
	rsp := run(t, newRequest(t, input, xr(stackSpec), nil), cluster{refNodeClass, refNodePool, namespace("acme-web"), namespace("acme-batch"), held})
	want := `spec.organization: Invalid value: "acme": organization is held by XKarpenterIsolation acme-first (claim acme/acme); one claim only holds an organization, whatever its isolation mode`
	assertCondition(t, rsp, xrcondition.TypeNamesAvailable, fnv1.Status_STATUS_CONDITION_FALSE, xrcondition.ReasonNameConflict, want)
	if n := len(rsp.GetDesired().GetResources()); n != 0 {
		t.Errorf("rendered %d resources for an organization another XR holds; want none", n)
	}
}

func TestPlacementIsEnforcedOnlyOnceEveryGrantIsThere(t *testing.T) {
	world := cluster{refNodeClass, refNodePool, clusterPolicy, namespace("acme-web"), namespace("batch")}
	spec := placementSpec(v1alpha1.IsolationStack, nil)
	// The first render composes the Roles; none is there yet.
	first := run(t, newRequest(t, input, xr(spec), nil), world)
	assertCondition(t, first, TypePlacementEnforced, fnv1.Status_STATUS_CONDITION_FALSE, ReasonGrantsPending,
		"waiting for Crossplane to compose the Role kiso-placement in namespaces acme-web, batch: until it is there, admission refuses every pod in them")
	// Once they are composed, the policies hold.
	observed := map[string]string{}
	for name, o := range fntest.Desired(t, first) {
		observed[name] = fntest.ToJSON(t, o)
	}
	second := run(t, newRequest(t, input, xr(spec), observed), world)
	assertCondition(t, second, TypePlacementEnforced, fnv1.Status_STATUS_CONDITION_TRUE, ReasonEnforced,
		`the admission policies of XKarpenterCluster "prod" hold the organization's pods to its pools and other pods off its nodes`)
	// A tenant deletes a Role: the claim says so until Crossplane composes it again, and the Role is still desired.
	delete(observed, "placement-role-batch")
	third := run(t, newRequest(t, input, xr(spec), observed), world)
	assertCondition(t, third, TypePlacementEnforced, fnv1.Status_STATUS_CONDITION_FALSE, ReasonGrantsPending,
		"waiting for Crossplane to compose the Role kiso-placement in namespaces batch: until it is there, admission refuses every pod in them")
	if _, ok := fntest.Desired(t, third)["placement-role-batch"]; !ok {
		t.Errorf("a Role a tenant deleted is no longer desired: kiso would withdraw the grant")
	}
	// A tenant deletes a ConfigMap: nothing of the grant is withdrawn.
	delete(observed, "placement-configmap-batch")
	fourth := fntest.Desired(t, run(t, newRequest(t, input, xr(spec), observed), world))
	for _, name := range []string{"placement-role-batch", "placement-configmap-batch", "placement-role-acme-web"} {
		if _, ok := fourth[name]; !ok {
			t.Errorf("%s is not desired after a tenant deleted the ConfigMap of batch", name)
		}
	}
}

func TestANamespaceTakenAwayLosesItsGrantWhilePoolsWait(t *testing.T) {
	// Composed with acme-web and batch given; the pools are not Ready yet (nothing marks them), so a
	// transition would hold on to what is retired.
	world := cluster{refNodeClass, refNodePool, clusterPolicy, namespace("acme-web"), namespace("batch")}
	spec := placementSpec(v1alpha1.IsolationStack, nil)
	observed := map[string]string{}
	for name, o := range fntest.Desired(t, run(t, newRequest(t, input, xr(spec), nil), world)) {
		observed[name] = fntest.ToJSON(t, o)
	}
	// The spec drops stack jobs while its new pools wait, and the platform gives batch to globex.
	dropped := strings.Replace(spec, `,{"name":"jobs","namespaces":["batch","reindex"]}`, "", 1)
	relabelled := cluster{refNodeClass, refNodePool, clusterPolicy, namespace("acme-web"), namespaceOf("batch", "globex")}
	rsp := run(t, newRequest(t, input, xr(dropped), observed), relabelled)
	fntest.AssertNoFatal(t, rsp)
	got := fntest.Desired(t, rsp)
	if _, kept := got["nodepool-kiso-acme.jobs"]; !kept {
		t.Errorf("make before break: the retired pool kiso-acme.jobs is not kept while the new pools wait")
	}
	for _, name := range []string{"placement-role-batch", "placement-configmap-batch"} {
		if _, kept := got[name]; kept {
			t.Errorf("%s is kept in a namespace the platform gave another organization", name)
		}
	}

	// The tenant admin labelled its ConfigMap as Crossplane labels what a Usage names: the label keeps nothing
	// in a namespace.
	cm := &unstructured.Unstructured{Object: fntest.JSONMap(t, observed["placement-configmap-batch"])}
	cm.SetLabels(map[string]string{usage.InUseLabel: "true"})
	observed["placement-configmap-batch"] = fntest.ToJSON(t, cm.Object)
	if _, kept := fntest.Desired(t, run(t, newRequest(t, input, xr(dropped), observed), relabelled))["placement-configmap-batch"]; kept {
		t.Error("a tenant keeps its ConfigMap in a namespace the platform gave another organization by labelling it in use")
	}
}
