package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
)

// Steps that make pods and Jobs as a team would, and read what admission did with them.

// selectStack is the node selector of a stack's pool; stack "" selects the organization's.
func selectStack(organization, stack string) map[string]string {
	if stack == "" {
		return map[string]string{nodeOrganizationKey: organization}
	}
	return map[string]string{nodeOrganizationKey: organization, nodeStackKey: stack}
}

// waitForTypeCheckedT waits until the apiserver has type-checked a policy against Pod, and fails on any
// warning: a warning means an expression refers to something a Pod does not have.
func waitForTypeCheckedT(t *testing.T, name string) {
	t.Helper()
	waitForTypeCheckedInT(t, env.Cluster, placementCluster, name)
}

// waitForTypeCheckedInT is waitForTypeCheckedT for the apiserver of cluster, where the XKarpenterCluster xr
// composes the policy.
func waitForTypeCheckedInT(t *testing.T, cluster *Cluster, xr, name string) {
	t.Helper()
	api := cluster.Typed.AdmissionregistrationV1()
	var policy *admissionregistrationv1.ValidatingAdmissionPolicy
	waitForT(t, 90*time.Second, "ValidatingAdmissionPolicy "+name+" type-checked by the apiserver", func(ctx context.Context) (bool, string, error) {
		p, err := api.ValidatingAdmissionPolicies().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			// Why the cluster has not composed it, if it says.
			u, _ := env.Cluster.Get(ctx, ClusterKind, "", xr)
			if u != nil {
				synced, _ := Condition(u, "Synced")
				return false, err.Error() + "; XKarpenterCluster " + xr + ": " + conditionSummary(u) + ": " + synced.Message, nil
			}
			return false, err.Error(), nil
		}
		policy = p
		if p.Status.ObservedGeneration != p.Generation || p.Status.TypeChecking == nil {
			return false, fmt.Sprintf("status of generation %d, policy at %d", p.Status.ObservedGeneration, p.Generation), nil
		}
		return true, "", nil
	})
	if warnings := policy.Status.TypeChecking.ExpressionWarnings; len(warnings) > 0 {
		t.Errorf("ValidatingAdmissionPolicy %s does not type-check against Pod: %+v", name, warnings)
	}
}

// waitForSelectGrantT waits until a namespace's Role kiso-placement lets its pods select a pool: a rule
// granting select on that pool, not merely a rule naming it (the tolerations rule names the stack too).
func waitForSelectGrantT(t *testing.T, namespace, pool string) {
	t.Helper()
	env.Cluster.WaitForT(t, policyInForceTimeout, RBACRoleKind, namespace, "kiso-placement", func(u *unstructured.Unstructured) (bool, string) {
		rules, _, _ := unstructured.NestedSlice(u.Object, "rules")
		for _, r := range rules {
			rule, _ := r.(map[string]any)
			resources, _, _ := unstructured.NestedStringSlice(rule, "resources")
			verbs, _, _ := unstructured.NestedStringSlice(rule, "verbs")
			names, _, _ := unstructured.NestedStringSlice(rule, "resourceNames")
			if slices.Contains(resources, "pools") && slices.Contains(verbs, "select") && slices.Contains(names, pool) {
				return true, ""
			}
		}
		return false, fmt.Sprint(rules)
	})
}

// onNode makes a pod name someNode in spec.nodeName, skipping the scheduler.
func onNode(p *corev1.Pod) *corev1.Pod {
	p.Spec.NodeName = someNode
	return p
}

// createNodeT registers a Node as the administrator would (no kubelet runs for it; the apiserver taints it
// not-ready, so nothing is scheduled onto it), deleted at the end of the test.
func createNodeT(t *testing.T, name string) *corev1.Node {
	t.Helper()
	node, err := env.Cluster.Typed.CoreV1().Nodes().Create(t.Context(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("cannot create Node %s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = env.Cluster.Typed.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return node
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
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

// refusal is what kubectl prints when a validating policy refuses a pod.
func refusal(pod *corev1.Pod, policy, message string) string {
	return fmt.Sprintf(`Error from server (Forbidden): error when creating "STDIN": pods %q is forbidden: ValidatingAdmissionPolicy '%s' with binding '%s' denied request: %s`,
		pod.Name, policy, policy, message)
}

// assertRefusedT submits a pod that admission must refuse with exactly this message.
func assertRefusedT(t *testing.T, pod *corev1.Pod, policy, message string) {
	t.Helper()
	assertOutcomeRefusedT(t, pod, submitPod(t, pod, false), policy, message)
}

// assertRefusedAsT submits a pod as another user (kubectl --as) that admission must refuse.
func assertRefusedAsT(t *testing.T, pod *corev1.Pod, user, policy, message string) {
	t.Helper()
	assertOutcomeRefusedT(t, pod, env.TryT(t, mustJSON(t, pod), "create", "-f", "-", "-o", "json", "--as="+user), policy, message)
}

func assertOutcomeRefusedT(t *testing.T, pod *corev1.Pod, out Outcome, policy, message string) {
	t.Helper()
	if out.ExitCode == 0 {
		t.Errorf("kubectl create pod %s/%s succeeded; want it refused with %q", pod.Namespace, pod.Name, message)
		return
	}
	if got, want := strings.TrimSpace(out.Stderr), refusal(pod, policy, message); got != want {
		t.Errorf("kubectl create pod %s/%s: exit %d,\n got %s\nwant %s", pod.Namespace, pod.Name, out.ExitCode, got, want)
	}
}

// waitUntilRefusedT waits until the apiserver enforces a policy: it loads policies, and the grants the
// authorizer reads, asynchronously, a moment after they are written.
func waitUntilRefusedT(t *testing.T, pod *corev1.Pod, policy string) {
	t.Helper()
	waitForT(t, policyInForceTimeout, "policy "+policy+" to refuse pod "+pod.Namespace+"/"+pod.Name, func(context.Context) (bool, string, error) {
		out := submitPod(t, pod, true)
		if out.ExitCode == 0 {
			return false, "admitted", nil
		}
		return strings.Contains(out.Stderr, "ValidatingAdmissionPolicy '"+policy+"'"), strings.TrimSpace(out.Stderr), nil
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
	if err := waitForDefaultServiceAccount(t.Context(), namespace); err != nil {
		t.Fatal(err)
	}
}

// waitForDefaultServiceAccount waits for the namespace's default service account, without which a pod is refused.
func waitForDefaultServiceAccount(ctx context.Context, namespace string) error {
	return waitFor(ctx, 30*time.Second, "service account "+namespace+"/default", func(ctx context.Context) (bool, string, error) {
		_, err := env.Cluster.Typed.CoreV1().ServiceAccounts(namespace).Get(ctx, "default", metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		return true, "", nil
	})
}

// The node labels a pod of organization globex selects, as the claim's status tells it: in
// node-restriction.kubernetes.io/, which no kubelet may set on itself.
const (
	nodeOrganizationKey = "node-restriction.kubernetes.io/kiso.dev.organization"
	nodeStackKey        = "node-restriction.kubernetes.io/kiso.dev.stack"
)

var tolerateEveryone = corev1.Toleration{Operator: corev1.TolerationOpExists}

const platformHint = "only pods in platform namespaces may (crossplane-system, kube-system, and any the platform labels kiso.dev/placement-exempt=true)"

func everyTaint(namespace string) string {
	return "pod in namespace " + namespace + " tolerates every taint (a toleration with operator Exists and no key), organizations' nodes included: give the toleration a key; " + platformHint
}

// someNode is the node a pod names directly in spec.nodeName; no node of that name need exist, the refusal
// comes first.
const someNode = "ip-10-0-1-7"

// podPlacement is what decides where a pod may run: what the policies check and inject.
type podPlacement struct {
	NodeSelector map[string]string
	Tolerations  []corev1.Toleration
}
