package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	admissionv1 "k8s.io/api/admissionregistration/v1"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/fntest"
)

// The policies' behaviour (which pods are admitted, refused or injected) is
// proven against a real kube-apiserver in test/e2e/admission_test.go; these
// tests pin what the function renders for a spec.

func placementSpec(isolation v1alpha1.IsolationMode, placement *v1alpha1.Placement) v1alpha1.XKarpenterIsolationSpec {
	spec := v1alpha1.XKarpenterIsolationSpec{
		Organization: "acme", Isolation: isolation, Placement: placement,
		Stacks:       []v1alpha1.Stack{{Name: "web"}, {Name: "jobs", Namespaces: []string{"batch", "reindex"}}},
		NodeClassRef: v1alpha1.NodeClassReference{Name: "default"}, NodePoolRef: v1alpha1.NodePoolReference{Name: "default"},
	}
	applyDefaults(&spec)
	return spec
}

func TestPlacementPoliciesFollowTheSpec(t *testing.T) {
	cases := map[string]struct {
		reason    string
		placement *v1alpha1.Placement
		want      []string
	}{
		"EnforcedByDefault": {
			reason: "Without placement settings the validating policy and its binding are rendered, nothing mutates.",
			want:   []string{string(resourcePlacementBinding), string(resourcePlacementPolicy)},
		},
		"InjectAddsTheMutatingPolicy": {
			reason:    "inject: true adds the mutating policy and its binding.",
			placement: &v1alpha1.Placement{Inject: true},
			want:      []string{string(resourcePlacementBinding), string(resourcePlacementInjectBinding), string(resourcePlacementInjectPolicy), string(resourcePlacementPolicy)},
		},
		"EnforceOff": {
			reason:    "enforce: false renders no validating policy.",
			placement: &v1alpha1.Placement{Enforce: new(bool)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := placementSpec(v1alpha1.IsolationStack, tc.placement)
			got, err := renderPlacement(spec, planPools(spec, NewKeys(DefaultKeyDomain)), NewKeys(DefaultKeyDomain))
			if err != nil {
				t.Fatal(err)
			}
			names := make(map[string]bool, len(got))
			for n := range got {
				names[string(n)] = true
			}
			if diff := cmp.Diff(tc.want, fntest.SortedKeys(names), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nrendered policies: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestValidatingPolicyNamesEveryNamespaceAndIdentity(t *testing.T) {
	keys := NewKeys(DefaultKeyDomain)
	spec := placementSpec(v1alpha1.IsolationStack, nil)
	policy, binding := validatingPolicy(newPlacement(spec, planPools(spec, keys), keys))

	vars := map[string]string{}
	for _, v := range policy.Spec.Variables {
		vars[v.Name] = v.Expression
	}
	if want := `{"acme-web": "web", "batch": "jobs", "reindex": "jobs"}`; vars["stacks"] != want {
		t.Errorf("namespace to stack map: want %s, got %s", want, vars["stacks"])
	}
	if want := `{"acme-web": "kiso-acme-web", "batch": "kiso-acme-jobs", "reindex": "kiso-acme-jobs"}`; vars["pools"] != want {
		t.Errorf("namespace to pool map: want %s, got %s", want, vars["pools"])
	}
	if !strings.Contains(vars["daemonSetPod"], "system:serviceaccount:kube-system:daemon-set-controller") {
		t.Errorf("the DaemonSet exemption must check who creates the pod, not only its owner reference: %s", vars["daemonSetPod"])
	}
	own := policy.Spec.Validations[0].Expression
	for _, want := range []string{`variables.nodeSelector["kiso.dev/organization"] == "acme"`, `variables.nodeSelector["kiso.dev/stack"] == variables.stacks[request.namespace]`} {
		if !strings.Contains(own, want) {
			t.Errorf("in stack isolation a pod must select %s; rule: %s", want, own)
		}
	}
	if *policy.Spec.FailurePolicy != admissionv1.Fail {
		t.Errorf("failure policy %s: an unevaluable rule must not let pods through", *policy.Spec.FailurePolicy)
	}
	if diff := cmp.Diff([]admissionv1.ValidationAction{admissionv1.Deny}, binding.Spec.ValidationActions); diff != "" {
		t.Errorf("binding actions: -want, +got:\n%s", diff)
	}
	if got := binding.Spec.MatchResources.NamespaceSelector.MatchExpressions[0].Key; got != "kiso.dev/placement-exempt" {
		t.Errorf("exempt namespace label: want kiso.dev/placement-exempt, got %s", got)
	}
}

func TestOrganizationIsolationSelectsNoStack(t *testing.T) {
	keys := NewKeys(DefaultKeyDomain)
	spec := placementSpec(v1alpha1.IsolationOrganization, &v1alpha1.Placement{Inject: true})
	pl := newPlacement(spec, planPools(spec, keys), keys)
	policy, _ := validatingPolicy(pl)
	inject, _ := mutatingPolicy(pl)
	if strings.Contains(policy.Spec.Validations[0].Expression, keys.Stack) {
		t.Errorf("organization isolation must not require a stack selector: %s", policy.Spec.Validations[0].Expression)
	}
	if patch := inject.Spec.Mutations[0].JSONPatch.Expression; strings.Contains(patch, keys.Stack) {
		t.Errorf("organization isolation must not inject a stack selector or toleration: %s", patch)
	}
}

func TestInjectionOnlyAddsWhatIsMissing(t *testing.T) {
	keys := NewKeys(DefaultKeyDomain)
	spec := placementSpec(v1alpha1.IsolationStack, &v1alpha1.Placement{Inject: true})
	inject, _ := mutatingPolicy(newPlacement(spec, planPools(spec, keys), keys))
	patch := inject.Spec.Mutations[0].JSONPatch.Expression
	// Every patch is guarded by the absence of what it adds, which is what
	// makes applying the policy twice a no-op.
	for _, guard := range []string{
		`has(object.spec.nodeSelector) ? []`,
		`"kiso.dev/organization" in variables.nodeSelector ? []`,
		`"kiso.dev/stack" in variables.nodeSelector ? []`,
		`has(object.spec.tolerations) ? []`,
		`t.key == "kiso.dev/organization" && has(t.value) && t.value == "acme"`,
		`t.key == "kiso.dev/stack" && has(t.value) && t.value == variables.stacks[request.namespace]`,
	} {
		if !strings.Contains(patch, guard) {
			t.Errorf("patch lacks guard %q:\n%s", guard, patch)
		}
	}
	if got := inject.Spec.ReinvocationPolicy; got != "IfNeeded" {
		t.Errorf("reinvocation policy %s: a later mutation must not leave a pod without its placement", got)
	}
}
