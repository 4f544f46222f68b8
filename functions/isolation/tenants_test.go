package main

import (
	"encoding/json"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/kiso-dev/kiso/functions/internal/fntest"
)

// tenantXR is an organization's XR as Crossplane returns it: created at a
// time, bound to a claim, and serving the namespaces its status lists.
func tenantXR(t *testing.T, name, created, organization string, spec map[string]any, serves ...string) string {
	t.Helper()
	if spec == nil {
		spec = map[string]any{"organization": organization, "stacks": []any{map[string]any{"name": "app"}},
			"nodeClassRef": map[string]any{"name": "default"}, "nodePoolRef": map[string]any{"name": "default"}}
	}
	u := map[string]any{
		"apiVersion": "kiso.dev/v1alpha1", "kind": "XKarpenterIsolation",
		"metadata": map[string]any{
			"name": name, "uid": name + "-uid", "creationTimestamp": created,
			"labels": map[string]any{"crossplane.io/claim-name": organization, "crossplane.io/claim-namespace": "team-" + organization},
		},
		"spec": spec,
	}
	if len(serves) > 0 {
		u["status"] = map[string]any{"stacks": []any{map[string]any{"name": "app", "pool": "kiso-" + organization, "namespaces": serves}}}
	}
	b, err := json.Marshal(u)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestOrganizationsNeverShareANameOrANamespace(t *testing.T) {
	var acmeSpec map[string]any
	if err := json.Unmarshal([]byte(stackSpec), &acmeSpec); err != nil {
		t.Fatal(err)
	}
	const (
		earlier = "2026-11-01T10:00:00Z"
		created = "2026-11-02T10:00:00Z" // when this XR, acme-x1, was created
		later   = "2026-11-03T10:00:00Z"
	)
	cases := map[string]struct {
		reason string
		// serves are the namespaces this XR's status already lists.
		serves []string
		others func(t *testing.T) []string
		want   string // the fatal message; empty when the XR renders
	}{
		"NamespaceServedByAnotherOrganization": {
			reason: "A namespace another organization serves is refused, however recent that organization is: its policies already bind the namespace's pods.",
			others: func(t *testing.T) []string {
				return []string{tenantXR(t, "globex-x9", later, "globex", nil, "globex-app", "acme-batch")}
			},
			want: `spec.stacks[1].namespaces[0]: Invalid value: "acme-batch": namespace is served by organization "globex" (XKarpenterIsolation globex-x9, claim team-globex/globex); a namespace's pods run on one organization's pools only`,
		},
		"NamespaceOnlyAskedForElsewhere": {
			reason: "An organization that lists the namespace but was refused it serves nothing there.",
			others: func(t *testing.T) []string {
				spec := map[string]any{"organization": "globex", "stacks": []any{map[string]any{"name": "app", "namespaces": []any{"acme-batch"}}}}
				return []string{tenantXR(t, "globex-x9", earlier, "globex", spec, "globex-other")}
			},
		},
		"BothServeTheNamespaceTheOlderKeepsIt": {
			reason: "Two XRs rendered at the same moment both serve the namespace; the older keeps it.",
			serves: []string{"acme-web", "acme-batch"},
			others: func(t *testing.T) []string {
				return []string{tenantXR(t, "globex-x9", later, "globex", nil, "acme-batch")}
			},
		},
		"BothServeTheNamespaceTheNewerIsRefused": {
			reason: "Of two XRs that both serve a namespace, the newer is refused on its next reconcile.",
			serves: []string{"acme-web", "acme-batch"},
			others: func(t *testing.T) []string {
				return []string{tenantXR(t, "globex-x9", earlier, "globex", nil, "acme-batch")}
			},
			want: `spec.stacks[1].namespaces[0]: Invalid value: "acme-batch": namespace is served by organization "globex" (XKarpenterIsolation globex-x9, claim team-globex/globex); a namespace's pods run on one organization's pools only`,
		},
		"OrganizationAlreadyClaimed": {
			reason: "One XR per organization: a second claim for acme is refused before it can touch acme's pools.",
			others: func(t *testing.T) []string {
				return []string{tenantXR(t, "acme-old", earlier, "acme", nil, "acme-app")}
			},
			want: `spec.organization: Invalid value: "acme": organization already belongs to XKarpenterIsolation acme-old (claim team-acme/acme); one XR per organization is the single source of truth for its pools`,
		},
		"NewerXRForTheSameOrganizationDoesNotBlock": {
			reason: "The older XR of an organization keeps rendering; the newer one is the one refused.",
			others: func(t *testing.T) []string {
				return []string{tenantXR(t, "acme-new", later, "acme", nil)}
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			self := tenantXR(t, "acme-x1", created, "acme", acmeSpec, tc.serves...)
			// Crossplane's list includes the XR itself, which is no conflict.
			c := append(cluster{refNodeClass, refNodePool, self}, tc.others(t)...)
			rsp := run(t, newRequest(t, input, self, nil), c)
			if tc.want == "" {
				fntest.AssertNoFatal(t, rsp)
				if len(rsp.GetDesired().GetResources()) == 0 {
					t.Errorf("%s\nrendered nothing", tc.reason)
				}
				return
			}
			assertFatal(t, rsp, tc.want)
			assertCondition(t, rsp, TypeSpecValid, fnv1.Status_STATUS_CONDITION_FALSE, ReasonInvalidSpec, tc.want)
			if n := len(rsp.GetDesired().GetResources()); n != 0 {
				t.Errorf("%s\nreturned %d desired resources with a fatal result", tc.reason, n)
			}
		})
	}
}

func TestKarpentersNamespaceIsNeverATenants(t *testing.T) {
	spec := `{"organization":"acme","stacks":[{"name":"web","namespaces":["karpenter"]}],"clusterRef":{"name":"prod"},
		"nodeClassRef":{"name":"default"},"nodePoolRef":{"name":"default"}}`
	prod := `{"apiVersion":"kiso.dev/v1alpha1","kind":"XKarpenterCluster","metadata":{"name":"prod"},
		"spec":{"clusterName":"prod","region":"eu-west-1","accountId":"111122223333","karpenter":{"namespace":"karpenter"}},
		"status":{"controllerRoleResource":"prod-karpenter-controller"}}`
	rsp := run(t, newRequest(t, input, xr(spec), nil), cluster{refNodeClass, refNodePool, prod})
	assertFatal(t, rsp, `spec.stacks[0].namespaces[0]: Invalid value: "karpenter": Karpenter's controller runs in this namespace (XKarpenterCluster "prod")`)
}
