package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
)

// Installing kiso where other teams' agents already run: the cluster's placement policy audits before it
// enforces (spec.placement.mode Audit), names what Enforce would refuse, and refuses it only once switched.

// monitoringNamespace is another team's: neither an organization's nor the platform's.
const monitoringNamespace = "e2e-monitoring"

// auditBeforeEnforceT: a DaemonSet that tolerates every taint, in a monitoring namespace, has its pods refused
// while the cluster enforces; switched to Audit, the cluster names it (status.placementAudit) and its pods are
// admitted as the DaemonSet controller creates them, with the refusal as a warning, while an organization's
// namespace stays enforced and the organization says nothing keeps such pods off its nodes; switched back to
// Enforce they are refused again, and labelling the namespace exempt admits them.
func auditBeforeEnforceT(t *testing.T, cluster string, claim tenant, organizationNamespace string, ownSelector map[string]string, ownTolerations ...corev1.Toleration) {
	t.Helper()
	namespace := []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: " + monitoringNamespace + "\n")
	env.ApplyT(t, namespace)
	t.Cleanup(func() { deleteAtCleanup(t, namespace) })
	waitForDefaultServiceAccountT(t, monitoringNamespace)
	daemonSet := createDaemonSetT(t, monitoringNamespace, "node-exporter")
	agent := newPod("node-exporter-q8x2m", monitoringNamespace, nil, tolerateEveryone)
	agent.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: "apps/v1", Kind: "DaemonSet", Name: daemonSet.Name, UID: daemonSet.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}}
	waitUntilRefusedAsT(t, agent, daemonSetControllerUser, placementPolicy)

	setPlacementModeT(t, cluster, "Audit")
	t.Cleanup(func() { setPlacementModeT(t, cluster, "Enforce") })
	env.Cluster.WaitForT(t, policyInForceTimeout, ClusterKind, "", cluster, func(u *unstructured.Unstructured) (bool, string) {
		refused, _, _ := unstructured.NestedSlice(u.Object, "status", "placementAudit", "wouldRefuse")
		for _, w := range refused {
			m, _ := w.(map[string]any)
			if m["namespace"] == monitoringNamespace && m["kind"] == "DaemonSet" && m["name"] == daemonSet.Name &&
				strings.HasPrefix(fmt.Sprint(m["reason"]), "tolerates every taint") {
				return true, ""
			}
		}
		c, _ := Condition(u, "PlacementEnforced")
		return false, fmt.Sprintf("status.placementAudit.wouldRefuse %v; PlacementEnforced %s %s", refused, c.Status, c.Reason)
	})
	// The Enforce binding's change and the audit binding reach the apiserver's policy cache apart: admitted is not
	// yet warned. Wait for both, then create it for real.
	waitUntilWarnedAsT(t, agent, daemonSetControllerUser, "pod in namespace "+monitoringNamespace+" tolerates every taint")
	out := env.TryT(t, mustJSON(t, agent), "create", "-f", "-", "-o", "json", "--as="+daemonSetControllerUser)
	if out.ExitCode != 0 {
		t.Fatalf("the DaemonSet's pod was refused while the cluster audits: %s", strings.TrimSpace(out.Stderr))
	}
	if want := "pod in namespace " + monitoringNamespace + " tolerates every taint"; !strings.Contains(out.Stderr, want) {
		t.Errorf("the DaemonSet controller was not warned (%q); kubectl printed %q", want, strings.TrimSpace(out.Stderr))
	}
	t.Cleanup(func() {
		_, _ = env.Kubectl.Run(context.Background(), nil, "delete", "pod", agent.Name, "-n", monitoringNamespace, "--ignore-not-found", "--wait=false")
	})
	// An organization's namespace is enforced in either mode, and the organization says its nodes are open.
	assertRefusedT(t, newPod("tolerates-everything", organizationNamespace, ownSelector, append(ownTolerations, tolerateEveryone)...), placementPolicy, everyTaint(organizationNamespace))
	waitClaimConditionT(t, claim.Namespace, claim.Name, "PlacementEnforced", "False", "ClusterAudits")

	setPlacementModeT(t, cluster, "Enforce")
	second := agent.DeepCopy()
	second.Name = "node-exporter-z4k9d"
	waitUntilRefusedAsT(t, second, daemonSetControllerUser, placementPolicy)
	waitClaimConditionT(t, claim.Namespace, claim.Name, "PlacementEnforced", "True", "Enforced")

	// The platform's own agent: its namespace labelled exempt, its pods are admitted again.
	if _, err := env.Kubectl.Run(t.Context(), nil, "label", "namespace", monitoringNamespace, "kiso.dev/placement-exempt=true"); err != nil {
		t.Fatalf("cannot label namespace %s exempt: %v", monitoringNamespace, err)
	}
	waitUntilAdmittedAsT(t, second, daemonSetControllerUser)
}

// setPlacementModeT sets a cluster's spec.placement.mode, as its platform would.
func setPlacementModeT(t *testing.T, cluster, mode string) {
	t.Helper()
	if _, err := env.Kubectl.Run(context.Background(), nil, "patch", "xkarpentercluster", cluster, "--type=merge", "-p", `{"spec":{"placement":{"mode":"`+mode+`"}}}`); err != nil {
		t.Fatalf("cannot set cluster %s's placement mode to %s: %v", cluster, mode, err)
	}
}

// waitUntilRefusedAsT waits until the apiserver refuses the pod, submitted by user (dry run), citing the policy.
func waitUntilRefusedAsT(t *testing.T, pod *corev1.Pod, user, policy string) {
	t.Helper()
	waitForT(t, policyInForceTimeout, "policy "+policy+" to refuse pod "+pod.Namespace+"/"+pod.Name+" from "+user, func(context.Context) (bool, string, error) {
		out := env.TryT(t, mustJSON(t, pod), "create", "--dry-run=server", "-f", "-", "-o", "json", "--as="+user)
		if out.ExitCode == 0 {
			return false, "admitted", nil
		}
		return strings.Contains(out.Stderr, "ValidatingAdmissionPolicy '"+policy+"'"), strings.TrimSpace(out.Stderr), nil
	})
}

// waitUntilWarnedAsT waits until the policies admit pod, created by user (a server-side dry run), with a warning
// that holds warning: what an auditing policy says once every binding of it is in force.
func waitUntilWarnedAsT(t *testing.T, pod *corev1.Pod, user, warning string) {
	t.Helper()
	waitForT(t, policyInForceTimeout, "the policies to admit pod "+pod.Namespace+"/"+pod.Name+" from "+user+" with the warning "+warning, func(context.Context) (bool, string, error) {
		out := env.TryT(t, mustJSON(t, pod), "create", "--dry-run=server", "-f", "-", "-o", "json", "--as="+user)
		return out.ExitCode == 0 && strings.Contains(out.Stderr, warning), strings.TrimSpace(out.Stderr), nil
	})
}

// waitUntilAdmittedAsT waits until the apiserver admits the pod, submitted by user (dry run).
func waitUntilAdmittedAsT(t *testing.T, pod *corev1.Pod, user string) {
	t.Helper()
	waitForT(t, policyInForceTimeout, "the policies to admit pod "+pod.Namespace+"/"+pod.Name+" from "+user, func(context.Context) (bool, string, error) {
		out := env.TryT(t, mustJSON(t, pod), "create", "--dry-run=server", "-f", "-", "-o", "json", "--as="+user)
		return out.ExitCode == 0, strings.TrimSpace(out.Stderr), nil
	})
}
