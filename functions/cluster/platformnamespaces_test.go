package main

import (
	"testing"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/kiso-dev/kiso/functions/internal/fntest"
)

func TestPlatformNamespacesThatDoNotExistAreSaid(t *testing.T) {
	withPlatform := `{"apiVersion":"cluster.fn.kiso.dev/v1alpha1","kind":"Input","platformNamespaces":["crossplane-system","monitoring"]}`
	namespace := func(name string) string {
		return `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"` + name + `"}}`
	}
	cases := map[string]struct {
		reason  string
		cluster fntest.Cluster
		status  fnv1.Status
		cReason string
		message string
	}{
		"SomeMissing": {
			reason:  "A workload cluster has no crossplane-system: exempt by name, it is the platform's alone to create, and the cluster says it is not there.",
			cluster: fntest.Cluster{namespace("karpenter"), namespace("monitoring")},
			status:  fnv1.Status_STATUS_CONDITION_FALSE, cReason: ReasonSomeMissing,
			message: "platform namespaces crossplane-system do not exist in the cluster: placement exempts them by name, so policy kiso-namespace-identity lets only the platform " +
				"create them (who holds label on namespaces.placement.kiso.dev); drop them from the function input's platformNamespaces if the platform runs nothing there",
		},
		"AllExist": {
			reason:  "Every platform namespace exists.",
			cluster: fntest.Cluster{namespace("karpenter"), namespace("monitoring"), namespace("crossplane-system")},
			status:  fnv1.Status_STATUS_CONDITION_TRUE, cReason: ReasonAllExist,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := fntest.Run(t, &Function{log: logging.NewNopLogger()}, fntest.Request(withPlatform, xr(podIdentitySpec), nil), withPrometheusOperator(tc.cluster))
			assertCondition(t, rsp, TypePlatformNamespaces, tc.status, tc.cReason, tc.message)
			// kube-system is Kubernetes' own and always there: never asked for.
			for key, sel := range rsp.GetRequirements().GetResources() {
				if sel.GetKind() == "Namespace" && sel.GetMatchName() == "kube-system" {
					t.Errorf("%s\nasked for kube-system under %s", tc.reason, key)
				}
			}
		})
	}
}
