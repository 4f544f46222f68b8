package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/kiso-dev/kiso/functions/internal/fntest"
	"github.com/kiso-dev/kiso/functions/internal/xrcondition"
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
			"nodeSelector": `{"kiso.dev/organization":"acme","kiso.dev/stack":"jobs"}`,
			"tolerations": `[{"key":"kiso.dev/organization","operator":"Equal","value":"acme","effect":"NoSchedule"},` +
				`{"key":"kiso.dev/stack","operator":"Equal","value":"jobs","effect":"NoSchedule"}]`,
		},
	}
	if diff := cmp.Diff(want, fntest.Desired(t, rsp)["placement-configmap-acme-batch"]); diff != "" {
		t.Errorf("ConfigMap in acme-batch: -want, +got:\n%s", diff)
	}
}

func TestNamespaceNotCreatedYetHoldsUpNothingElse(t *testing.T) {
	// acme-batch does not exist yet: its ConfigMap waits, the pools do not.
	rsp := run(t, newRequest(t, input, xr(stackSpec), nil), cluster{refNodeClass, refNodePool, namespace("acme-web")})
	fntest.AssertNoFatal(t, rsp)
	desired := fntest.Desired(t, rsp)
	for _, name := range []string{"placement-configmap-acme-web", "nodepool-kiso-acme.web", "nodepool-kiso-acme.jobs"} {
		if _, ok := desired[name]; !ok {
			t.Errorf("%s not rendered", name)
		}
	}
	if _, ok := desired["placement-configmap-acme-batch"]; ok {
		t.Errorf("rendered a ConfigMap into namespace acme-batch, which does not exist")
	}
	// The function asks again until the namespace exists; Crossplane calls it again once it does.
	if _, ok := rsp.GetRequirements().GetResources()[requireNamespace("acme-batch")]; !ok {
		t.Errorf("does not ask for namespace acme-batch again")
	}
}

func TestNamespaceServedByAnotherOrganizationIsRefused(t *testing.T) {
	heldBy := func(labels string) string {
		return `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"kiso-placement","namespace":"acme-batch",` + labels + `},"data":{}}`
	}
	cases := map[string]struct {
		reason string
		holder string
		want   string
	}{
		"AnotherOrganization": {
			reason: "The ConfigMap of another organization's XR says who serves the namespace.",
			holder: heldBy(`"labels":{"kiso.dev/organization":"globex","kiso.dev/stack":"batch"},
				"ownerReferences":[{"apiVersion":"kiso.dev/v1alpha1","kind":"XKarpenterIsolation","name":"globex-7fk2q","uid":"globex-uid","controller":true}]`),
			want: `spec.stacks[1].namespaces[0]: Invalid value: "acme-batch": namespace is served by organization "globex" (XKarpenterIsolation globex-7fk2q); a namespace's pods run on one organization's pools only`,
		},
		"NotKisos": {
			reason: "A ConfigMap of that name kiso did not compose is not adopted either.",
			holder: heldBy(`"labels":{"app":"legacy"}`),
			want:   `spec.stacks[1].namespaces[0]: Invalid value: "acme-batch": namespace is served by a ConfigMap kiso-placement that kiso did not compose; a namespace's pods run on one organization's pools only`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := run(t, newRequest(t, input, xr(stackSpec), nil), cluster{refNodeClass, refNodePool, namespace("acme-web"), namespace("acme-batch"), tc.holder})
			assertFatal(t, rsp, tc.want)
			assertCondition(t, rsp, xrcondition.TypeNamesAvailable, fnv1.Status_STATUS_CONDITION_FALSE, xrcondition.ReasonNameConflict, tc.want)
			if n := len(rsp.GetDesired().GetResources()); n != 0 {
				t.Errorf("%s\nreturned %d desired resources with a fatal result", tc.reason, n)
			}
		})
	}
}
