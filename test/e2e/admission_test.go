package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// The admission scenario's cluster, organization, claim and namespaces.
const (
	globexClaimNamespace = "e2e-globex"
	globexClaim          = "globex"
	globexAPI            = "globex-api"
	globexBatch          = "globex-batch"
	globexReports        = "globex-reports" // joins stack batch during the scenario
	outsiderNamespace    = "e2e-outsider"
	exemptNamespace      = "e2e-platform-agents" // labelled kiso.dev/placement-exempt=true
)

// The tolerations a pod of organization globex carries, as the claim's status tells it.
var (
	tolerateGlobex = corev1.Toleration{Key: "kiso.dev/organization", Operator: corev1.TolerationOpEqual, Value: "globex", Effect: corev1.TaintEffectNoSchedule}
	tolerateAPI    = corev1.Toleration{Key: "kiso.dev/stack", Operator: corev1.TolerationOpEqual, Value: "api", Effect: corev1.TaintEffectNoSchedule}
	tolerateBatch  = corev1.Toleration{Key: "kiso.dev/stack", Operator: corev1.TolerationOpEqual, Value: "batch", Effect: corev1.TaintEffectNoSchedule}
	// The DefaultTolerationSeconds admission plugin, on in every cluster, adds these to every pod.
	defaultTolerations = []corev1.Toleration{
		{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
		{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
	}
)

// What the policies tell a pod that breaks each of their rules. Platform namespaces are kube-system (Karpenter's
// too: the cluster keeps the default) and crossplane-system, which kiso's composition lists.
const (
	wantAPISelectors = "pods in namespace globex-api run on pool kiso-globex.api: add nodeSelector " + nodeOrganizationKey + "=globex, " + nodeStackKey + "=api " +
		"(or a required node affinity on them) and tolerations kiso.dev/organization=globex:NoSchedule, kiso.dev/stack=api:NoSchedule"
	wantBatchSelectors = "pods in namespace globex-batch run on pool kiso-globex.batch: add nodeSelector " + nodeOrganizationKey + "=globex, " + nodeStackKey + "=batch " +
		"(or a required node affinity on them) and tolerations kiso.dev/organization=globex:NoSchedule, kiso.dev/stack=batch:NoSchedule"
)

// foreignToleration is the refusal of a pod tolerating globex's taint in a namespace the platform gives no
// organization.
func foreignToleration(namespace string) string {
	return "pod in namespace " + namespace + " tolerates organization globex's taint (toleration kiso.dev/organization=globex), but the namespace is not that organization's " +
		"(the platform labels it with no organization): remove the toleration; " + platformHint
}

// namedNode is the refusal of a pod of namespace that names someNode (onNode).
func namedNode(namespace string) string {
	return "pod in namespace " + namespace + " names node " + someNode + " in spec.nodeName, which skips the scheduler and the taints that keep organizations apart: remove spec.nodeName and select nodes with a nodeSelector; " + platformHint
}

// TestAdmissionKeepsPodsOnTheirPools is scenario 7a: real pods, submitted with kubectl as a team would, meet
// the admission policies an XKarpenterCluster composes once for the whole cluster, and the Role an
// organization's claim composes in each namespace it holds. Pods stay Pending (no kubelet runs): what the
// apiserver admits, refuses and stores is what is tested. It proves that the rendered CEL compiles and
// type-checks on a real apiserver; that a stack's pods are refused unless they select their own pool, with a
// message saying what to add; that no pod outside a platform namespace may name a node, tolerate every taint
// (DaemonSet pods included) or tolerate an organization whose namespace it is not in, while a toleration that
// cannot match a NoSchedule taint is left alone; that an UPDATE is checked only for the tolerations it adds,
// so pods that predate a policy can be labelled, freed of finalizers and deleted; that a Job's pods are held
// to the same rules; that in Warn mode such a pod is admitted with its refusal as a warning, and refused again
// back in Enforce; that injection adds exactly what is missing and nothing twice; and that pods of the old
// placement are admitted while its pool is kept (make before break), and only then refused. What the cluster's
// own modes do is TestAClusterAuditsBeforeItEnforces.
func TestAdmissionKeepsPodsOnTheirPools(t *testing.T) {
	sharingPlacementClusterT(t)
	useReferenceObjectsT(t)
	namespaces := readTestdataT(t, "admission", "namespaces.yaml")
	claim := readTestdataT(t, "admission", "claim.yaml")
	env.ApplyT(t, namespaces)
	t.Cleanup(func() { deleteAtCleanup(t, namespaces) })
	for _, ns := range []string{globexAPI, globexBatch, globexReports, outsiderNamespace, exemptNamespace} {
		// The ServiceAccount admission plugin refuses pods until their namespace's default account exists.
		waitForDefaultServiceAccountT(t, ns)
	}
	waitForTypeCheckedT(t, placementPolicy)
	waitForTypeCheckedT(t, poolsPolicy)
	waitForTypeCheckedT(t, warnPolicy)

	env.ApplyT(t, claim)
	t.Cleanup(func() { deleteAtCleanup(t, claim) })
	waitUntilRefusedT(t, newPod("probe", globexAPI, nil), poolsPolicy)
	wantEnforced := `the admission policies of XKarpenterCluster "e2e-placement" hold the organization's pods to its pools and other pods off its nodes`
	if c := waitClaimConditionT(t, globexClaimNamespace, globexClaim, "PlacementEnforced", "True", "Enforced"); c.Message != wantEnforced {
		t.Errorf("claim PlacementEnforced message %q, want %q", c.Message, wantEnforced)
	}

	// kubectl get shows every pool of the claim, not the first (a printer column prints one value), and the
	// one revision they are on.
	columns := waitForPrintedColumnsT(t, globexClaimNamespace, globexClaim, map[string]string{"POOLS": "kiso-globex.api,kiso-globex.batch"})
	if r := columns["REVISION"]; r == "" || r == "<none>" || strings.Contains(r, ",") {
		t.Errorf("kubectl get -o wide prints REVISION %q for two pools on one revision", r)
	}

	// Each namespace's grant reaches the apiserver's authorizer on its own time, after the policies.
	waitUntilAdmittedT(t, newPod("probe", globexAPI, selectStack("globex", "api"), tolerateGlobex, tolerateAPI))
	waitUntilAdmittedT(t, newPod("probe", globexBatch, selectStack("globex", "batch"), tolerateGlobex, tolerateBatch))

	ownSelector := selectStack("globex", "api")
	var selecting *corev1.Pod
	var xr string

	// (i) A stack's pod that selects nothing is refused, and told what to add.
	step(t, "AStacksPodSelectsItsPoolOrIsToldWhatToAdd", func(t *testing.T) {
		assertRefusedT(t, newPod("no-selector", globexAPI, nil), poolsPolicy, wantAPISelectors)

		// (ii) The same pod with its stack's node selector and tolerations is admitted, unchanged.
		selecting = createPodT(t, newPod("selects-api", globexAPI, ownSelector, tolerateGlobex, tolerateAPI))
		wantSelecting := podPlacement{NodeSelector: ownSelector, Tolerations: append([]corev1.Toleration{tolerateGlobex, tolerateAPI}, defaultTolerations...)}
		if diff := cmp.Diff(wantSelecting, placementOf(selecting)); diff != "" {
			t.Errorf("admitted pod %s/%s placement: -want, +got:\n%s", globexAPI, selecting.Name, diff)
		}
	})

	// (iii) Selecting another stack of the same organization is refused: each stack has its own pool. So is
	// selecting the organization without the stack, and tolerating another stack's taint.
	// Each pod breaks one policy only: the apiserver reports the first policy that refuses, in no set order.
	step(t, "AnotherStacksPoolIsRefused", func(t *testing.T) {
		assertRefusedT(t, newPod("selects-batch", globexAPI, selectStack("globex", "batch"), tolerateGlobex, tolerateAPI),
			poolsPolicy, wantAPISelectors)
		assertRefusedT(t, newPod("tolerates-batch", globexAPI, ownSelector, tolerateGlobex, tolerateAPI, tolerateBatch),
			poolsPolicy, "pod in namespace globex-api tolerates stack taints (kiso.dev/stack=batch) of organization globex whose pods do not run in this namespace: tolerate only your own stack")
		assertRefusedT(t, newPod("selects-organization", globexAPI, selectStack("globex", ""), tolerateGlobex), poolsPolicy, wantAPISelectors)
	})

	// (iv) Outside platform namespaces, tolerating the organization's taint, every taint or every
	// organization's is refused, DaemonSet pods included; a toleration that cannot match a NoSchedule taint
	// is none of kiso's business, nor is a pod that tolerates nothing of kiso's.
	step(t, "OutsidersMayNotTolerateOrSelectAnOrganization", func(t *testing.T) {
		assertRefusedT(t, newPod("tolerates-globex", outsiderNamespace, nil, tolerateGlobex), placementPolicy, foreignToleration(outsiderNamespace))
		assertRefusedT(t, newPod("tolerates-everything", outsiderNamespace, nil, tolerateEveryone), placementPolicy, everyTaint(outsiderNamespace))
		assertRefusedT(t, newPod("tolerates-every-organization", outsiderNamespace, nil, corev1.Toleration{Key: "kiso.dev/organization", Operator: corev1.TolerationOpExists}),
			placementPolicy, "pod in namespace e2e-outsider tolerates every value of kiso.dev/organization (operator Exists), every organization's nodes: tolerate your own with operator Equal and its value; "+platformHint)
		daemonSet := createDaemonSetT(t, outsiderNamespace, "node-agent")
		agent := newPod("node-agent-x7k2p", outsiderNamespace, nil, tolerateEveryone)
		agent.OwnerReferences = []metav1.OwnerReference{{
			APIVersion: "apps/v1", Kind: "DaemonSet", Name: daemonSet.Name, UID: daemonSet.UID,
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
		}}
		// Created by the DaemonSet controller itself (no node exists for the real controller to create one, so the
		// test creates it as the controller's identity), it is refused all the same: only a platform namespace
		// runs agents on every node.
		assertRefusedAsT(t, agent, daemonSetControllerUser, placementPolicy, everyTaint(outsiderNamespace))
		// The aws-ebs-csi-driver controller's default toleration: NoExecute only, so no NoSchedule taint is tolerated.
		createPodT(t, newPod("tolerates-noexecute", outsiderNamespace, nil, corev1.Toleration{Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}))
		createPodT(t, newPod("tolerates-globex-noexecute", outsiderNamespace, nil, corev1.Toleration{Key: "kiso.dev/organization", Operator: corev1.TolerationOpEqual, Value: "globex", Effect: corev1.TaintEffectPreferNoSchedule}))
		createPodT(t, newPod("unrelated", outsiderNamespace, nil))
		for _, key := range []string{nodeOrganizationKey, "kiso.dev/organization"} {
			assertRefusedT(t, newPod("selects-globex", outsiderNamespace, map[string]string{key: "globex"}), placementPolicy,
				"pod in namespace e2e-outsider selects the nodes of an organization ("+nodeOrganizationKey+" or kiso.dev/organization in its nodeSelector or required node affinity) that the namespace is not "+
					"(the platform labels it with no organization): remove that selector; "+platformHint)
		}
		// Platform namespaces are left alone, whatever their pods tolerate: kube-system (a cilium-operator-style
		// toleration, unlabelled) and one the platform labels exempt.
		createPodT(t, newPod("operator", "kube-system", nil, tolerateEveryone))
		t.Cleanup(func() {
			_, _ = env.Kubectl.Run(context.Background(), nil, "delete", "pod", "operator", "-n", "kube-system", "--ignore-not-found")
		})
		createPodT(t, newPod("platform-agent", exemptNamespace, nil, tolerateEveryone))
	})

	// (v) Naming a node skips the scheduler: refused outside platform namespaces, tenants' included, unless a
	// node creates it (a mirror pod of its static pod).
	step(t, "OnlyAKubeletsMirrorPodNamesANode", func(t *testing.T) {
		assertRefusedT(t, onNode(newPod("on-node", outsiderNamespace, nil)), placementPolicy, namedNode(outsiderNamespace))
		assertRefusedT(t, onNode(newPod("on-node", globexAPI, ownSelector, tolerateGlobex, tolerateAPI)), placementPolicy, namedNode(globexAPI))
		// As the kubelet makes it, under NodeRestriction: annotated a mirror pod, owned by its Node.
		node := createNodeT(t, someNode)
		mirror := onNode(newPod("static-web-"+someNode, outsiderNamespace, nil))
		mirror.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "static-web"}
		mirror.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID, Controller: ptr.To(true)}}
		asKubelet := []string{"--as=system:node:" + someNode, "--as-group=system:nodes", "--as-group=system:authenticated"}
		if out := env.TryT(t, mustJSON(t, mirror), append([]string{"create", "--dry-run=server", "-f", "-"}, asKubelet...)...); out.ExitCode != 0 {
			t.Errorf("a node's mirror pod was refused: %s", strings.TrimSpace(out.Stderr))
		}
		// NodeRestriction lets the kubelet put its mirror pod in any namespace, globex's included, where globex's
		// Services and NetworkPolicies would select a pod on a node that is not globex's: the pools policy
		// refuses it, whichever organization the node is.
		intruder := onNode(newPod("static-web-"+someNode, globexAPI, nil))
		intruder.Annotations, intruder.OwnerReferences = mirror.Annotations, mirror.OwnerReferences
		out := env.TryT(t, mustJSON(t, intruder), append([]string{"create", "--dry-run=server", "-f", "-"}, asKubelet...)...)
		assertOutcomeRefusedT(t, intruder, out, poolsPolicy, "node "+someNode+" may not create a mirror pod in namespace "+globexAPI+", organization globex's: a static pod runs in a platform namespace")

		// A user only named like a node (an authenticator that lets a user choose its name, a client certificate
		// without the group, impersonation) is no node: Kubernetes counts a node by its group system:nodes too.
		// RBAC lets it create pods anywhere; the policies hold it as they hold anyone.
		const ghost = "system:node:e2e-ghost"
		grant := []byte(userWithClusterRole(ghost, `{apiGroups: [""], resources: [pods], verbs: [create]}`))
		env.ApplyT(t, grant)
		t.Cleanup(func() { deleteAtCleanup(t, grant) })
		waitForT(t, policyInForceTimeout, "RBAC to let "+ghost+" create pods", func(context.Context) (bool, string, error) {
			can := env.TryT(t, nil, "auth", "can-i", "create", "pods", "-n", outsiderNamespace, "--as="+ghost)
			return strings.TrimSpace(can.Stdout) == "yes", strings.TrimSpace(can.Stdout + can.Stderr), nil
		})
		assertRefusedAsT(t, onNode(newPod("ghost-on-node", outsiderNamespace, nil, tolerateEveryone)), ghost, placementPolicy, namedNode(outsiderNamespace))
		assertRefusedAsT(t, newPod("ghost-no-pool", globexAPI, nil), ghost, poolsPolicy, wantAPISelectors)
		assertRefusedAsT(t, onNode(mirror.DeepCopy()), ghost, placementPolicy, namedNode(outsiderNamespace))
		createPodT(t, onNode(newPod("on-node", "kube-system", nil)))
		t.Cleanup(func() {
			// No kubelet runs for the node to confirm a graceful deletion: removed at once, as an operator removes
			// a pod from a node that is gone.
			_, _ = env.Kubectl.Run(context.Background(), nil, "delete", "pod", "on-node", "-n", "kube-system", "--ignore-not-found", "--grace-period=0", "--force")
		})
	})

	// (vi) An UPDATE is checked only for the tolerations it adds.
	step(t, "AnUpdateIsCheckedOnlyForTheTolerationsItAdds", func(t *testing.T) {
		plain := createPodT(t, newPod("plain", outsiderNamespace, nil))
		out := env.TryT(t, nil, "patch", "pod", plain.Name, "-n", outsiderNamespace, "--type=json", "-p",
			`[{"op":"add","path":"/spec/tolerations/-","value":{"key":"kiso.dev/organization","operator":"Equal","value":"globex","effect":"NoSchedule"}}]`)
		if want := `Error from server (Forbidden): pods "plain" is forbidden: ValidatingAdmissionPolicy 'kiso-placement' with binding 'kiso-placement' denied request: ` + foreignToleration(outsiderNamespace); strings.TrimSpace(out.Stderr) != want {
			t.Errorf("adding a foreign toleration to a pod: exit %d\n got %s\nwant %s", out.ExitCode, strings.TrimSpace(out.Stderr), want)
		}
		// A pod that predates the policy (here: created while its namespace was exempt, with the finalizer the Job
		// controller tracks its pods by) can still be labelled, freed of its finalizer, and deleted.
		legacy := newPod("legacy", exemptNamespace, nil, tolerateEveryone, tolerateGlobex)
		legacy.Finalizers = []string{"batch.kubernetes.io/job-tracking"}
		createPodT(t, legacy)
		env.TryT(t, nil, "label", "namespace", exemptNamespace, "kiso.dev/placement-exempt-")
		t.Cleanup(func() {
			_, _ = env.Kubectl.Run(context.Background(), nil, "delete", "pod", "legacy", "-n", exemptNamespace, "--ignore-not-found", "--wait=false")
		})
		waitUntilRefusedT(t, newPod("probe", exemptNamespace, nil, tolerateEveryone), placementPolicy)
		for _, args := range [][]string{
			{"label", "pod", "legacy", "-n", exemptNamespace, "reviewed=true"},
			{"patch", "pod", "legacy", "-n", exemptNamespace, "--type=merge", "-p", `{"metadata":{"finalizers":null}}`},
			{"delete", "pod", "legacy", "-n", exemptNamespace, "--wait=true"},
		} {
			if out := env.TryT(t, nil, args...); out.ExitCode != 0 {
				t.Errorf("kubectl %s on a pod that predates the policy: exit %d: %s", strings.Join(args, " "), out.ExitCode, strings.TrimSpace(out.Stderr))
			}
		}
		env.TryT(t, nil, "label", "namespace", exemptNamespace, "kiso.dev/placement-exempt=true")
	})

	// (vii) A Job's pod is held to the same rule: the Job controller's pod is refused, and the Job says why.
	step(t, "AJobsPodsAreHeldToTheSameRule", func(t *testing.T) {
		refusedJob := createJobT(t, globexBatch, "reindex")
		event := waitForJobEventT(t, refusedJob, "FailedCreate")
		// The Job controller names its pods <job>-<five random characters>.
		wantEvent := regexp.MustCompile(`^Error creating: pods "reindex-[a-z0-9]{5}" is forbidden: ` +
			regexp.QuoteMeta("ValidatingAdmissionPolicy 'kiso-placement-pools' with binding 'kiso-placement-pools' denied request: "+wantBatchSelectors) + `$`)
		if event.Type != corev1.EventTypeWarning || !wantEvent.MatchString(event.Message) {
			t.Errorf("Job %s/%s event FailedCreate: %s %q; want a Warning matching %s", globexBatch, refusedJob.Name, event.Type, event.Message, wantEvent)
		}
		if pods := jobPodsT(t, refusedJob); len(pods) != 0 {
			t.Errorf("Job %s/%s has pods %v; the policy should have refused every one", globexBatch, refusedJob.Name, podNames(pods))
		}
		// Deleted now, so its retries cannot succeed once injection is on and confuse what follows.
		deleteJobT(t, refusedJob)
	})

	// Warn before Deny: in Warn mode the pod Enforce refuses is admitted, and whoever submits it (kubectl, a
	// Deployment's events) is told the refusal it would get. Only what the organization's own pods must select
	// is softened: tolerating a stack of its own that the namespace is not is still refused. Back in Enforce,
	// the next such pod is refused.
	step(t, "WarnModeAdmitsWithTheRefusalAsAWarning", func(t *testing.T) {
		patchGlobexT(t, `{"spec":{"placement":{"mode":"Warn"}}}`)
		wantWarnOnly := `spec.placement.mode is Warn: the admission policies of XKarpenterCluster "e2e-placement" admit a pod of the organization's namespaces ` +
			`that does not select its pool, with the refusal Enforce would give as a warning and an audit annotation (policy kiso-placement-warn); other pods are still kept off its nodes`
		// The message goes on to count the pods Enforce would refuse, whatever earlier steps left running.
		if c := waitClaimConditionT(t, globexClaimNamespace, globexClaim, "PlacementEnforced", "False", "WarnOnly"); !strings.HasPrefix(c.Message, wantWarnOnly+"; ") {
			t.Errorf("claim PlacementEnforced message:\n got %s\nwant it to start %s", c.Message, wantWarnOnly)
		}
		waitUntilAdmittedT(t, newPod("probe", globexAPI, nil))
		pod := newPod("warned", globexAPI, nil)
		out := submitPod(t, pod, false)
		wantWarning := "Warning: Validation failed for ValidatingAdmissionPolicy '" + warnPolicy + "' with binding '" + warnPolicy + "': " + wantAPISelectors +
			" (organization globex's placement is in Warn mode: in Enforce mode this pod is refused)"
		if out.ExitCode != 0 || strings.TrimSpace(out.Stderr) != wantWarning {
			t.Errorf("kubectl create pod %s/%s in Warn mode: exit %d\n got %s\nwant %s", pod.Namespace, pod.Name, out.ExitCode, strings.TrimSpace(out.Stderr), wantWarning)
		}
		// The claim counts it among the pods Enforce would refuse.
		env.Cluster.WaitForT(t, policyInForceTimeout, IsolationClaimKind, globexClaimNamespace, globexClaim, func(u *unstructured.Unstructured) (bool, string) {
			c, _ := Condition(u, "PlacementEnforced")
			n, _, _ := unstructured.NestedInt64(u.Object, "status", "warnedPods")
			return n >= 1 && strings.Contains(c.Message, "so Enforce would refuse them: ") && strings.Contains(c.Message, pod.Namespace+"/"+pod.Name),
				fmt.Sprintf("status.warnedPods %d, PlacementEnforced %s", n, c.Message)
		})
		// The claim's own namespace is globex's (the platform labels it so) but no stack lists it: no Role grants its
		// pods anything, so Warn mode softens nothing there, and the claim names it.
		// The apiserver answers a binding whose parameter (the Role) is missing with 422 Invalid, not 403.
		if out, want := submitPod(t, newPod("in-the-claims-namespace", globexClaimNamespace, nil), false),
			`The pods "in-the-claims-namespace" is invalid: : ValidatingAdmissionPolicy '`+poolsPolicy+`' with binding '`+poolsPolicy+`' denied request: `+
				"failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction"; out.ExitCode == 0 || strings.TrimSpace(out.Stderr) != want {
			t.Errorf("a pod in the claim's namespace, which no stack lists, in Warn mode: exit %d\n got %s\nwant %s", out.ExitCode, strings.TrimSpace(out.Stderr), want)
		}
		if c := waitClaimConditionT(t, globexClaimNamespace, globexClaim, "NamespacesListed", "True", "ClaimNamespaceUnlisted"); !strings.HasPrefix(c.Message, "every namespace the platform gives organization globex is listed under a stack but "+globexClaimNamespace+", where the claim is") {
			t.Errorf("claim NamespacesListed message %q does not name %s", c.Message, globexClaimNamespace)
		}
		// A pod that selects its pool gets no warning.
		if out := submitPod(t, newPod("selects-api-warn", globexAPI, ownSelector, tolerateGlobex, tolerateAPI), false); out.ExitCode != 0 || strings.TrimSpace(out.Stderr) != "" {
			t.Errorf("a pod selecting its pool in Warn mode: exit %d, stderr %q; want it admitted silently", out.ExitCode, strings.TrimSpace(out.Stderr))
		}
		assertRefusedT(t, newPod("tolerates-batch-warn", globexAPI, ownSelector, tolerateGlobex, tolerateAPI, tolerateBatch),
			poolsPolicy, "pod in namespace globex-api tolerates stack taints (kiso.dev/stack=batch) of organization globex whose pods do not run in this namespace: tolerate only your own stack")
		assertRefusedT(t, newPod("tolerates-globex-warn", outsiderNamespace, nil, tolerateGlobex), placementPolicy, foreignToleration(outsiderNamespace))
		// Nor by an update: the api team's developer creates a gated pod that tolerates only its organization
		// (admitted with the warning), then patches in stack batch's selector and toleration, which Kubernetes
		// lets an update of a gated pod add. Refused; what touches no placement still goes through.
		const developer = "e2e-globex-developer"
		gated := newPod("gated-warn", globexAPI, nil, tolerateGlobex)
		gated.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "e2e.kiso.dev/hold"}}
		manifest, err := json.Marshal(gated)
		if err != nil {
			t.Fatal(err)
		}
		if out := env.TryT(t, manifest, "create", "-f", "-", "--as="+developer); out.ExitCode != 0 || !strings.Contains(out.Stderr, "in Enforce mode this pod is refused") {
			t.Fatalf("the developer's gated pod in Warn mode: exit %d %s; want it admitted with the warning", out.ExitCode, strings.TrimSpace(out.Stderr))
		}
		t.Cleanup(func() {
			_, _ = env.Kubectl.Run(context.Background(), nil, "delete", "pod", gated.Name, "-n", globexAPI, "--ignore-not-found", "--wait=false")
		})
		takeBatch := `[{"op":"add","path":"/spec/nodeSelector","value":{"` + nodeOrganizationKey + `":"globex","` + nodeStackKey + `":"batch"}},` +
			`{"op":"add","path":"/spec/tolerations/-","value":{"key":"kiso.dev/stack","operator":"Equal","value":"batch","effect":"NoSchedule"}}]`
		out = env.TryT(t, nil, "patch", "pod", gated.Name, "-n", globexAPI, "--type=json", "-p", takeBatch, "--as="+developer)
		wantAdded := "ValidatingAdmissionPolicy '" + placementPolicy + "' with binding '" + placementPolicy + "' denied request: pod in namespace " + globexAPI +
			" adds a toleration of stack batch (kiso.dev/stack) in an update: the stacks a pod tolerates are checked against its namespace's grant when it is created; " +
			"create the pod with the toleration (its organization's claim says which: status.stacks)"
		if out.ExitCode == 0 || !strings.Contains(out.Stderr, wantAdded) {
			t.Errorf("the developer's update took stack batch in Warn mode: exit %d\n got %s\nwant it to contain %s", out.ExitCode, strings.TrimSpace(out.Stderr), wantAdded)
		}
		narrow := `[{"op":"add","path":"/spec/nodeSelector","value":{"kubernetes.io/arch":"amd64"}},{"op":"add","path":"/metadata/labels","value":{"e2e.kiso.dev/team":"api"}}]`
		if out := env.TryT(t, nil, "patch", "pod", gated.Name, "-n", globexAPI, "--type=json", "-p", narrow, "--as="+developer); out.ExitCode != 0 {
			t.Errorf("the developer's update that touches no placement was refused: %s", strings.TrimSpace(out.Stderr))
		}

		patchGlobexT(t, `{"spec":{"placement":{"mode":"Enforce"}}}`)
		waitClaimConditionT(t, globexClaimNamespace, globexClaim, "PlacementEnforced", "True", "Enforced")
		waitUntilRefusedT(t, newPod("probe", globexAPI, nil), poolsPolicy)
		assertRefusedT(t, newPod("refused-after-warn", globexAPI, nil), poolsPolicy, wantAPISelectors)
	})

	// (viii) Injection: the cluster's MutatingAdmissionPolicy adds the pool of the namespace's Role where missing.
	step(t, "InjectionAddsExactlyWhatIsMissing", func(t *testing.T) {
		patchGlobexT(t, `{"spec":{"placement":{"inject":true}}}`)
		waitClaimConditionT(t, globexClaimNamespace, globexClaim, "PlacementInjected", "True", "Injected")
		waitUntilAdmittedT(t, newPod("probe", globexAPI, nil))
		injected := createPodT(t, newPod("injected", globexAPI, nil))
		wantInjected := podPlacement{NodeSelector: ownSelector, Tolerations: append(append([]corev1.Toleration{}, defaultTolerations...), tolerateGlobex, tolerateAPI)}
		if diff := cmp.Diff(wantInjected, placementOf(injected)); diff != "" {
			t.Errorf("pod %s/%s as injected: -want, +got:\n%s", globexAPI, injected.Name, diff)
		}
		// A pod that already carries them is stored exactly as without injection: nothing added twice.
		again := createPodT(t, newPod("selects-api-injected", globexAPI, ownSelector, tolerateGlobex, tolerateAPI))
		if selecting == nil {
			t.Fatal("the pod without injection was not admitted (AStacksPodSelectsItsPoolOrIsToldWhatToAdd): nothing to compare with")
		}
		if diff := cmp.Diff(placementOf(selecting), placementOf(again)); diff != "" {
			t.Errorf("injection changed a pod that already selects its pool: -without injection, +with:\n%s", diff)
		}
		// A pod that asks for another stack's pool is not silently moved: injection leaves its selector, and the
		// policies refuse it.
		assertRefusedT(t, newPod("selects-batch-injected", globexAPI, selectStack("globex", "batch")), poolsPolicy, wantAPISelectors)
		// Injecting into an injected pod changes nothing.
		reinjected := createPodT(t, newPod("injected-twice", globexAPI, injected.Spec.NodeSelector, injected.Spec.Tolerations...))
		if diff := cmp.Diff(placementOf(injected), placementOf(reinjected)); diff != "" {
			t.Errorf("injecting twice changed the pod: -injected once, +twice:\n%s", diff)
		}
		// A Job's pod, as the Job controller creates it, is injected too.
		injectedJob := createJobT(t, globexBatch, "reindex-injected")
		jobPod := waitForJobPodT(t, injectedJob)
		wantJobPod := podPlacement{
			NodeSelector: selectStack("globex", "batch"),
			Tolerations:  append(append([]corev1.Toleration{}, defaultTolerations...), tolerateGlobex, tolerateBatch),
		}
		if diff := cmp.Diff(wantJobPod, placementOf(jobPod)); diff != "" {
			t.Errorf("Job %s/%s pod %s as injected: -want, +got:\n%s", globexBatch, injectedJob.Name, jobPod.Name, diff)
		}
		patchGlobexT(t, `{"spec":{"placement":{"inject":false}}}`)
		waitUntilRefusedT(t, newPod("probe", globexAPI, nil), poolsPolicy)
	})

	// (ix) Make before break for workloads. Switching to organization isolation: the stack pools are kept
	// until the organization's pool is Ready, and pods of either placement are admitted meanwhile. Karpenter
	// keeps a retired NodeClass until the nodes that use it are gone: a finalizer stands in for it on the stack
	// pools' NodeClasses.
	step(t, "MakeBeforeBreakThroughASwitchAndBack", func(t *testing.T) {
		organizationOnly := selectStack("globex", "")
		stackPools := []string{"kiso-globex.api", "kiso-globex.batch"}
		retiredNodeClasses := map[string]types.UID{}
		// Karpenter's nodes hold each stack NodeClass, and, for as long as the test says, each NodePool: as the
		// garbage collector holds one Crossplane deletes in the foreground until its dependents are gone, and as
		// Karpenter would while it drains.
		for _, pool := range stackPools {
			retiredNodeClasses[pool] = env.Cluster.GetT(t, EC2NodeClassKind, "", pool).GetUID()
			holdObject(t, EC2NodeClassKind, "ec2nodeclass", pool)
			t.Cleanup(func() { releaseObject(t, EC2NodeClassKind, "ec2nodeclass", pool) })
			holdObject(t, NodePoolKind, "nodepool", pool)
			t.Cleanup(func() { releaseObject(t, NodePoolKind, "nodepool", pool) })
		}
		patchGlobexT(t, `{"spec":{"isolation":"organization"}}`)
		waitClaimConditionT(t, globexClaimNamespace, globexClaim, "PoolsSettled", "False", "ReplacingPools")
		waitUntilAdmittedT(t, newPod("probe", globexAPI, organizationOnly, tolerateGlobex))
		createPodT(t, newPod("old-placement", globexAPI, ownSelector, tolerateGlobex, tolerateAPI))
		markReady(t, NodePoolKind, "kiso-globex")
		markReady(t, EC2NodeClassKind, "kiso-globex")
		waitClaimConditionT(t, globexClaimNamespace, globexClaim, "PoolsSettled", "True", "Settled")
		// Crossplane deleted the retired NodePools and no longer observes them, and they are still there. kiso says
		// it keeps their NodeClasses, having read the NodePools being deleted from the cluster, not from what
		// Crossplane observes; it keeps them until each NodePool is gone.
		env.Cluster.WaitForT(t, xrSettleTimeout, IsolationClaimKind, globexClaimNamespace, globexClaim, func(u *unstructured.Unstructured) (bool, string) {
			c, _ := Condition(u, "PoolsSettled")
			for _, pool := range stackPools {
				if !strings.Contains(c.Message, "retired EC2NodeClass "+pool+" goes once NodePool "+pool+" (being deleted) no longer uses it") {
					return false, "PoolsSettled: " + c.Status + " " + c.Reason + " " + c.Message
				}
			}
			return true, ""
		})
		for _, pool := range stackPools {
			if u := env.Cluster.GetT(t, EC2NodeClassKind, "", pool); u.GetDeletionTimestamp() != nil {
				t.Errorf("EC2NodeClass %s is being deleted while NodePool %s, being deleted, still launches from it", pool, pool)
			}
			releaseObject(t, NodePoolKind, "nodepool", pool)
		}
		for _, pool := range stackPools {
			env.Cluster.WaitForT(t, xrSettleTimeout, EC2NodeClassKind, "", pool, func(u *unstructured.Unstructured) (bool, string) {
				return u.GetDeletionTimestamp() != nil, "not being deleted yet"
			})
		}
		// Crossplane deleted each retired NodeClass only once its NodePool was gone: the cluster's policy never
		// refused it one, so Crossplane never gave up a reconcile of the XR on a refusal (it says so in a
		// Warning event when it does).
		globexXR, _, _ := unstructured.NestedString(env.Cluster.GetT(t, IsolationClaimKind, globexClaimNamespace, globexClaim).Object, "spec", "resourceRef", "name")
		if refusals := warningsAboutT(t, IsolationKind.Kind, globexXR, nodeClassGuardPolicy); len(refusals) > 0 {
			t.Errorf("Crossplane was refused the deletion of a retired EC2NodeClass (kiso stopped composing it while its NodePool still launched from it): %q", refusals)
		}

		// And back to stack isolation while the stack NodeClasses are still being deleted, still saying Ready.
		// The stack NodePools are composed again and Karpenter reports them Ready beside those NodeClasses; the
		// organization's pool is kept all the same, since no new node would use a NodeClass being deleted.
		// Meanwhile the organization's pods are still admitted in globex-api; once the stack's pool is Ready and
		// the old one gone, only the stack's placement is.
		patchGlobexT(t, `{"spec":{"isolation":"stack"}}`)
		waitClaimConditionT(t, globexClaimNamespace, globexClaim, "PoolsSettled", "False", "ReplacingPools")
		waitForSelectGrantT(t, globexAPI, "globex.api")
		createPodT(t, newPod("organization-placement-while-kept", globexAPI, organizationOnly, tolerateGlobex))
		// Karpenter reports the NodePools composed again Ready and counts what their nodes hold, the NodeClasses
		// being deleted still saying Ready. Once kiso reports what the NodePools count, it has seen all of it, and
		// Crossplane has applied (or deleted) what it rendered from it.
		bound := env.Cluster.GetT(t, IsolationClaimKind, globexClaimNamespace, globexClaim)
		xr, _, _ = unstructured.NestedString(bound.Object, "spec", "resourceRef", "name")
		for _, pool := range stackPools {
			reportReady(t, env.Cluster.GetT(t, EC2NodeClassKind, "", pool))
			markReady(t, NodePoolKind, pool)
			if _, err := env.Kubectl.Run(t.Context(), nil, "patch", "nodepool", pool, "--subresource=status", "--type=merge",
				"-p", `{"status":{"resources":{"cpu":"3"}}}`); err != nil {
				t.Fatalf("cannot set what NodePool %s counts: %v", pool, err)
			}
		}
		waitForT(t, xrSettleTimeout, "kiso to report what the stack NodePools count", func(ctx context.Context) (bool, string, error) {
			u, err := env.Cluster.Get(ctx, IsolationKind, "", xr)
			if err != nil {
				return false, "", err
			}
			pools, _, _ := unstructured.NestedSlice(u.Object, "status", "pools")
			counted := 0
			for _, p := range pools {
				p, _ := p.(map[string]any)
				cpu, _, _ := unstructured.NestedString(p, "resources", "cpu")
				if slices.Contains(stackPools, fmt.Sprint(p["name"])) && cpu == "3" {
					counted++
				}
			}
			return counted == len(stackPools), fmt.Sprintf("%d of %d stack pools counted", counted, len(stackPools)), nil
		})
		for _, kind := range []schema.GroupVersionKind{NodePoolKind, EC2NodeClassKind} {
			kept, err := env.Cluster.Get(t.Context(), kind, "", "kiso-globex")
			if err != nil || kept.GetDeletionTimestamp() != nil {
				t.Errorf("the organization's %s kiso-globex is given up while the stack NodeClasses are being deleted (%v)", kind.Kind, err)
			}
		}
		if c, _ := Condition(env.Cluster.GetT(t, IsolationClaimKind, globexClaimNamespace, globexClaim), "PoolsSettled"); c.Status != "False" {
			t.Errorf("PoolsSettled is %s (%s) while the stack NodeClasses are being deleted", c.Status, c.Message)
		}
		// Karpenter's nodes are gone: the NodeClasses go, kiso composes them anew, and they become Ready.
		composedAgain := map[string]types.UID{}
		for _, pool := range stackPools {
			releaseObject(t, EC2NodeClassKind, "ec2nodeclass", pool)
			waitForT(t, xrSettleTimeout, "NodeClass "+pool+" composed anew", func(ctx context.Context) (bool, string, error) {
				u, err := env.Cluster.Get(ctx, EC2NodeClassKind, "", pool)
				if err != nil || u.GetUID() == retiredNodeClasses[pool] || u.GetDeletionTimestamp() != nil {
					return false, fmt.Sprintf("not composed anew yet (%v)", err), nil
				}
				composedAgain[pool] = u.GetUID()
				return true, "", nil
			})
			markReady(t, EC2NodeClassKind, pool)
		}
		waitClaimConditionT(t, globexClaimNamespace, globexClaim, "PoolsSettled", "True", "Settled")
		// Nothing replays a deletion: the NodeClasses composed anew are still there.
		for pool, uid := range composedAgain {
			if u := env.Cluster.GetT(t, EC2NodeClassKind, "", pool); u.GetUID() != uid || u.GetDeletionTimestamp() != nil {
				t.Errorf("EC2NodeClass %s was deleted after the stack pools settled (uid %s, composed anew as %s)", pool, u.GetUID(), uid)
			}
		}
		waitUntilRefusedT(t, newPod("probe", globexAPI, organizationOnly, tolerateGlobex), poolsPolicy)
		assertRefusedT(t, newPod("organization-placement-after", globexAPI, organizationOnly, tolerateGlobex), poolsPolicy, wantAPISelectors)
	})

	// Moving a namespace into a stack: the claim lists it, and its pods are the organization's once the
	// platform gives it to the organization. Before, a pod there tolerating the organization is a
	// foreigner's, the claim's listing notwithstanding; after, it is the organization's own.
	step(t, "ANamespaceJoinsOnlyWhenThePlatformGivesIt", func(t *testing.T) {
		batchSelector := selectStack("globex", "batch")
		patchGlobexT(t, `{"spec":{"stacks":[{"name":"api"},{"name":"batch","namespaces":["globex-batch","globex-reports"]}]}}`)
		waitClaimConditionT(t, globexClaimNamespace, globexClaim, "NamespacesAssigned", "False", "NotAssigned")
		assertRefusedT(t, newPod("reports-before", globexReports, batchSelector, tolerateGlobex, tolerateBatch), placementPolicy, foreignToleration(globexReports))
		if _, err := env.Cluster.Get(t.Context(), RBACRoleKind, globexReports, "kiso-placement"); err == nil {
			t.Errorf("namespace %s is granted to globex because its claim lists it, before the platform gives it", globexReports)
		}
		env.TryT(t, nil, "label", "namespace", globexReports, "kiso.dev/organization=globex")
		waitClaimConditionT(t, globexClaimNamespace, globexClaim, "NamespacesAssigned", "True", "Assigned")
		waitUntilAdmittedT(t, newPod("probe", globexReports, batchSelector, tolerateGlobex, tolerateBatch))
		createPodT(t, newPod("reports-after", globexReports, batchSelector, tolerateGlobex, tolerateBatch))
	})

	// Deleting the claim takes its grants with it. The namespaces are still globex's, as the platform says:
	// they refuse every pod (a grant fails closed) until a claim of globex grants them again.
	step(t, "DeletingTheClaimLeavesItsNamespacesClosed", func(t *testing.T) {
		env.DeleteT(t, claim)
		env.Cluster.WaitForDeletionT(t, 90*time.Second, IsolationKind, "", xr)
		for _, ns := range []string{globexAPI, globexBatch, globexReports} {
			env.Cluster.WaitForDeletionT(t, 90*time.Second, RBACRoleKind, ns, "kiso-placement")
		}
		waitUntilRefusedT(t, newPod("probe", globexAPI, ownSelector, tolerateGlobex, tolerateAPI), poolsPolicy)
	})
}

// daemonSetControllerUser is who the DaemonSet controller creates pods as (kube-controller-manager runs
// with --use-service-account-credentials).
const daemonSetControllerUser = "system:serviceaccount:kube-system:daemon-set-controller"

// patchGlobexT changes the claim as its owner would.
func patchGlobexT(t *testing.T, patch string) {
	t.Helper()
	if _, err := env.Kubectl.Run(t.Context(), nil, "patch", "karpenterisolation", globexClaim, "-n", globexClaimNamespace, "--type=merge", "-p", patch); err != nil {
		t.Fatalf("cannot patch claim %s/%s with %s: %v", globexClaimNamespace, globexClaim, patch, err)
	}
}
