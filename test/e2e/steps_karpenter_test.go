package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
)

// Steps of the outcome scenarios, with the real Karpenter, kube-scheduler and kwok: what a claim reports,
// workloads, and where their pods land.

// waitForOrganizationT waits until a claim reports every pool Ready and returns what its status says.
func waitForOrganizationT(t *testing.T, namespace, name, organizationName string) organization {
	t.Helper()
	claim := env.Cluster.WaitForT(t, poolsReadyTimeout, IsolationClaimKind, namespace, name, poolsReady)
	return organizationOf(claim, organizationName)
}

// poolsReady is done once the claim reports pools and each of them Ready.
func poolsReady(u *unstructured.Unstructured) (bool, string) {
	pools, _, _ := unstructured.NestedSlice(u.Object, "status", "pools")
	if len(pools) == 0 {
		return false, "no pools in status; conditions " + conditionSummary(u)
	}
	for _, raw := range pools {
		p, _ := raw.(map[string]any)
		if ready, _ := p["ready"].(bool); !ready {
			return false, fmt.Sprintf("pool %v not Ready", p["name"])
		}
	}
	return true, ""
}

// organizationOf reads an organization's pools and each stack's placement from its claim's status.
func organizationOf(claim *unstructured.Unstructured, organizationName string) organization {
	org := organization{Name: organizationName, ClaimNamespace: claim.GetNamespace(), Stacks: map[string]stackPlacement{}}
	pools, _, _ := unstructured.NestedSlice(claim.Object, "status", "pools")
	for _, raw := range pools {
		p, _ := raw.(map[string]any)
		org.Pools = append(org.Pools, fmt.Sprint(p["name"]))
	}
	stacks, _, _ := unstructured.NestedSlice(claim.Object, "status", "stacks")
	for _, raw := range stacks {
		s, _ := raw.(map[string]any)
		sp := stackPlacement{NodeSelector: map[string]string{}}
		sp.Pool, _ = s["pool"].(string)
		nss, _, _ := unstructured.NestedStringSlice(s, "namespaces")
		sp.Namespaces = nss
		selector, _, _ := unstructured.NestedStringMap(s, "nodeSelector")
		maps.Copy(sp.NodeSelector, selector)
		tolerations, _, _ := unstructured.NestedSlice(s, "tolerations")
		for _, rt := range tolerations {
			tm, _ := rt.(map[string]any)
			str := func(k string) string { v, _ := tm[k].(string); return v }
			sp.Tolerations = append(sp.Tolerations, corev1.Toleration{
				Key: str("key"), Operator: corev1.TolerationOperator(str("operator")), Value: str("value"), Effect: corev1.TaintEffect(str("effect")),
			})
		}
		org.Stacks[fmt.Sprint(s["name"])] = sp
	}
	return org
}

// assertReadyByKarpenterT checks that a NodePool is Ready with the conditions only Karpenter sets, and its
// NodeClass Ready.
func assertReadyByKarpenterT(t *testing.T, pool string) {
	t.Helper()
	np := env.Cluster.WaitForConditionT(t, poolsReadyTimeout, NodePoolKind, "", pool, "Ready")
	for _, c := range []string{"ValidationSucceeded", "NodeClassReady"} {
		if got, ok := Condition(np, c); !ok || got.Status != "True" {
			t.Errorf("NodePool %s condition %s = %+v; want True, set by Karpenter", pool, c, got)
		}
	}
	ref, _, _ := unstructured.NestedMap(np.Object, "spec", "template", "spec", "nodeClassRef")
	if ref["group"] != KWOKNodeClassKind.Group || ref["kind"] != KWOKNodeClassKind.Kind {
		t.Errorf("NodePool %s nodeClassRef %v; want a KWOKNodeClass", pool, ref)
	}
	env.Cluster.WaitForConditionT(t, poolsReadyTimeout, KWOKNodeClassKind, "", fmt.Sprint(ref["name"]), "Ready")
}

// createDeploymentT creates a Deployment of pods requesting cpu each, with the placement given (nil where
// admission injects it).
func createDeploymentT(t *testing.T, namespace, name string, replicas int32, cpu string, nodeSelector map[string]string, tolerations []corev1.Toleration) {
	t.Helper()
	if err := createDeployment(t.Context(), namespace, name, replicas, cpu, nodeSelector, tolerations); err != nil {
		t.Fatal(err)
	}
}

// createDeployment creates a Deployment of pods requesting cpu each, with the placement given, once the
// namespace's default service account exists.
func createDeployment(ctx context.Context, namespace, name string, replicas int32, cpu string, nodeSelector map[string]string, tolerations []corev1.Toleration) error {
	if err := waitForDefaultServiceAccount(ctx, namespace); err != nil {
		return err
	}
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       workloadPodSpec(cpu, nodeSelector, tolerations, corev1.RestartPolicyAlways),
			},
		},
	}
	if _, err := env.Cluster.Typed.AppsV1().Deployments(namespace).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("cannot create Deployment %s/%s: %w", namespace, name, err)
	}
	return nil
}

// createPlacedJobT creates a Job of one pod with the placement given (nil where admission injects it).
func createPlacedJobT(t *testing.T, namespace, name string, nodeSelector map[string]string, tolerations []corev1.Toleration) *batchv1.Job {
	t.Helper()
	waitForDefaultServiceAccountT(t, namespace)
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](0),
			Template:     corev1.PodTemplateSpec{Spec: workloadPodSpec("100m", nodeSelector, tolerations, corev1.RestartPolicyNever)},
		},
	}
	created, err := env.Cluster.Typed.BatchV1().Jobs(namespace).Create(t.Context(), job, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("cannot create Job %s/%s: %v", namespace, name, err)
	}
	return created
}

// workloadPodSpec is a pod that asks for resources, so Karpenter sizes nodes for it. Its image is never
// pulled: kwok plays the kubelet.
func workloadPodSpec(cpu string, nodeSelector map[string]string, tolerations []corev1.Toleration, restart corev1.RestartPolicy) corev1.PodSpec {
	return corev1.PodSpec{
		RestartPolicy: restart,
		NodeSelector:  nodeSelector,
		Tolerations:   tolerations,
		Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("64Mi")},
		}}},
	}
}

// scaleDeploymentT sets a Deployment's replicas.
func scaleDeploymentT(t *testing.T, namespace, name string, replicas int) {
	t.Helper()
	if _, err := env.Kubectl.Run(t.Context(), nil, "scale", "deployment", name, "-n", namespace, fmt.Sprintf("--replicas=%d", replicas)); err != nil {
		t.Fatalf("cannot scale Deployment %s/%s: %v", namespace, name, err)
	}
}

// podsOf lists a namespace's pods with a label selector ("" for all).
func podsOf(ctx context.Context, namespace, selector string) ([]corev1.Pod, error) {
	list, err := env.Cluster.Typed.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

// poolOfNode returns the pool a node came from, "" if the node is gone or no pool's.
func poolOfNode(ctx context.Context, name string) string {
	node, err := env.Cluster.Typed.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	return node.Labels[nodePoolLabel]
}

// waitForPodsOnPoolT waits until every pod of a namespace is bound to a node of the pool and Running or
// Succeeded, and returns them.
func waitForPodsOnPoolT(t *testing.T, namespace, pool string) []corev1.Pod {
	t.Helper()
	var out []corev1.Pod
	waitForT(t, landTimeout, "the pods of namespace "+namespace+" to run on nodes of pool "+pool, func(ctx context.Context) (bool, string, error) {
		pods, err := podsOf(ctx, namespace, "")
		if err != nil {
			return false, err.Error(), nil
		}
		if len(pods) == 0 {
			return false, "no pods yet; warnings: " + warnings(ctx, namespace), nil
		}
		for _, p := range pods {
			if p.Spec.NodeName == "" {
				return false, fmt.Sprintf("pod %s not bound yet: %s", p.Name, scheduledMessage(p)), nil
			}
			if got := poolOfNode(ctx, p.Spec.NodeName); got != pool {
				return false, fmt.Sprintf("pod %s is on node %s of pool %q, want pool %s", p.Name, p.Spec.NodeName, got, pool), nil
			}
			if p.Status.Phase != corev1.PodRunning && p.Status.Phase != corev1.PodSucceeded {
				return false, fmt.Sprintf("pod %s is %s", p.Name, p.Status.Phase), nil
			}
		}
		out = pods
		return true, "", nil
	})
	return out
}

// waitForAdmittedPlacementT waits until the apiserver admits the pod (dry run) with exactly this node
// selector: the namespace's placement is then in force.
func waitForAdmittedPlacementT(t *testing.T, pod *corev1.Pod, nodeSelector map[string]string) {
	t.Helper()
	waitForAdmittedAsT(t, pod, fmt.Sprintf("pod %s/%s to be admitted with node selector %v", pod.Namespace, pod.Name, nodeSelector), func(got *corev1.Pod) (bool, string) {
		return maps.Equal(nodeSelector, got.Spec.NodeSelector), fmt.Sprintf("admitted with node selector %v", got.Spec.NodeSelector)
	})
}

// waitForAdmittedAsT waits until the apiserver admits the pod (dry run) as want says it should be stored.
func waitForAdmittedAsT(t *testing.T, pod *corev1.Pod, what string, want func(*corev1.Pod) (bool, string)) {
	t.Helper()
	waitForT(t, policyInForceTimeout, what, func(context.Context) (bool, string, error) {
		out := submitPod(t, pod, true)
		if out.ExitCode != 0 {
			return false, strings.TrimSpace(out.Stderr), nil
		}
		got := &corev1.Pod{}
		if err := json.Unmarshal([]byte(out.Stdout), got); err != nil {
			return false, "", err
		}
		ok, why := want(got)
		return ok, why, nil
	})
}

// warnings lists a namespace's Warning events, e.g. why a controller could not create a pod.
func warnings(ctx context.Context, namespace string) string {
	events, err := env.Cluster.Typed.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{FieldSelector: "type=Warning"})
	if err != nil {
		return err.Error()
	}
	out := make([]string, 0, len(events.Items))
	for _, e := range events.Items {
		out = append(out, e.InvolvedObject.Kind+"/"+e.InvolvedObject.Name+" "+e.Reason+": "+e.Message)
	}
	return strings.Join(out, "; ")
}

func scheduledMessage(p corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			return fmt.Sprintf("PodScheduled=%s %s %s", c.Status, c.Reason, c.Message)
		}
	}
	return "not seen by the scheduler yet"
}

// assertTenantNodeT checks the node a pod of an organization's stack landed on: it came from the stack's
// pool through Karpenter, and carries the reference's label and the organization's labels and taints, which
// the pod selects and tolerates.
func assertTenantNodeT(t *testing.T, pod corev1.Pod, org organization, stack string, sp stackPlacement) {
	t.Helper()
	node, err := env.Cluster.Typed.CoreV1().Nodes().Get(t.Context(), pod.Spec.NodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("cannot get node %s of pod %s/%s: %v", pod.Spec.NodeName, pod.Namespace, pod.Name, err)
	}
	if node.Labels[nodePoolLabel] != sp.Pool {
		t.Errorf("pod %s/%s of %s stack %s is on node %s of pool %q, want %s", pod.Namespace, pod.Name, org.Name, stack, node.Name, node.Labels[nodePoolLabel], sp.Pool)
	}
	if node.Labels["platform.example.com/tier"] != "tenant" {
		t.Errorf("node %s labels %v: want the reference NodePool's platform.example.com/tier=tenant", node.Name, node.Labels)
	}
	if len(sp.NodeSelector) == 0 || len(sp.Tolerations) == 0 {
		t.Fatalf("claim of %s reports no placement for stack %s: %+v", org.Name, stack, sp)
	}
	for k, v := range sp.NodeSelector {
		if !strings.HasPrefix(k, "node-restriction.kubernetes.io/") {
			t.Errorf("the claim of %s tells stack %s to select node label %s, which a kubelet may set on itself", org.Name, stack, k)
		}
		if node.Labels[k] != v {
			t.Errorf("node %s label %s = %q, want %q (the claim's node selector for stack %s)", node.Name, k, node.Labels[k], v, stack)
		}
		if pod.Spec.NodeSelector[k] != v {
			t.Errorf("pod %s/%s node selector %v, want %s=%s", pod.Namespace, pod.Name, pod.Spec.NodeSelector, k, v)
		}
	}
	for _, tol := range sp.Tolerations {
		if !slices.ContainsFunc(node.Spec.Taints, func(taint corev1.Taint) bool {
			return taint.Key == tol.Key && taint.Value == tol.Value && taint.Effect == tol.Effect
		}) {
			t.Errorf("node %s taints %v: want %s=%s:%s", node.Name, node.Spec.Taints, tol.Key, tol.Value, tol.Effect)
		}
	}
	if node.Annotations["kwok.x-k8s.io/node"] != "fake" || !strings.HasPrefix(node.Spec.ProviderID, "kwok://") {
		t.Errorf("node %s is not a node of Karpenter's KWOK provider: providerID %q", node.Name, node.Spec.ProviderID)
	}
}

// assertKubeletCannotChangeItsIdentityT tries, as the node's own kubelet (system:node:<name> under
// NodeRestriction), to give its Node another organization's selection label: refused. The report label
// kiso.dev/organization it may change, which is why no pod selects it.
func assertKubeletCannotChangeItsIdentityT(t *testing.T, node, organization string) {
	t.Helper()
	asNode := []string{"--as=system:node:" + node, "--as-group=system:nodes", "--as-group=system:authenticated"}
	out := env.TryT(t, nil, append([]string{"label", "node", node, "--overwrite", "node-restriction.kubernetes.io/kiso.dev.organization=" + organization}, asNode...)...)
	if want := "is not allowed to modify labels: node-restriction.kubernetes.io/kiso.dev.organization"; out.ExitCode == 0 || !strings.Contains(out.Stderr, want) {
		t.Errorf("kubelet of node %s relabelled it for organization %s: exit %d %s; want %q", node, organization, out.ExitCode, strings.TrimSpace(out.Stderr), want)
	}
	if out := env.TryT(t, nil, append([]string{"label", "node", node, "--overwrite", "--dry-run=server", "kiso.dev/organization=" + organization}, asNode...)...); out.ExitCode != 0 {
		t.Errorf("the kubelet of node %s may set kiso.dev/organization, which is why no pod selects it; refused here: %s", node, strings.TrimSpace(out.Stderr))
	}
}

// assertNoSharedNodesT checks that no node holds pods of two pools' workloads.
func assertNoSharedNodesT(t *testing.T, landed map[string][]corev1.Pod) {
	t.Helper()
	poolOn := map[string]string{}
	for pool, pods := range landed {
		for _, p := range pods {
			if other, ok := poolOn[p.Spec.NodeName]; ok && other != pool {
				t.Errorf("node %s holds pods of pool %s and of pool %s", p.Spec.NodeName, other, pool)
			}
			poolOn[p.Spec.NodeName] = pool
		}
	}
}

func waitForJobCompleteT(t *testing.T, job *batchv1.Job) {
	t.Helper()
	waitForT(t, landTimeout, "Job "+job.Namespace+"/"+job.Name+" to complete", func(ctx context.Context) (bool, string, error) {
		j, err := env.Cluster.Typed.BatchV1().Jobs(job.Namespace).Get(ctx, job.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		return j.Status.Succeeded == 1, fmt.Sprintf("succeeded %d, failed %d", j.Status.Succeeded, j.Status.Failed), nil
	})
}

// waitForLimitReachedT waits until Karpenter has given the pool all the nodes its limits allow and tells the
// selected pods left Pending that every instance type exceeds the pool's limits; then checks the pool's nodes
// hold no more than its CPU limit. No selected pod may be bound to a node of another pool meanwhile.
func waitForLimitReachedT(t *testing.T, namespace, selector, pool string) {
	t.Helper()
	waitForT(t, landTimeout, "pool "+pool+" to reach its limits with pods left pending", func(ctx context.Context) (bool, string, error) {
		pods, err := podsOf(ctx, namespace, selector)
		if err != nil {
			return false, err.Error(), nil
		}
		var pendingPod *corev1.Pod
		for i, p := range pods {
			if p.Spec.NodeName == "" {
				pendingPod = &pods[i]
				continue
			}
			if got := poolOfNode(ctx, p.Spec.NodeName); got != pool {
				return false, "", fmt.Errorf("pod %s is on node %s of pool %q, not of its pool %s", p.Name, p.Spec.NodeName, got, pool)
			}
		}
		if pendingPod == nil {
			return false, fmt.Sprintf("%d pods, every one bound; want some left pending by the pool's limits", len(pods)), nil
		}
		events, err := env.Cluster.Typed.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + pendingPod.Name})
		if err != nil {
			return false, err.Error(), nil
		}
		for _, e := range events.Items {
			if e.Reason == "FailedScheduling" && strings.Contains(e.Message, "exceed limits for nodepool") && strings.Contains(e.Message, pool) {
				return true, "", nil
			}
		}
		return false, "pending pod " + pendingPod.Name + " has no event from Karpenter about pool " + pool + "'s limits yet", nil
	})
	np := env.Cluster.GetT(t, NodePoolKind, "", pool)
	used, limit := quantityAt(np, "status", "resources", "cpu"), quantityAt(np, "spec", "limits", "cpu")
	if used.Cmp(limit) > 0 {
		t.Errorf("NodePool %s holds %s CPUs, over its limit of %s", pool, used.String(), limit.String())
	}
	var capacity resource.Quantity
	for _, nc := range env.Cluster.ListT(t, NodeClaimKind, "", nodePoolLabel+"="+pool) {
		capacity.Add(quantityAt(&nc, "status", "capacity", "cpu"))
	}
	if capacity.Cmp(limit) > 0 {
		t.Errorf("NodeClaims of pool %s have %s CPUs in all, over its limit of %s", pool, capacity.String(), limit.String())
	}
	t.Logf("pool %s at its limit: %s of %s CPUs", pool, used.String(), limit.String())
}

// waitForConsolidationT waits until every node of the pool holds a pod of the namespace (Karpenter has removed
// the nodes nothing needs), every pod of the namespace still on a node of the pool.
func waitForConsolidationT(t *testing.T, namespace, pool string) {
	t.Helper()
	waitForT(t, consolidationTimeout, "Karpenter to consolidate pool "+pool, func(ctx context.Context) (bool, string, error) {
		pods, err := podsOf(ctx, namespace, "")
		if err != nil {
			return false, err.Error(), nil
		}
		used := map[string]bool{}
		for _, p := range pods {
			if p.DeletionTimestamp != nil {
				return false, "pod " + p.Name + " is terminating", nil
			}
			if p.Spec.NodeName == "" || poolOfNode(ctx, p.Spec.NodeName) != pool {
				return false, fmt.Sprintf("pod %s is not on a node of pool %s: %s", p.Name, pool, scheduledMessage(p)), nil
			}
			used[p.Spec.NodeName] = true
		}
		claims, err := env.Cluster.List(ctx, NodeClaimKind, "", nodePoolLabel+"="+pool)
		if err != nil {
			return false, err.Error(), nil
		}
		if len(claims) != len(used) {
			return false, fmt.Sprintf("%d NodeClaims in pool %s for pods on %d nodes", len(claims), pool, len(used)), nil
		}
		return true, "", nil
	})
}

// assertUsageReportedT waits until the claim reports, per pool, what Karpenter's NodePool status says the
// pool's nodes hold, against the pool's limits, and checks kubectl shows it.
func assertUsageReportedT(t *testing.T, org organization) {
	t.Helper()
	var total string
	var nodes int64
	var limit resource.Quantity
	env.Cluster.WaitForT(t, 60*time.Second, IsolationClaimKind, org.ClaimNamespace, org.Name, func(u *unstructured.Unstructured) (bool, string) {
		pools, _, _ := unstructured.NestedSlice(u.Object, "status", "pools")
		if len(pools) == 0 {
			return false, "no pools in status"
		}
		nodes, limit = 0, resource.Quantity{}
		for _, raw := range pools {
			p, _ := raw.(map[string]any)
			name := fmt.Sprint(p["name"])
			np, err := env.Cluster.Get(t.Context(), NodePoolKind, "", name)
			if err != nil {
				return false, err.Error()
			}
			reported := &unstructured.Unstructured{Object: p}
			for _, field := range [][2][]string{
				{{"nodes"}, {"status", "nodes"}},
				{{"resources", "cpu"}, {"status", "resources", "cpu"}},
				{{"resources", "memory"}, {"status", "resources", "memory"}},
				{{"limits", "cpu"}, {"spec", "limits", "cpu"}},
			} {
				got, want := stringAt(reported, field[0]...), stringAt(np, field[1]...)
				if want == "" || got != want {
					return false, fmt.Sprintf("pool %s %s = %q, want %q from its NodePool's %s", name, strings.Join(field[0], "."), got, want, strings.Join(field[1], "."))
				}
			}
			n, _, _ := unstructured.NestedInt64(np.Object, "status", "nodes")
			nodes += n
			limit.Add(quantityAt(np, "spec", "limits", "cpu"))
		}
		if got := stringAt(u, "status", "usage", "nodes"); got != fmt.Sprint(nodes) {
			return false, fmt.Sprintf("status.usage.nodes = %q, want %d, the pools' sum", got, nodes)
		}
		if nodes == 0 {
			return false, "no pool of " + org.Name + " holds a node yet"
		}
		total = stringAt(u, "status", "usage", "resources", "cpu")
		return total != "", "no status.usage.resources.cpu"
	})
	out, err := env.Kubectl.Run(t.Context(), nil, "get", "karpenterisolation", org.Name, "-n", org.ClaimNamespace)
	if err != nil {
		t.Fatalf("kubectl get karpenterisolation: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 {
		t.Fatalf("kubectl get karpenterisolation printed %q", out)
	}
	header, row := strings.Fields(lines[0]), strings.Fields(lines[1])
	column := func(name string) string {
		i := slices.Index(header, name)
		if i < 0 || i >= len(row) {
			t.Errorf("kubectl get karpenterisolation columns %v, want %s", header, name)
			return ""
		}
		return row[i]
	}
	if got := column("CPU"); got != total {
		t.Errorf("kubectl get karpenterisolation CPU column %q, want %q (status.usage.resources.cpu)", got, total)
	}
	// The columns show Karpenter's own counts: its nodes, and the CPU limits of the organization's NodePools.
	if got := column("NODES"); got != fmt.Sprint(nodes) {
		t.Errorf("kubectl get karpenterisolation NODES column %q, want %d, the nodes Karpenter counts in the organization's NodePools", got, nodes)
	}
	if got := column("CPU-LIMIT"); got != limit.String() {
		t.Errorf("kubectl get karpenterisolation CPU-LIMIT column %q, want %s, the sum of the organization's NodePools' spec.limits.cpu", got, limit.String())
	}
	t.Logf("kubectl get karpenterisolation %s:\n%s", org.Name, out)
}

// stringAt is a field's value as text, "" if it is not set.
func stringAt(u *unstructured.Unstructured, path ...string) string {
	v, found, _ := unstructured.NestedFieldNoCopy(u.Object, path...)
	if !found || v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

func quantityAt(u *unstructured.Unstructured, path ...string) resource.Quantity {
	v, _, _ := unstructured.NestedFieldNoCopy(u.Object, path...)
	q, err := resource.ParseQuantity(fmt.Sprint(v))
	if err != nil {
		return resource.Quantity{}
	}
	return q
}

// snapshotOrganizationT records what must not change when another organization goes: its pools' and
// NodeClasses' identities and generations, and the node each of its running pods runs on.
func snapshotOrganizationT(t *testing.T, org organization) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, pool := range org.Pools {
		np := env.Cluster.GetT(t, NodePoolKind, "", pool)
		out["NodePool/"+pool] = fmt.Sprintf("%s@%d", np.GetUID(), np.GetGeneration())
		nc := env.Cluster.GetT(t, KWOKNodeClassKind, "", pool)
		out["KWOKNodeClass/"+pool] = fmt.Sprintf("%s@%d", nc.GetUID(), nc.GetGeneration())
	}
	for _, sp := range org.Stacks {
		for _, ns := range sp.Namespaces {
			pods, err := podsOf(t.Context(), ns, "")
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range pods {
				if p.Status.Phase != corev1.PodRunning {
					continue
				}
				node, err := env.Cluster.Typed.CoreV1().Nodes().Get(t.Context(), p.Spec.NodeName, metav1.GetOptions{})
				if err != nil {
					t.Fatalf("cannot get node %s of running pod %s/%s: %v", p.Spec.NodeName, ns, p.Name, err)
				}
				out["Pod/"+ns+"/"+p.Name] = node.Name + "@" + string(node.UID)
			}
		}
	}
	return out
}

// deleteClaimAndWatchT deletes an organization's claim as its owner would and waits until nothing of its
// pools is left, checking on every look that no NodeClass goes while its NodePool is still there.
func deleteClaimAndWatchT(t *testing.T, org organization) {
	t.Helper()
	nodesBefore := map[string]int{}
	for _, pool := range org.Pools {
		nodesBefore[pool] = len(env.Cluster.ListT(t, NodeKind, "", nodePoolLabel+"="+pool))
		if nodesBefore[pool] == 0 {
			t.Fatalf("pool %s has no nodes before its claim is deleted: nothing to drain", pool)
		}
	}
	if _, err := env.Kubectl.Run(t.Context(), nil, "delete", "karpenterisolation", org.Name, "-n", org.ClaimNamespace, "--wait=false"); err != nil {
		t.Fatalf("cannot delete claim %s/%s: %v", org.ClaimNamespace, org.Name, err)
	}
	waitForT(t, drainTimeout, "organization "+org.Name+"'s pools, NodeClaims and nodes to be gone", func(ctx context.Context) (bool, string, error) {
		left := []string{}
		for _, pool := range org.Pools {
			_, npErr := env.Cluster.Get(ctx, NodePoolKind, "", pool)
			_, ncErr := env.Cluster.Get(ctx, KWOKNodeClassKind, "", pool)
			npGone, ncGone := kerrors.IsNotFound(npErr), kerrors.IsNotFound(ncErr)
			if ncGone && !npGone {
				return false, "", fmt.Errorf("KWOKNodeClass %s is gone while NodePool %s still exists", pool, pool)
			}
			if !npGone {
				left = append(left, "NodePool/"+pool)
			}
			if !ncGone {
				left = append(left, "KWOKNodeClass/"+pool)
			}
			claims, err := env.Cluster.List(ctx, NodeClaimKind, "", nodePoolLabel+"="+pool)
			if err != nil {
				return false, err.Error(), nil
			}
			for _, c := range claims {
				left = append(left, "NodeClaim/"+c.GetName())
			}
			nodes, err := env.Cluster.List(ctx, NodeKind, "", nodePoolLabel+"="+pool)
			if err != nil {
				return false, err.Error(), nil
			}
			for _, n := range nodes {
				left = append(left, "Node/"+n.GetName())
			}
		}
		return len(left) == 0, fmt.Sprintf("still there: %v", left), nil
	})
}

// noneNew reports whether every object in after was already in before: nothing was created meanwhile
// (Karpenter may remove an empty node, and updates NodeClaims' status).
func noneNew(before, after map[string]string) bool {
	for name := range after {
		if _, ok := before[name]; !ok {
			return false
		}
	}
	return true
}

const nodePoolLabel = "karpenter.sh/nodepool"

// Timeouts of the outcome scenarios: each waits on a condition; these only bound a failure.
const (
	// poolsReadyTimeout bounds a claim's pools becoming Ready through Karpenter.
	poolsReadyTimeout = 2 * time.Minute
	// landTimeout bounds pending pods getting a node from Karpenter and being bound by the scheduler.
	landTimeout = 2 * time.Minute
	// consolidationTimeout bounds Karpenter consolidating a pool after a scale-down.
	consolidationTimeout = 4 * time.Minute
	// drainTimeout bounds a deleted claim's nodes being drained and terminated.
	drainTimeout = 3 * time.Minute
)

// organization is one organization of the outcome scenarios, as its claim reports it.
type organization struct {
	Name, ClaimNamespace string
	// Stacks maps each stack to what its claim's status says: its pool, namespaces and placement.
	Stacks map[string]stackPlacement
	// Pools are the pool names the claim reports.
	Pools []string
}

type stackPlacement struct {
	Pool         string
	Namespaces   []string
	NodeSelector map[string]string
	Tolerations  []corev1.Toleration
}
