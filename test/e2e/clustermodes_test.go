package e2e

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestAClusterAuditsBeforeItEnforces is scenario 7b: a platform installs kiso where other teams' agents already
// run, on an apiserver it says serves no MutatingAdmissionPolicy (its own composition's function input). A claim
// that asks for injection there is told why nothing is injected and what its pods must carry; and the cluster
// audits first: a DaemonSet tolerating every taint keeps getting its pods, is named on the cluster, and is
// refused only once switched to Enforce; an exempt namespace admits it again. The organization's namespaces stay
// enforced throughout. It changes what the cluster e2e-placement is (its composition, its mode), so it runs in the
// local cluster's lane.
func TestAClusterAuditsBeforeItEnforces(t *testing.T) {
	inLocalClusterLaneT(t)
	useReferenceObjectsT(t)
	noInjection := readTestdataT(t, "admission", "no-injection.yaml")
	cluster := readTestdataT(t, "admission", "cluster.yaml")
	env.ApplyT(t, noInjection)
	t.Cleanup(func() { deleteAtCleanup(t, noInjection) })
	env.ApplyT(t, append(append([]byte{}, cluster...), "  crossplane:\n    compositionRef:\n      name: e2e-karpentercluster-no-injection\n"...))
	t.Cleanup(func() { deleteLocalClusterAtCleanup(t, cluster) })
	waitForTypeCheckedT(t, placementPolicy)

	initech := tenant{Namespace: "e2e-initech", Name: "initech", Organization: "initech", Isolation: "stack", Stacks: []string{"api"}}
	const api = "initech-api"
	namespace := []byte(namespaceYAML(api, initech.Organization))
	env.ApplyT(t, namespace)
	t.Cleanup(func() { deleteAtCleanup(t, namespace) })
	waitForDefaultServiceAccountT(t, api)
	claim := initech.claim()
	env.ApplyT(t, claim)
	t.Cleanup(func() { deleteAtCleanup(t, claim) })
	waitClaimConditionT(t, initech.Namespace, initech.Name, "PlacementEnforced", "True", "Enforced")

	step(t, "AClaimAskingForInjectionIsToldNothingServesIt", func(t *testing.T) {
		if _, err := env.Kubectl.Run(t.Context(), nil, "patch", "karpenterisolation", initech.Name, "-n", initech.Namespace, "--type=merge", "-p", `{"spec":{"placement":{"inject":true}}}`); err != nil {
			t.Fatalf("cannot ask for injection: %v", err)
		}
		wantUnavailable := `spec.placement.inject: XKarpenterCluster "e2e-placement" says the apiserver serves no MutatingAdmissionPolicy (its function input sets no mutatingAdmissionPolicy), so nothing is injected: ` +
			`pods must carry the nodeSelector and tolerations in status.stacks. Kubernetes 1.36+ serves admissionregistration.k8s.io/v1; 1.34 and 1.35 serve v1beta1 ` +
			`with --feature-gates=MutatingAdmissionPolicy=true and --runtime-config=admissionregistration.k8s.io/v1beta1=true`
		if c := waitClaimConditionT(t, initech.Namespace, initech.Name, "PlacementInjected", "False", "InjectionUnavailable"); c.Message != wantUnavailable {
			t.Errorf("claim PlacementInjected message:\n got %s\nwant %s", c.Message, wantUnavailable)
		}
	})

	step(t, "AnAuditingClusterNamesWhatItWouldRefuse", func(t *testing.T) {
		tolerateInitech := corev1.Toleration{Key: "kiso.dev/organization", Operator: corev1.TolerationOpEqual, Value: initech.Organization, Effect: corev1.TaintEffectNoSchedule}
		auditBeforeEnforceT(t, placementCluster, initech, api, selectStack(initech.Organization, "api"), tolerateInitech, tolerateAPI)
	})
}
