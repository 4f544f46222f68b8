package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/fncall"
	"github.com/kiso-dev/kiso/functions/internal/fntest"
)

func TestEachNamespaceTellsItsPodsWhatToCarry(t *testing.T) {
	rsp := run(t, newRequest(t, input, xr(stackSpec), nil), cluster{refNodeClass, refNodePool, namespace("acme-web"), namespace("acme-batch")})
	fntest.AssertNoFatal(t, rsp)
	want := map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "kiso-placement", "namespace": "acme-batch", "labels": map[string]any{
			"app.kubernetes.io/managed-by": "kiso", "kiso.dev/organization": "acme", "kiso.dev/stack": "jobs",
		}},
		"data": map[string]any{
			"organization": "acme", "stack": "jobs", "pool": "kiso-acme.jobs",
			"nodeSelector": `{"node-restriction.kubernetes.io/kiso.dev.organization":"acme","node-restriction.kubernetes.io/kiso.dev.stack":"jobs"}`,
			"tolerations": `[{"key":"kiso.dev/organization","operator":"Equal","value":"acme","effect":"NoSchedule"},` +
				`{"key":"kiso.dev/stack","operator":"Equal","value":"jobs","effect":"NoSchedule"}]`,
		},
	}
	if diff := cmp.Diff(want, fntest.Desired(t, rsp)["placement-configmap-acme-batch"]); diff != "" {
		t.Errorf("ConfigMap in acme-batch: -want, +got:\n%s", diff)
	}
}

func TestNamespaceNotGivenYetHoldsUpNothingElse(t *testing.T) {
	// acme-batch does not exist yet, and batch is another organization's: neither gets anything; the pools do not wait.
	for name, world := range map[string]cluster{
		"NotCreatedYet": {refNodeClass, refNodePool, namespace("acme-web")},
		// globex's grant in its namespace is none of acme's business: no conflict, nothing fatal.
		"AnotherOrganizations": {refNodeClass, refNodePool, namespace("acme-web"), namespaceOf("acme-batch", "globex"),
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"kiso-placement","namespace":"acme-batch","labels":{"kiso.dev/organization":"globex"},
				"ownerReferences":[{"apiVersion":"kiso.dev/v1alpha1","kind":"XKarpenterIsolation","name":"globex-x1","uid":"globex-uid","controller":true}]}}`,
			`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"kiso-placement","namespace":"acme-batch","labels":{"kiso.dev/organization":"globex"},
				"ownerReferences":[{"apiVersion":"kiso.dev/v1alpha1","kind":"XKarpenterIsolation","name":"globex-x1","uid":"globex-uid","controller":true}]}}`},
		"NotLabelled": {refNodeClass, refNodePool, namespace("acme-web"), namespaceOf("acme-batch", "")},
	} {
		t.Run(name, func(t *testing.T) {
			rsp := run(t, newRequest(t, input, xr(stackSpec), nil), world)
			fntest.AssertNoFatal(t, rsp)
			desired := fntest.Desired(t, rsp)
			for _, name := range []string{"placement-configmap-acme-web", "placement-role-acme-web", "nodepool-kiso-acme.web", "nodepool-kiso-acme.jobs"} {
				if _, ok := desired[name]; !ok {
					t.Errorf("%s not rendered", name)
				}
			}
			for _, name := range []string{"placement-configmap-acme-batch", "placement-role-acme-batch"} {
				if _, ok := desired[name]; ok {
					t.Errorf("rendered %s into namespace acme-batch, which the platform does not give organization acme", name)
				}
			}
			assertCondition(t, rsp, TypeNamespacesAssigned, fnv1.Status_STATUS_CONDITION_FALSE, ReasonNotAssigned,
				"namespaces acme-batch are not labelled kiso.dev/organization=acme by the platform (or do not exist yet): their pods get no grant to the organization's nodes until the platform labels them")
			// One selector asks for every namespace of the organization, whatever their number.
			sel := rsp.GetRequirements().GetResources()[requireOrganizationNamespaces]
			if diff := cmp.Diff(map[string]string{"kiso.dev/organization": "acme"}, sel.GetMatchLabels().GetLabels()); diff != "" {
				t.Errorf("namespaces asked for by label: -want, +got:\n%s", diff)
			}
		})
	}
}

func TestANamespaceObjectHeldByAnotherIsReportedAndTheRestComposed(t *testing.T) {
	heldBy := func(kind, labels string) string {
		apiVersion := "v1"
		if kind == "Role" {
			apiVersion = "rbac.authorization.k8s.io/v1"
		}
		return `{"apiVersion":"` + apiVersion + `","kind":"` + kind + `","metadata":{"name":"kiso-placement","namespace":"acme-batch",` + labels + `}}`
	}
	cases := map[string]struct {
		reason string
		holder string
		held   string
		want   string
	}{
		"AnotherOrganization": {
			reason: "The organization the platform gave the namespace before holds it until its XR lets go: the message says which.",
			holder: heldBy("ConfigMap", `"labels":{"kiso.dev/organization":"globex","kiso.dev/stack":"batch"},
				"ownerReferences":[{"apiVersion":"kiso.dev/v1alpha1","kind":"XKarpenterIsolation","name":"globex-7fk2q","uid":"globex-uid","controller":true}]`),
			held: "placement-configmap-acme-batch",
			want: `ConfigMap acme-batch/kiso-placement is held by organization "globex" (XKarpenterIsolation globex-7fk2q), not composed by this organization: kiso composes it once the name is free`,
		},
		"ATenantsDeployment": {
			reason: "A tenant makes its Deployment the controller of kiso's ConfigMap (its labels kept): the holder is the Deployment, and the organization is not frozen by it.",
			holder: heldBy("ConfigMap", `"labels":{"app.kubernetes.io/managed-by":"kiso","kiso.dev/organization":"acme","kiso.dev/stack":"batch"},
				"ownerReferences":[{"apiVersion":"apps/v1","kind":"Deployment","name":"rogue","uid":"rogue-uid","controller":true}]`),
			held: "placement-configmap-acme-batch",
			want: `ConfigMap acme-batch/kiso-placement is held by Deployment rogue, not composed by this organization: kiso composes it once the name is free`,
		},
		"ATenantsRole": {
			reason: "A Role a tenant admin created in place of kiso's is never adopted, and the grant stays missing: the namespace's pods are refused.",
			holder: heldBy("Role", `"labels":{"app":"legacy"}`),
			held:   "placement-role-acme-batch",
			want: `Role acme-batch/kiso-placement is held by an object without a controller, not composed by this organization: kiso composes it once the name is free; ` +
				`until then the namespace's pods are refused (the policies trust only the Role this organization composes)`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := run(t, newRequest(t, input, xr(stackSpec), nil), cluster{refNodeClass, refNodePool, namespace("acme-web"), namespace("acme-batch"), tc.holder})
			fntest.AssertNoFatal(t, rsp)
			assertCondition(t, rsp, fncall.TypeNamesAvailable, fnv1.Status_STATUS_CONDITION_FALSE, ReasonNamespaceObjectsHeld, tc.want)
			desired := fntest.Desired(t, rsp)
			if _, ok := desired[tc.held]; ok {
				t.Errorf("%s\nrendered %s over the object that holds its name", tc.reason, tc.held)
			}
			for _, name := range []string{"organization", "nodepool-kiso-acme.web", "nodepool-kiso-acme.jobs", "placement-configmap-acme-web", "placement-role-acme-web",
				"placement-configmap-acme-batch", "placement-role-acme-batch"} {
				if _, ok := desired[name]; !ok && name != tc.held {
					t.Errorf("%s\n%s not rendered: a held name in one namespace stopped the rest of the organization", tc.reason, name)
				}
			}
			var warned bool
			for _, r := range rsp.GetResults() {
				warned = warned || r.GetSeverity() == fnv1.Severity_SEVERITY_WARNING && r.GetMessage() == tc.want
			}
			if !warned {
				t.Errorf("%s\nno warning event says %q", tc.reason, tc.want)
			}
		})
	}
}

func TestValidateSpecNamespaces(t *testing.T) {
	testValidateSpec(t, map[string]specCase{
		"TooManyNamespacesInStackIsolation": {
			reason: "Each namespace has a ConfigMap and entries in the admission policies; with a pool per stack, 600 fit Crossplane's gRPC message.",
			mutate: func(s *v1alpha1.XKarpenterIsolationSpec) {
				s.Stacks = append(s.Stacks, stacksWithNamespaces(7, 100)...)
			},
			want: []string{"spec.stacks: Forbidden: the stacks list 702 namespaces; an organization serves at most 600 in stack isolation"},
		},
		"TooManyNamespacesInOrganizationIsolation": {
			reason: "With one pool, 1000 namespaces fit Crossplane's gRPC message.",
			mutate: func(s *v1alpha1.XKarpenterIsolationSpec) {
				s.Isolation = v1alpha1.IsolationOrganization
				s.Stacks = append(s.Stacks, stacksWithNamespaces(11, 100)...)
			},
			want: []string{"spec.stacks: Forbidden: the stacks list 1102 namespaces; an organization serves at most 1000 in organization isolation"},
		},
		"SystemNamespace": {
			reason: "Kubernetes reserves the kube- prefix for its own namespaces; a tenant's policies must never bind their pods.",
			mutate: func(s *v1alpha1.XKarpenterIsolationSpec) {
				s.Stacks[0].Namespaces = []string{"acme-web", "kube-system"}
			},
			want: []string{`spec.stacks[0].namespaces[1]: Invalid value: "kube-system": the kube- prefix is reserved for Kubernetes system namespaces, whose pods must never depend on a tenant's pool`},
		},
		"NamespaceInTwoStacks": {
			reason: "A namespace's pods can land on one stack's pool only.",
			mutate: func(s *v1alpha1.XKarpenterIsolationSpec) {
				s.Stacks[0].Namespaces = []string{"shared"}
				s.Stacks[1].Namespaces = []string{"shared"}
			},
			want: []string{`spec.stacks[1].namespaces[0]: Invalid value: "shared": namespace already belongs to stack "web"; a namespace's pods can run in one stack's pool only`},
		},
		"DefaultNamespaceTooLong": {
			reason: "A valid organization and stack can still make a default namespace longer than 63 characters.",
			mutate: func(s *v1alpha1.XKarpenterIsolationSpec) { s.Organization = strings.Repeat("a", 60) },
			want: []string{
				`spec.stacks[0].namespaces: Invalid value: "` + strings.Repeat("a", 60) + `-web": the default namespace <organization>-<name> is not a valid namespace (must be no more than 63 characters); list the stack's namespaces`,
				`spec.stacks[1].namespaces: Invalid value: "` + strings.Repeat("a", 60) + `-jobs": the default namespace <organization>-<name> is not a valid namespace (must be no more than 63 characters); list the stack's namespaces`,
			},
		},
	})
}

// stacksWithNamespaces returns n stacks with perStack namespaces each.
func stacksWithNamespaces(n, perStack int) []v1alpha1.Stack {
	out := make([]v1alpha1.Stack, 0, n)
	for i := range n {
		st := v1alpha1.Stack{Name: fmt.Sprintf("s%d", i)}
		for j := range perStack {
			st.Namespaces = append(st.Namespaces, fmt.Sprintf("ns-%d-%d", i, j))
		}
		out = append(out, st)
	}
	return out
}

func TestPlatformNamespacesAreRefused(t *testing.T) {
	// Only "true" exempts; the platform labels agents both acme's and exempt, which kiso refuses to serve.
	exempt := `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"agents","labels":{"kiso.dev/organization":"acme","kiso.dev/placement-exempt":"true"}}}`
	notExempt := `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"acme-web","labels":{"kiso.dev/organization":"acme","kiso.dev/placement-exempt":"false"}}}`
	spec := `{"organization":"acme","stacks":[{"name":"web","namespaces":["default","crossplane-system","agents","acme-web"]}],"nodeClassRef":{"name":"default"},"nodePoolRef":{"name":"default"}}`
	rsp := run(t, newRequest(t, input, xr(spec), nil), cluster{refNodeClass, refNodePool, clusterPolicy, exempt, notExempt, namespace("default"), namespace("crossplane-system")})
	assertFatal(t, rsp, `[spec.stacks[0].namespaces[0]: Invalid value: "default": the default namespace is every user's: no organization may hold it, `+
		`spec.stacks[0].namespaces[1]: Invalid value: "crossplane-system": a platform namespace of XKarpenterCluster "prod" (crossplane-system, karpenter, kube-system): its pods are exempt from placement, `+
		`spec.stacks[0].namespaces[2]: Invalid value: "agents": the platform labels this namespace kiso.dev/placement-exempt: its pods are exempt from placement]`)
}

func TestANamespaceGivenButListedByNoStackIsNamed(t *testing.T) {
	claimed := strings.Replace(stackSpec, `"organization"`, `"claimRef":{"apiVersion":"kiso.dev/v1alpha1","kind":"KarpenterIsolation","namespace":"acme-claims","name":"acme"},"organization"`, 1)
	cases := map[string]struct {
		reason string
		spec   string
		world  cluster
		status fnv1.Status
		want   string
	}{
		"EveryGivenNamespaceListed": {
			reason: "The platform gives exactly the namespaces the stacks list.",
			world:  cluster{refNodeClass, refNodePool, namespace("acme-web"), namespace("acme-batch")},
			status: fnv1.Status_STATUS_CONDITION_TRUE,
		},
		"TheClaimsOwnAndAnother": {
			reason: "The claim's own namespace, given so the claim may claim acme, and one more the platform labelled: no stack lists them, so no Role grants their pods anything. " +
				"A namespace the platform also exempts admits its pods without a grant, and another organization's is none of acme's business: neither is named.",
			world: cluster{refNodeClass, refNodePool, namespace("acme-web"), namespace("acme-batch"), namespace("acme-claims"), namespace("acme-tools"),
				namespaceOf("globex-web", "globex"),
				`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"acme-agents","labels":{"kiso.dev/organization":"acme","kiso.dev/placement-exempt":"true"}}}`},
			status: fnv1.Status_STATUS_CONDITION_FALSE,
			want: "namespaces acme-claims, acme-tools are labelled kiso.dev/organization=acme by the platform but no stack lists them: they get no grant to the organization's nodes, " +
				"so admission refuses every pod in them, in Warn mode too; list them under a stack, or the platform removes the label",
		},
		"TheClaimsOwnAndAnotherOfAClaim": {
			reason: "Another namespace no stack lists beside the claim's own: both named, False.",
			spec:   claimed,
			world:  cluster{refNodeClass, refNodePool, namespace("acme-web"), namespace("acme-batch"), namespace("acme-claims"), namespace("acme-tools")},
			status: fnv1.Status_STATUS_CONDITION_FALSE,
			want: "namespaces acme-claims, acme-tools are labelled kiso.dev/organization=acme by the platform but no stack lists them: they get no grant to the organization's nodes, " +
				"so admission refuses every pod in them, in Warn mode too; list them under a stack, or the platform removes the label",
		},
		"OnlyTheClaimsOwn": {
			reason: "The claim's own namespace alone is unlisted: it holds the claim, which is what the platform gave it for; named, True.",
			spec:   claimed,
			world:  cluster{refNodeClass, refNodePool, namespace("acme-web"), namespace("acme-batch"), namespace("acme-claims")},
			status: fnv1.Status_STATUS_CONDITION_TRUE,
			want: "every namespace the platform gives organization acme is listed under a stack but acme-claims, where the claim is: it holds the claim, " +
				"and admission refuses every pod in it, in Warn mode too (list it under a stack to run pods there)",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := stackSpec
			if tc.spec != "" {
				spec = tc.spec
			}
			rsp := run(t, newRequest(t, input, xr(spec), nil), tc.world)
			fntest.AssertNoFatal(t, rsp)
			reason := ReasonAllListed
			switch {
			case tc.status == fnv1.Status_STATUS_CONDITION_FALSE:
				reason = ReasonGivenNotListed
			case tc.want != "":
				reason = ReasonClaimNamespaceUnlisted
			}
			assertCondition(t, rsp, TypeNamespacesListed, tc.status, reason, tc.want)
			desired := fntest.Desired(t, rsp)
			for _, ns := range []string{"acme-claims", "acme-tools", "globex-web", "acme-agents"} {
				if _, ok := desired["placement-role-"+ns]; ok {
					t.Errorf("%s\nrendered a Role in %s, which no stack lists", tc.reason, ns)
				}
			}
		})
	}
}
