package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	admissionregistrationv1beta1 "k8s.io/api/admissionregistration/v1beta1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

// The admission scenario's organization, its claim and its namespaces.
const (
	globexClaimNamespace = "e2e-globex"
	globexClaim          = "globex"
	globexAPI            = "globex-api"
	globexBatch          = "globex-batch"
	globexReports        = "globex-reports" // joins stack batch during the scenario
	outsiderNamespace    = "e2e-outsider"
	exemptNamespace      = "e2e-platform-agents" // labelled kiso.dev/placement-exempt
	globexPolicy         = "kiso-globex"
	globexInjectPolicy   = "kiso-globex-inject"
)

// policyInForceTimeout bounds how long a claim change takes to reach the apiserver's admission: Crossplane
// re-renders the claim, applies the policies, and the apiserver reloads them.
const policyInForceTimeout = 60 * time.Second

// The tolerations a pod of organization globex carries, as the claim's status tells it.
var (
	tolerateGlobex   = corev1.Toleration{Key: "kiso.dev/organization", Operator: corev1.TolerationOpEqual, Value: "globex", Effect: corev1.TaintEffectNoSchedule}
	tolerateAPI      = corev1.Toleration{Key: "kiso.dev/stack", Operator: corev1.TolerationOpEqual, Value: "api", Effect: corev1.TaintEffectNoSchedule}
	tolerateBatch    = corev1.Toleration{Key: "kiso.dev/stack", Operator: corev1.TolerationOpEqual, Value: "batch", Effect: corev1.TaintEffectNoSchedule}
	tolerateEveryone = corev1.Toleration{Operator: corev1.TolerationOpExists}
	// The DefaultTolerationSeconds admission plugin, on in every cluster, adds these to every pod.
	defaultTolerations = []corev1.Toleration{
		{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
		{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
	}
)

// What the validating policy tells a pod that breaks each of its rules.
const (
	wantAPISelectors   = "pods in namespace globex-api run on pool kiso-globex-api: add nodeSelector kiso.dev/organization=globex, kiso.dev/stack=api and tolerations kiso.dev/organization=globex:NoSchedule, kiso.dev/stack=api:NoSchedule"
	wantBatchSelectors = "pods in namespace globex-batch run on pool kiso-globex-batch: add nodeSelector kiso.dev/organization=globex, kiso.dev/stack=batch and tolerations kiso.dev/organization=globex:NoSchedule, kiso.dev/stack=batch:NoSchedule"
)

func foreignToleration(namespace string) string {
	return "pods outside organization globex must not tolerate its taint kiso.dev/organization=globex (nor every taint): remove that toleration from the pod in namespace " + namespace
}

// TestAdmissionKeepsPodsOnTheirPools is scenario 7a: real pods, submitted with kubectl as a team would, meet
// the admission policies an organization's claim renders. Pods stay Pending (no kubelet runs): what the
// apiserver admits, refuses and stores is what is tested. It proves that the rendered CEL compiles and
// type-checks on a real apiserver; that a stack's pods are refused unless they select their own pool, with a
// message saying what to add; that no pod elsewhere may tolerate the organization's taint, or every taint,
// except a DaemonSet's or in a namespace the platform exempts; that a Job's pods, created by the Job controller, are held to the same rules; that
// injection adds exactly what is missing and nothing twice; and that a claim change moves the policies at
// once, before the pools it asks for are Ready.
func TestAdmissionKeepsPodsOnTheirPools(t *testing.T) {
	useReferenceObjectsT(t)
	namespaces := readTestdataT(t, "admission", "namespaces.yaml")
	claim := readTestdataT(t, "admission", "claim.yaml")
	env.ApplyT(t, namespaces)
	t.Cleanup(func() { deleteAtCleanup(t, namespaces) })
	for _, ns := range []string{globexAPI, globexBatch, globexReports, outsiderNamespace, exemptNamespace} {
		// The ServiceAccount admission plugin refuses pods until their namespace's default account exists.
		waitForDefaultServiceAccountT(t, ns)
	}
	env.ApplyT(t, claim)
	t.Cleanup(func() { deleteAtCleanup(t, claim) })

	api := env.Cluster.Typed.AdmissionregistrationV1()
	var policy *admissionregistrationv1.ValidatingAdmissionPolicy
	waitForT(t, 60*time.Second, "ValidatingAdmissionPolicy "+globexPolicy+" type-checked by the apiserver", func(ctx context.Context) (bool, string, error) {
		p, err := api.ValidatingAdmissionPolicies().Get(ctx, globexPolicy, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		policy = p
		if p.Status.ObservedGeneration != p.Generation || p.Status.TypeChecking == nil {
			return false, fmt.Sprintf("status of generation %d, policy at %d", p.Status.ObservedGeneration, p.Generation), nil
		}
		return true, "", nil
	})
	// A warning means an expression refers to something a Pod does not have: it would fail at admission.
	if warnings := policy.Status.TypeChecking.ExpressionWarnings; len(warnings) > 0 {
		t.Errorf("ValidatingAdmissionPolicy %s does not type-check against Pod: %+v", globexPolicy, warnings)
	}
	waitForT(t, 30*time.Second, "ValidatingAdmissionPolicyBinding "+globexPolicy, func(ctx context.Context) (bool, string, error) {
		b, err := api.ValidatingAdmissionPolicyBindings().Get(ctx, globexPolicy, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		return b.Spec.PolicyName == globexPolicy, "binds policy " + b.Spec.PolicyName, nil
	})

	waitUntilRefusedT(t, newPod("probe", globexAPI, nil))

	// (i) A stack's pod that selects nothing is refused, and told what to add.
	assertRefusedT(t, newPod("no-selector", globexAPI, nil), wantAPISelectors)

	// (ii) The same pod with its stack's node selector and tolerations is admitted, unchanged.
	ownSelector := map[string]string{"kiso.dev/organization": "globex", "kiso.dev/stack": "api"}
	selecting := createPodT(t, newPod("selects-api", globexAPI, ownSelector, tolerateGlobex, tolerateAPI))
	wantSelecting := podPlacement{NodeSelector: ownSelector, Tolerations: append([]corev1.Toleration{tolerateGlobex, tolerateAPI}, defaultTolerations...)}
	if diff := cmp.Diff(wantSelecting, placementOf(selecting)); diff != "" {
		t.Errorf("admitted pod %s/%s placement: -want, +got:\n%s", globexAPI, selecting.Name, diff)
	}

	// (iii) Selecting another stack of the same organization is refused: each stack has its own pool.
	assertRefusedT(t, newPod("selects-batch", globexAPI, map[string]string{"kiso.dev/organization": "globex", "kiso.dev/stack": "batch"}, tolerateGlobex, tolerateBatch),
		wantAPISelectors)
	// So is selecting the organization without the stack.
	assertRefusedT(t, newPod("selects-organization", globexAPI, map[string]string{"kiso.dev/organization": "globex"}, tolerateGlobex), wantAPISelectors)

	// (iv) Elsewhere, tolerating the organization's taint, or every taint, is refused; a DaemonSet's pod may
	// tolerate every taint (per-node agents run on every node); a pod that does neither is none of kiso's
	// business.
	assertRefusedT(t, newPod("tolerates-globex", outsiderNamespace, nil, tolerateGlobex), foreignToleration(outsiderNamespace))
	assertRefusedT(t, newPod("tolerates-everything", outsiderNamespace, nil, tolerateEveryone), foreignToleration(outsiderNamespace))
	daemonSet := createDaemonSetT(t, outsiderNamespace, "node-agent")
	agent := newPod("node-agent-x7k2p", outsiderNamespace, nil, tolerateEveryone)
	agent.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: "apps/v1", Kind: "DaemonSet", Name: daemonSet.Name, UID: daemonSet.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}}
	// Anyone can write a DaemonSet owner reference: the same pod submitted by a user is refused...
	assertRefusedT(t, agent, foreignToleration(outsiderNamespace))
	// ...and admitted when the DaemonSet controller creates it (no node exists for the real controller to
	// create one, so the test creates it as the controller's identity).
	createPodAsT(t, agent, daemonSetControllerUser)
	createPodT(t, newPod("unrelated", outsiderNamespace, nil))
	// A namespace the platform labels exempt is left alone, whatever its pods tolerate.
	createPodT(t, newPod("platform-agent", exemptNamespace, nil, tolerateEveryone))

	// (v) A Job's pod is held to the same rule: the Job controller's pod is refused, and the Job says why.
	refusedJob := createJobT(t, globexBatch, "reindex")
	event := waitForJobEventT(t, refusedJob, "FailedCreate")
	// The Job controller names its pods <job>-<five random characters>.
	wantEvent := regexp.MustCompile(`^Error creating: pods "reindex-[a-z0-9]{5}" is forbidden: ` +
		regexp.QuoteMeta("ValidatingAdmissionPolicy 'kiso-globex' with binding 'kiso-globex' denied request: "+wantBatchSelectors) + `$`)
	if event.Type != corev1.EventTypeWarning || !wantEvent.MatchString(event.Message) {
		t.Errorf("Job %s/%s event FailedCreate: %s %q; want a Warning matching %s", globexBatch, refusedJob.Name, event.Type, event.Message, wantEvent)
	}
	if pods := jobPodsT(t, refusedJob); len(pods) != 0 {
		t.Errorf("Job %s/%s has pods %v; the policy should have refused every one", globexBatch, refusedJob.Name, podNames(pods))
	}
	// Deleted now, so its retries cannot succeed once injection is on and confuse what follows.
	deleteJobT(t, refusedJob)

	// With injection on, a stack's pod that selects nothing is admitted with its pool's node selector and
	// tolerations added.
	patchClaimT(t, `{"spec":{"placement":{"inject":true}}}`)
	waitUntilAdmittedT(t, newPod("probe", globexAPI, nil))
	injected := createPodT(t, newPod("injected", globexAPI, nil))
	wantInjected := podPlacement{NodeSelector: ownSelector, Tolerations: append(append([]corev1.Toleration{}, defaultTolerations...), tolerateGlobex, tolerateAPI)}
	if diff := cmp.Diff(wantInjected, placementOf(injected)); diff != "" {
		t.Errorf("pod %s/%s as injected: -want, +got:\n%s", globexAPI, injected.Name, diff)
	}
	// A pod that already carries them is stored exactly as without injection: nothing added twice.
	again := createPodT(t, newPod("selects-api-injected", globexAPI, ownSelector, tolerateGlobex, tolerateAPI))
	if diff := cmp.Diff(placementOf(selecting), placementOf(again)); diff != "" {
		t.Errorf("injection changed a pod that already selects its pool: -without injection, +with:\n%s", diff)
	}
	// A pod that asks for another stack's pool is not silently moved: injection leaves its selector, and
	// the validating policy refuses it.
	assertRefusedT(t, newPod("selects-batch-injected", globexAPI, map[string]string{"kiso.dev/organization": "globex", "kiso.dev/stack": "batch"}, tolerateGlobex, tolerateBatch),
		wantAPISelectors)
	// Injecting into an injected pod changes nothing.
	reinjected := createPodT(t, newPod("injected-twice", globexAPI, injected.Spec.NodeSelector, injected.Spec.Tolerations...))
	if diff := cmp.Diff(placementOf(injected), placementOf(reinjected)); diff != "" {
		t.Errorf("injecting twice changed the pod: -injected once, +twice:\n%s", diff)
	}
	// A Job's pod, as the Job controller creates it, is injected too.
	injectedJob := createJobT(t, globexBatch, "reindex-injected")
	jobPod := waitForJobPodT(t, injectedJob)
	wantJobPod := podPlacement{
		NodeSelector: map[string]string{"kiso.dev/organization": "globex", "kiso.dev/stack": "batch"},
		Tolerations:  append(append([]corev1.Toleration{}, defaultTolerations...), tolerateGlobex, tolerateBatch),
	}
	if diff := cmp.Diff(wantJobPod, placementOf(jobPod)); diff != "" {
		t.Errorf("Job %s/%s pod %s as injected: -want, +got:\n%s", globexBatch, injectedJob.Name, jobPod.Name, diff)
	}

	// Switching to organization isolation moves the policies at once, while kiso still keeps the stack
	// pools (the new pool is not Ready: no Karpenter runs): a pod created now gets the organization's pool.
	patchClaimT(t, `{"spec":{"isolation":"organization"}}`)
	organizationOnly := map[string]string{"kiso.dev/organization": "globex"}
	waitForPlacementT(t, newPod("probe", globexAPI, nil), organizationOnly)
	switched := createPodT(t, newPod("after-switch", globexAPI, nil))
	wantSwitched := podPlacement{NodeSelector: organizationOnly, Tolerations: append(append([]corev1.Toleration{}, defaultTolerations...), tolerateGlobex)}
	if diff := cmp.Diff(wantSwitched, placementOf(switched)); diff != "" {
		t.Errorf("pod %s/%s created after the switch to organization isolation: -want, +got:\n%s", globexAPI, switched.Name, diff)
	}
	claimNow := env.Cluster.GetT(t, IsolationClaimKind, globexClaimNamespace, globexClaim)
	if c, _ := Condition(claimNow, "PoolsSettled"); c.Status != "False" || c.Reason != "ReplacingPools" {
		t.Errorf("claim PoolsSettled=%s reason %s (%s); want False ReplacingPools: the stack pools are kept until the new pool is Ready, and the policies must not wait for that",
			c.Status, c.Reason, c.Message)
	}

	// Moving a namespace into a stack: its pods are the organization's from then on. Before, a pod there
	// tolerating the organization is a foreigner's; after, it is the organization's own.
	assertRefusedT(t, newPod("reports-before", globexReports, organizationOnly, tolerateGlobex), foreignToleration(globexReports))
	patchClaimT(t, `{"spec":{"stacks":[{"name":"api"},{"name":"batch","namespaces":["globex-batch","globex-reports"]}]}}`)
	waitForPlacementT(t, newPod("probe", globexReports, nil), organizationOnly)
	createPodT(t, newPod("reports-after", globexReports, organizationOnly, tolerateGlobex))
	moved := createPodT(t, newPod("reports-injected", globexReports, nil))
	if diff := cmp.Diff(wantSwitched, placementOf(moved)); diff != "" {
		t.Errorf("pod %s/%s created after the namespace joined stack batch: -want, +got:\n%s", globexReports, moved.Name, diff)
	}

	// Deleting the claim takes its policies with it: nothing is left enforcing placement for an
	// organization that no longer exists.
	bound := env.Cluster.GetT(t, IsolationClaimKind, globexClaimNamespace, globexClaim)
	xr, _, _ := unstructured.NestedString(bound.Object, "spec", "resourceRef", "name")
	env.DeleteT(t, claim)
	env.Cluster.WaitForDeletionT(t, 90*time.Second, IsolationKind, "", xr)
	for _, kind := range []schema.GroupVersionKind{
		admissionregistrationv1.SchemeGroupVersion.WithKind("ValidatingAdmissionPolicy"),
		admissionregistrationv1.SchemeGroupVersion.WithKind("ValidatingAdmissionPolicyBinding"),
	} {
		env.Cluster.WaitForDeletionT(t, 90*time.Second, kind, "", globexPolicy)
	}
	for _, kind := range []schema.GroupVersionKind{
		admissionregistrationv1beta1.SchemeGroupVersion.WithKind("MutatingAdmissionPolicy"),
		admissionregistrationv1beta1.SchemeGroupVersion.WithKind("MutatingAdmissionPolicyBinding"),
	} {
		env.Cluster.WaitForDeletionT(t, 90*time.Second, kind, "", globexInjectPolicy)
	}
}

// podPlacement is what decides where a pod may run: what the policies check and inject.
type podPlacement struct {
	NodeSelector map[string]string
	Tolerations  []corev1.Toleration
}

func placementOf(p *corev1.Pod) podPlacement {
	return podPlacement{NodeSelector: p.Spec.NodeSelector, Tolerations: p.Spec.Tolerations}
}

// newPod is the smallest pod a team would submit. Its image is never pulled: no kubelet runs.
func newPod(name, namespace string, nodeSelector map[string]string, tolerations ...corev1.Toleration) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: corev1.PodSpec{
			Containers:   []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}},
			NodeSelector: nodeSelector,
			Tolerations:  tolerations,
		},
	}
}

// submitPod runs `kubectl create` with the pod, as a user would, with --dry-run=server if dryRun (the
// apiserver admits or refuses it exactly as it would, and stores nothing).
func submitPod(t *testing.T, pod *corev1.Pod, dryRun bool) Outcome {
	t.Helper()
	manifest, err := json.Marshal(pod)
	if err != nil {
		t.Fatalf("cannot encode pod %s: %v", pod.Name, err)
	}
	args := []string{"create", "-f", "-", "-o", "json"}
	if dryRun {
		args = append(args, "--dry-run=server")
	}
	return env.TryT(t, manifest, args...)
}

// daemonSetControllerUser is who the DaemonSet controller creates pods as (kube-controller-manager runs
// with --use-service-account-credentials).
const daemonSetControllerUser = "system:serviceaccount:kube-system:daemon-set-controller"

// createPodAsT creates a pod as another user (kubectl --as) that admission must allow.
func createPodAsT(t *testing.T, pod *corev1.Pod, user string) *corev1.Pod {
	t.Helper()
	manifest, err := json.Marshal(pod)
	if err != nil {
		t.Fatalf("cannot encode pod %s: %v", pod.Name, err)
	}
	out := env.TryT(t, manifest, "create", "-f", "-", "-o", "json", "--as="+user)
	if out.ExitCode != 0 {
		t.Fatalf("kubectl create pod %s/%s as %s: exit %d, want it admitted: %s", pod.Namespace, pod.Name, user, out.ExitCode, strings.TrimSpace(out.Stderr))
	}
	stored := &corev1.Pod{}
	if err := json.Unmarshal([]byte(out.Stdout), stored); err != nil {
		t.Fatalf("cannot decode the pod kubectl printed: %v", err)
	}
	return stored
}

// createPodT creates a pod that admission must allow and returns it as the apiserver stored it.
func createPodT(t *testing.T, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	out := submitPod(t, pod, false)
	if out.ExitCode != 0 {
		t.Fatalf("kubectl create pod %s/%s: exit %d, want it admitted: %s", pod.Namespace, pod.Name, out.ExitCode, strings.TrimSpace(out.Stderr))
	}
	stored := &corev1.Pod{}
	if err := json.Unmarshal([]byte(out.Stdout), stored); err != nil {
		t.Fatalf("cannot decode the pod kubectl printed: %v", err)
	}
	return stored
}

// refusal is what kubectl prints when the validating policy refuses a pod.
func refusal(pod *corev1.Pod, message string) string {
	return fmt.Sprintf(`Error from server (Forbidden): error when creating "STDIN": pods %q is forbidden: ValidatingAdmissionPolicy '%s' with binding '%s' denied request: %s`,
		pod.Name, globexPolicy, globexPolicy, message)
}

// assertRefusedT submits a pod that admission must refuse with exactly this message.
func assertRefusedT(t *testing.T, pod *corev1.Pod, message string) {
	t.Helper()
	out := submitPod(t, pod, false)
	if out.ExitCode == 0 {
		t.Errorf("kubectl create pod %s/%s succeeded; want it refused with %q", pod.Namespace, pod.Name, message)
		return
	}
	if got, want := strings.TrimSpace(out.Stderr), refusal(pod, message); got != want {
		t.Errorf("kubectl create pod %s/%s: exit %d,\n got %s\nwant %s", pod.Namespace, pod.Name, out.ExitCode, got, want)
	}
}

// waitUntilRefusedT waits until the apiserver enforces the policy: it loads policies asynchronously, a
// moment after they are written.
func waitUntilRefusedT(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	waitForT(t, policyInForceTimeout, "the policy to refuse pod "+pod.Namespace+"/"+pod.Name, func(context.Context) (bool, string, error) {
		out := submitPod(t, pod, true)
		if out.ExitCode == 0 {
			return false, "admitted", nil
		}
		return strings.Contains(out.Stderr, "ValidatingAdmissionPolicy '"+globexPolicy+"'"), strings.TrimSpace(out.Stderr), nil
	})
}

// waitUntilAdmittedT waits until the apiserver admits the pod (dry run).
func waitUntilAdmittedT(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	waitForT(t, policyInForceTimeout, "the policies to admit pod "+pod.Namespace+"/"+pod.Name, func(context.Context) (bool, string, error) {
		out := submitPod(t, pod, true)
		return out.ExitCode == 0, strings.TrimSpace(out.Stderr), nil
	})
}

// waitForPlacementT waits until the apiserver admits the pod (dry run) with exactly this node selector
// injected: the policies then follow the claim's latest spec.
func waitForPlacementT(t *testing.T, pod *corev1.Pod, nodeSelector map[string]string) {
	t.Helper()
	waitForT(t, policyInForceTimeout, fmt.Sprintf("pod %s/%s to be admitted with node selector %v", pod.Namespace, pod.Name, nodeSelector), func(context.Context) (bool, string, error) {
		out := submitPod(t, pod, true)
		if out.ExitCode != 0 {
			return false, strings.TrimSpace(out.Stderr), nil
		}
		got := &corev1.Pod{}
		if err := json.Unmarshal([]byte(out.Stdout), got); err != nil {
			return false, "", err
		}
		return cmp.Equal(nodeSelector, got.Spec.NodeSelector), fmt.Sprintf("admitted with node selector %v", got.Spec.NodeSelector), nil
	})
}

// patchClaimT changes the claim as its owner would.
func patchClaimT(t *testing.T, patch string) {
	t.Helper()
	if _, err := env.Kubectl.Run(t.Context(), nil, "patch", "karpenterisolation", globexClaim, "-n", globexClaimNamespace, "--type=merge", "-p", patch); err != nil {
		t.Fatalf("cannot patch claim %s/%s with %s: %v", globexClaimNamespace, globexClaim, patch, err)
	}
}

// createDaemonSetT creates a DaemonSet for pods to name as their owner. No DaemonSet controller runs, so it
// makes no pods itself.
func createDaemonSetT(t *testing.T, namespace, name string) *appsv1.DaemonSet {
	t.Helper()
	labels := map[string]string{"app": name}
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					Containers:  []corev1.Container{{Name: "agent", Image: "registry.k8s.io/pause:3.10"}},
					Tolerations: []corev1.Toleration{tolerateEveryone},
				},
			},
		},
	}
	created, err := env.Cluster.Typed.AppsV1().DaemonSets(namespace).Create(t.Context(), ds, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("cannot create DaemonSet %s/%s: %v", namespace, name, err)
	}
	return created
}

// createJobT creates a Job whose pods select nothing, as a team that never heard of kiso would write it.
func createJobT(t *testing.T, namespace, name string) *batchv1.Job {
	t.Helper()
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](0),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "reindex", Image: "registry.k8s.io/pause:3.10"}},
			}},
		},
	}
	created, err := env.Cluster.Typed.BatchV1().Jobs(namespace).Create(t.Context(), job, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("cannot create Job %s/%s: %v", namespace, name, err)
	}
	return created
}

func deleteJobT(t *testing.T, job *batchv1.Job) {
	t.Helper()
	err := env.Cluster.Typed.BatchV1().Jobs(job.Namespace).Delete(t.Context(), job.Name, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)})
	if err != nil {
		t.Fatalf("cannot delete Job %s/%s: %v", job.Namespace, job.Name, err)
	}
}

// waitForJobEventT waits for the Job controller to record an event of this reason on the Job.
func waitForJobEventT(t *testing.T, job *batchv1.Job, reason string) corev1.Event {
	t.Helper()
	var found corev1.Event
	waitForT(t, 60*time.Second, "event "+reason+" on Job "+job.Namespace+"/"+job.Name, func(ctx context.Context) (bool, string, error) {
		events, err := env.Cluster.Typed.CoreV1().Events(job.Namespace).List(ctx, metav1.ListOptions{
			FieldSelector: "involvedObject.kind=Job,involvedObject.name=" + job.Name + ",involvedObject.uid=" + string(job.UID),
		})
		if err != nil {
			return false, err.Error(), nil
		}
		reasons := make([]string, 0, len(events.Items))
		for _, e := range events.Items {
			if e.Reason == reason {
				found = e
				return true, "", nil
			}
			reasons = append(reasons, e.Reason)
		}
		return false, fmt.Sprintf("events %v", reasons), nil
	})
	return found
}

// jobPodsT lists the pods the Job controller created for a Job, by the label it gives them.
func jobPodsT(t *testing.T, job *batchv1.Job) []corev1.Pod {
	t.Helper()
	pods, err := env.Cluster.Typed.CoreV1().Pods(job.Namespace).List(t.Context(), metav1.ListOptions{LabelSelector: batchv1.JobNameLabel + "=" + job.Name})
	if err != nil {
		t.Fatalf("cannot list the pods of Job %s/%s: %v", job.Namespace, job.Name, err)
	}
	return pods.Items
}

func waitForJobPodT(t *testing.T, job *batchv1.Job) *corev1.Pod {
	t.Helper()
	var pod *corev1.Pod
	waitForT(t, 60*time.Second, "the Job controller to create a pod for Job "+job.Namespace+"/"+job.Name, func(context.Context) (bool, string, error) {
		pods := jobPodsT(t, job)
		if len(pods) == 0 {
			return false, "no pod yet", nil
		}
		pod = &pods[0]
		return true, "", nil
	})
	return pod
}

func podNames(pods []corev1.Pod) []string {
	names := make([]string, 0, len(pods))
	for _, p := range pods {
		names = append(names, p.Name)
	}
	return names
}

// waitForDefaultServiceAccountT waits for the service account controller to create a namespace's default
// account.
func waitForDefaultServiceAccountT(t *testing.T, namespace string) {
	t.Helper()
	waitForT(t, 30*time.Second, "service account "+namespace+"/default", func(ctx context.Context) (bool, string, error) {
		_, err := env.Cluster.Typed.CoreV1().ServiceAccounts(namespace).Get(ctx, "default", metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		return true, "", nil
	})
}

// waitForT polls check until it reports done, failing the test on timeout with the last "not yet" reason.
func waitForT(t *testing.T, timeout time.Duration, what string, check func(context.Context) (bool, string, error)) {
	t.Helper()
	if err := waitFor(t.Context(), timeout, what, check); err != nil {
		t.Fatal(err)
	}
}

// useReferenceObjectsT applies the platform's reference NodeClass and NodePool that pools are cloned from,
// and deletes them at the end of the test if it created them.
func useReferenceObjectsT(t *testing.T) {
	t.Helper()
	references := readTestdataT(t, "isolation", "references.yaml")
	_, err := env.Cluster.Get(t.Context(), NodePoolKind, "", "tenant-reference")
	existed := err == nil
	env.ApplyT(t, references)
	if !existed {
		t.Cleanup(func() { deleteAtCleanup(t, references) })
	}
}

func readTestdataT(t *testing.T, scenario, name string) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/" + scenario + "/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// deleteAtCleanup deletes what a manifest names, waiting until it is gone; the test's context is done by
// then, so it has its own.
func deleteAtCleanup(t *testing.T, manifest []byte) {
	t.Helper()
	if err := env.Kubectl.Delete(context.Background(), manifest, true); err != nil {
		t.Errorf("cannot clean up: %v", err)
	}
}
