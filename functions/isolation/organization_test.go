package main

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/fncall"
	"github.com/kiso-dev/kiso/functions/internal/fntest"
	"github.com/kiso-dev/kiso/functions/internal/usage"
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
			assertCondition(t, rsp, fncall.TypeSpecValid, fnv1.Status_STATUS_CONDITION_FALSE, fncall.ReasonInvalidSpec, tc.want)
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
	assertCondition(t, rsp, fncall.TypeNamesAvailable, fnv1.Status_STATUS_CONDITION_FALSE, fncall.ReasonNameConflict, want)
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

// TestANewOrganizationIsTakenByItsLockAlone: two claims of one new organization applied together must not split
// it. Crossplane applies a response's objects in no fixed order and skips each one another XR controls, so a new
// organization's first render is its lock alone, not Ready; the XR renders its pools only once it composes the
// lock. An XR that already composes part of its organization never goes back to the lock alone, whatever is
// observed of the lock: Crossplane would delete the rest.
func TestANewOrganizationIsTakenByItsLockAlone(t *testing.T) {
	world := cluster{refNodeClass, refNodePool, namespace("acme-web"), namespace("acme-jobs")}

	first := runOnce(t, newRequest(t, input, xr(orgSpec), nil), world)
	fntest.AssertNoFatal(t, first)
	desired := first.GetDesired().GetResources()
	if len(desired) != 1 || desired[string(organizationLockResource)] == nil {
		names := make([]string, 0, len(desired))
		for name := range desired {
			names = append(names, name)
		}
		t.Fatalf("a new organization's first render composes %v; want its lock alone", names)
	}
	if r := desired[string(organizationLockResource)].GetReady(); r != fnv1.Ready_READY_FALSE {
		t.Errorf("the lock of an organization with no pool yet is %s; want READY_FALSE, so the claim is not Ready", r)
	}
	assertCondition(t, first, TypePoolsSettled, fnv1.Status_STATUS_CONDITION_FALSE, ReasonTaking,
		"taking organization acme (ConfigMap crossplane-system/kiso-organization.acme) before composing its pools, so that one claim alone holds it")

	// Once Crossplane has applied the lock, the organization is rendered whole.
	lock := map[string]string{string(organizationLockResource): fntest.ToJSON(t, fntest.AsMap(t, desired[string(organizationLockResource)].GetResource()))}
	second := runOnce(t, newRequest(t, input, xr(orgSpec), lock), world)
	fntest.AssertNoFatal(t, second)
	if _, taking := takingOrganization(second); taking {
		t.Fatal("the XR that composes the lock takes it again")
	}
	if _, ok := fntest.Desired(t, second)["nodepool-kiso-acme"]; !ok {
		t.Errorf("the XR that holds the organization renders no NodePool: %v", fntest.Desired(t, second))
	}

	// The other XR, whose lock Crossplane could not apply (the first holds it), is refused and composes nothing.
	held := fntest.AsMap(t, desired[string(organizationLockResource)].GetResource())
	held["metadata"].(map[string]any)["ownerReferences"] = []any{map[string]any{"apiVersion": "kiso.dev/v1alpha1", "kind": "XKarpenterIsolation", "name": "acme-first", "uid": "other-uid", "controller": true}}
	other := runOnce(t, newRequest(t, input, xr(orgSpec), nil), append(cluster{fntest.ToJSON(t, held)}, world...))
	assertCondition(t, other, fncall.TypeNamesAvailable, fnv1.Status_STATUS_CONDITION_FALSE, fncall.ReasonNameConflict,
		`spec.organization: Invalid value: "acme": organization is held by XKarpenterIsolation acme-first; one claim only holds an organization, whatever its isolation mode`)
	if n := len(other.GetDesired().GetResources()); n != 0 {
		t.Errorf("the refused XR renders %d resources; want none", n)
	}

	// An XR switching modes composes pools its new plan does not have: it renders the new ones beside them, never
	// the lock alone.
	shared := composedOrg(t, true)
	switching := runOnce(t, newRequest(t, input, xr(stackSpec), map[string]string{"nodepool-kiso-acme": shared["nodepool-kiso-acme"], "nodeclass-kiso-acme": shared["nodeclass-kiso-acme"]}),
		cluster{refNodeClass, refNodePool, namespace("acme-web"), namespace("acme-batch")})
	if _, taking := takingOrganization(switching); taking {
		t.Fatal("an XR switching modes went back to taking its organization, dropping its old pools")
	}
	if _, ok := fntest.Desired(t, switching)["nodepool-kiso-acme"]; !ok {
		t.Error("an XR switching modes dropped its shared pool before its new pools are Ready")
	}

	// An XR that composes its pools but does not observe its lock (deleted by hand) renders everything, lock
	// included: never the lock alone, which would have Crossplane delete its pools.
	observed := composedOrg(t, true)
	delete(observed, string(organizationLockResource))
	kept := runOnce(t, newRequest(t, input, xr(orgSpec), observed), world)
	fntest.AssertNoFatal(t, kept)
	if _, taking := takingOrganization(kept); taking {
		t.Fatal("an XR that composes pools went back to taking its organization")
	}
	got := fntest.Desired(t, kept)
	for name := range observed {
		if _, ok := got[name]; !ok {
			t.Errorf("an XR that lost its lock stops composing %s", name)
		}
	}
	if _, ok := got[string(organizationLockResource)]; !ok {
		t.Error("an XR that lost its lock does not compose it again")
	}
}
