package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/fnstate"
	"github.com/kiso-dev/kiso/functions/internal/fntest"
)

// What the cluster's admission policies do with these grants (which pods are
// admitted, refused or injected) is proven against a real kube-apiserver in
// test/e2e/admission_test.go; these tests pin what the function renders.

// clusterPolicy is the cluster's placement policy as the cluster function
// composes it.
const clusterPolicy = `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicy","metadata":{"name":"kiso-placement",
	"annotations":{"kiso.dev/cluster":"prod","kiso.dev/key-domain":"kiso.dev","kiso.dev/platform-namespaces":"crossplane-system,karpenter,kube-system",
	"kiso.dev/inject-api-version":"admissionregistration.k8s.io/v1beta1"}}}`

func placementSpec(isolation v1alpha1.IsolationMode, placement *v1alpha1.Placement) string {
	spec := `{"organization":"acme","isolation":"` + string(isolation) + `","stacks":[{"name":"web"},{"name":"jobs","namespaces":["batch","reindex"]}],` +
		`"nodeClassRef":{"name":"default"},"nodePoolRef":{"name":"default"}`
	switch {
	case placement == nil:
	case placement.Enforce != nil && !*placement.Enforce:
		spec += `,"placement":{"enforce":false}`
	case placement.Mode == v1alpha1.PlacementWarn:
		spec += `,"placement":{"mode":"Warn"}`
	case placement.Inject:
		spec += `,"placement":{"inject":true}`
	}
	return spec + "}"
}

// composeTwice renders, feeds the result back as composed, and renders
// again.
func composeTwice(t *testing.T, spec string, world cluster) map[string]map[string]any {
	t.Helper()
	observed := map[string]string{}
	for name, o := range fntest.Desired(t, run(t, newRequest(t, input, xr(spec), nil), world)) {
		observed[name] = fntest.ToJSON(t, o)
	}
	rsp := run(t, newRequest(t, input, xr(spec), observed), world)
	fntest.AssertNoFatal(t, rsp)
	return fntest.Desired(t, rsp)
}

func TestGivenNamespaceGrantsItsPlacement(t *testing.T) {
	world := cluster{refNodeClass, refNodePool, clusterPolicy, namespace("acme-web"), namespace("batch")}
	// A namespace the platform gives the organization is granted at once, beside its ConfigMap.
	first := fntest.Desired(t, run(t, newRequest(t, input, xr(placementSpec(v1alpha1.IsolationStack, nil)), nil), world))
	for _, name := range []string{"placement-role-acme-web", "placement-configmap-acme-web"} {
		if _, ok := first[name]; !ok {
			t.Errorf("%s is not rendered for a namespace the platform gives the organization", name)
		}
	}

	got := composeTwice(t, placementSpec(v1alpha1.IsolationStack, nil), world)
	wantRole := fntest.JSONMap(t, `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role",
		"metadata":{"name":"kiso-placement","namespace":"batch","annotations":{"kiso.dev/pool":"kiso-acme.jobs"},
			"labels":{"app.kubernetes.io/managed-by":"kiso","kiso.dev/organization":"acme","kiso.dev/stack":"jobs"}},
		"rules":[
			{"apiGroups":["placement.kiso.dev"],"resources":["tolerations"],"verbs":["use"],"resourceNames":["acme","acme.jobs"]},
			{"apiGroups":["placement.kiso.dev"],"resources":["pools"],"verbs":["select"],"resourceNames":["acme.jobs"]}]}`)
	if diff := cmp.Diff(wantRole, got["placement-role-batch"]); diff != "" {
		t.Errorf("Role batch/kiso-placement: -want, +got:\n%s", diff)
	}
	// The policies read the Role itself; nothing binds it.
	for name, o := range got {
		if o["kind"] == "RoleBinding" {
			t.Errorf("%s: a RoleBinding is composed, and nothing reads it", name)
		}
	}
	// reindex does not exist: nothing is granted there.
	if _, ok := got["placement-role-reindex"]; ok {
		t.Errorf("a namespace that does not exist is granted")
	}
}

func TestGrantsFollowThePlacementSpec(t *testing.T) {
	rules := func(selectName, injectName string, warnName ...string) []any {
		out := []any{map[string]any{"apiGroups": []any{"placement.kiso.dev"}, "resources": []any{"tolerations"}, "verbs": []any{"use"}, "resourceNames": []any{"acme", "acme.web"}}}
		if selectName != "" {
			out = append(out, map[string]any{"apiGroups": []any{"placement.kiso.dev"}, "resources": []any{"pools"}, "verbs": []any{"select"}, "resourceNames": []any{selectName}})
		}
		for _, w := range warnName {
			out = append(out, map[string]any{"apiGroups": []any{"placement.kiso.dev"}, "resources": []any{"pools"}, "verbs": []any{"warn"}, "resourceNames": []any{w}})
		}
		if injectName != "" {
			out = append(out, map[string]any{"apiGroups": []any{"placement.kiso.dev"}, "resources": []any{"pools"}, "verbs": []any{"inject"}, "resourceNames": []any{injectName}})
		}
		return out
	}
	cases := map[string]struct {
		reason string
		spec   string
		want   []any
	}{
		"StackIsolation": {
			reason: "In stack isolation pods select their stack's pool.",
			spec:   placementSpec(v1alpha1.IsolationStack, nil),
			want:   rules("acme.web", ""),
		},
		"OrganizationIsolation": {
			reason: "In organization isolation pods select the organization's pool; the stack's taint grant stays, so a mode switch changes no toleration grant.",
			spec:   placementSpec(v1alpha1.IsolationOrganization, nil),
			want:   rules("acme", ""),
		},
		"Inject": {
			reason: "inject: true names the pool admission injects.",
			spec:   placementSpec(v1alpha1.IsolationStack, &v1alpha1.Placement{Inject: true}),
			want:   rules("acme.web", "acme.web"),
		},
		"Warn": {
			reason: "mode: Warn lets the pods run on any pool (select *) and names the pool Enforce would require, which the warn policy warns about.",
			spec:   placementSpec(v1alpha1.IsolationStack, &v1alpha1.Placement{Mode: v1alpha1.PlacementWarn}),
			want:   rules("*", "", "acme.web"),
		},
		"EnforceOff": {
			reason: "enforce: false requires no pool (select *: a Role that selects nothing was tampered with), and still lets the namespace's pods tolerate their own taints.",
			spec:   placementSpec(v1alpha1.IsolationStack, &v1alpha1.Placement{Enforce: new(bool)}),
			want:   rules("*", ""),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := composeTwice(t, tc.spec, cluster{refNodeClass, refNodePool, clusterPolicy, namespace("acme-web")})
			if diff := cmp.Diff(tc.want, got["placement-role-acme-web"]["rules"]); diff != "" {
				t.Errorf("%s\nRole acme-web/kiso-placement rules: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestRetiredPlacementIsGrantedWhileItsPoolIsKept(t *testing.T) {
	world := cluster{refNodeClass, refNodePool, clusterPolicy, namespace("acme-web")}
	before := composeTwice(t, placementSpec(v1alpha1.IsolationOrganization, nil), world)
	observed := make(map[string]string, len(before))
	for name, o := range before {
		observed[name] = fntest.ToJSON(t, o)
	}
	// Switch to stack isolation: the new pools are not Ready, the old one is kept.
	rsp := run(t, newRequest(t, input, xr(placementSpec(v1alpha1.IsolationStack, nil)), observed), world)
	fntest.AssertNoFatal(t, rsp)
	got := fntest.Desired(t, rsp)
	if _, kept := got["nodepool-kiso-acme"]; !kept {
		t.Fatalf("the retired pool is not kept; the test does not cover a transition")
	}
	want := []any{"acme.web", "acme"}
	if diff := cmp.Diff(want, fntest.Dig(got["placement-role-acme-web"], "rules").([]any)[1].(map[string]any)["resourceNames"]); diff != "" {
		t.Errorf("pools selectable while the old pool is kept (the new one first): -want, +got:\n%s", diff)
	}

	// Once the new pools are Ready, only the new placement is granted.
	settled := map[string]string{}
	for name, o := range got {
		if o["kind"] == "NodePool" || o["kind"] == "EC2NodeClass" {
			o["status"] = readyStatus()
		}
		settled[name] = fntest.ToJSON(t, o)
	}
	after := fntest.Desired(t, run(t, newRequest(t, input, xr(placementSpec(v1alpha1.IsolationStack, nil)), settled), world))
	if diff := cmp.Diff([]any{"acme.web"}, fntest.Dig(after["placement-role-acme-web"], "rules").([]any)[1].(map[string]any)["resourceNames"]); diff != "" {
		t.Errorf("pools selectable once the new pools are Ready: -want, +got:\n%s", diff)
	}
}

func TestKeepRetiredGrantsNeverKeepsInjection(t *testing.T) {
	role := func(rules string) map[string]any {
		return fntest.JSONMap(t, `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"kiso-placement","namespace":"a"},"rules":`+rules+`}`)
	}
	oldRules := `[{"apiGroups":["placement.kiso.dev"],"resources":["tolerations"],"verbs":["use"],"resourceNames":["acme","acme.web"]},
		{"apiGroups":["placement.kiso.dev"],"resources":["pools"],"verbs":["select"],"resourceNames":["acme.web"]},
		{"apiGroups":["placement.kiso.dev"],"resources":["pools"],"verbs":["inject"],"resourceNames":["acme.web"]}]`
	newRules := `[{"apiGroups":["placement.kiso.dev"],"resources":["tolerations"],"verbs":["use"],"resourceNames":["acme","acme.web"]},
		{"apiGroups":["placement.kiso.dev"],"resources":["pools"],"verbs":["select"],"resourceNames":["acme"]}]`
	desired := &resource.DesiredComposed{Resource: &composed.Unstructured{Unstructured: unstructured.Unstructured{Object: role(newRules)}}}
	observed := resource.ObservedComposed{Resource: &composed.Unstructured{Unstructured: unstructured.Unstructured{Object: role(oldRules)}}}
	rendered := map[resource.Name]*resource.DesiredComposed{"placement-role-a": desired}
	keepRetiredGrants(rendered, fnstate.ObservedOf(map[resource.Name]resource.ObservedComposed{"placement-role-a": observed}))
	want := role(`[{"apiGroups":["placement.kiso.dev"],"resources":["tolerations"],"verbs":["use"],"resourceNames":["acme","acme.web"]},
		{"apiGroups":["placement.kiso.dev"],"resources":["pools"],"verbs":["select"],"resourceNames":["acme","acme.web"]}]`)
	if diff := cmp.Diff(want["rules"], rendered["placement-role-a"].Resource.Object["rules"]); diff != "" {
		t.Errorf("merged rules: -want, +got:\n%s", diff)
	}
}

func TestPlacementConditionsSayWhatIsEnforced(t *testing.T) {
	mismatch := strings.Replace(clusterPolicy, `"kiso.dev/key-domain":"kiso.dev"`, `"kiso.dev/key-domain":"formance.com"`, 1)
	auditing := strings.Replace(clusterPolicy, `"kiso.dev/cluster":"prod",`, `"kiso.dev/cluster":"prod","kiso.dev/placement-mode":"Audit",`, 1)
	noInjection := strings.Replace(clusterPolicy, `,
	"kiso.dev/inject-api-version":"admissionregistration.k8s.io/v1beta1"`, ``, 1)
	cases := map[string]struct {
		policy string
		inject bool
		warn   bool
		want   map[string]string // type -> status/reason: message
	}{
		"NoClusterPolicy": {
			want: map[string]string{TypePlacementEnforced: "False/NoPlacementPolicy: no XKarpenterCluster composes the admission policy kiso-placement in this cluster: nothing keeps other pods off this organization's nodes, nor its pods on its pools"},
		},
		"Enforced": {
			policy: clusterPolicy, inject: true,
			want: map[string]string{
				TypePlacementEnforced: `True/Enforced: the admission policies of XKarpenterCluster "prod" hold the organization's pods to its pools and other pods off its nodes`,
				TypePlacementInjected: "True/Injected: MutatingAdmissionPolicy kiso-placement-inject (admissionregistration.k8s.io/v1beta1) adds the pools' nodeSelector and tolerations where a pod lacks them",
			},
		},
		"WarnOnly": {
			policy: clusterPolicy, warn: true,
			want: map[string]string{
				TypePlacementEnforced: `False/WarnOnly: spec.placement.mode is Warn: the admission policies of XKarpenterCluster "prod" admit a pod of the organization's namespaces ` +
					`that does not select its pool, with the refusal Enforce would give as a warning and an audit annotation (policy kiso-placement-warn); other pods are still kept off its nodes` +
					`; every pod in its namespaces selects a pool of the organization: switching to Enforce refuses none of them`,
			},
		},
		"KeyDomainMismatch": {
			policy: mismatch,
			want:   map[string]string{TypePlacementEnforced: `False/KeyDomainMismatch: the admission policy kiso-placement of XKarpenterCluster "prod" checks keys of domain formance.com, this organization's nodes are tainted kiso.dev/organization: set the same keyDomain in both functions' inputs`},
		},
		// An organization of a cluster that audits outsiders says nothing keeps their pods off its nodes; what the
		// cluster injects still applies.
		"ClusterAudits": {
			policy: auditing, inject: true,
			want: map[string]string{
				TypePlacementEnforced: `False/ClusterAudits: XKarpenterCluster "prod" audits (spec.placement.mode Audit): a pod of a namespace neither an organization's nor the platform's ` +
					`that could run on this organization's nodes is admitted with a warning, so nothing keeps it off them; this organization's own namespaces are enforced as its spec says. ` +
					`The cluster's status.placementAudit names what Enforce would refuse`,
				TypePlacementInjected: "True/Injected: MutatingAdmissionPolicy kiso-placement-inject (admissionregistration.k8s.io/v1beta1) adds the pools' nodeSelector and tolerations where a pod lacks them",
			},
		},
		"InjectionUnavailable": {
			policy: noInjection, inject: true,
			want: map[string]string{
				TypePlacementEnforced: `True/Enforced: the admission policies of XKarpenterCluster "prod" hold the organization's pods to its pools and other pods off its nodes`,
				TypePlacementInjected: `False/InjectionUnavailable: spec.placement.inject: XKarpenterCluster "prod" says the apiserver serves no MutatingAdmissionPolicy (its function input sets no mutatingAdmissionPolicy), so nothing is injected: ` +
					`pods must carry the nodeSelector and tolerations in status.stacks. Kubernetes 1.36+ serves admissionregistration.k8s.io/v1; 1.34 and 1.35 serve v1beta1 with --feature-gates=MutatingAdmissionPolicy=true and --runtime-config=admissionregistration.k8s.io/v1beta1=true`,
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			world := cluster{refNodeClass, refNodePool}
			if tc.policy != "" {
				world = append(world, tc.policy)
			}
			var p *v1alpha1.Placement
			if tc.inject {
				p = &v1alpha1.Placement{Inject: true}
			}
			if tc.warn {
				p = &v1alpha1.Placement{Mode: v1alpha1.PlacementWarn}
			}
			rsp := run(t, newRequest(t, input, xr(placementSpec(v1alpha1.IsolationStack, p)), nil), world)
			fntest.AssertNoFatal(t, rsp)
			got := map[string]string{}
			for _, c := range rsp.GetConditions() {
				if c.GetType() == TypePlacementEnforced || c.GetType() == TypePlacementInjected {
					status := map[fnv1.Status]string{fnv1.Status_STATUS_CONDITION_TRUE: "True", fnv1.Status_STATUS_CONDITION_FALSE: "False"}[c.GetStatus()]
					got[c.GetType()] = status + "/" + c.GetReason() + ": " + c.GetMessage()
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("placement conditions: -want, +got:\n%s", diff)
			}
		})
	}
}
