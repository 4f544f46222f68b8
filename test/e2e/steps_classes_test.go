package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
)

// Steps of capacity classes and one limit across an organization's pools: pods that pick a class as
// Karpenter's users do, and what an organization's pools hold against its limit.

// classChoice is how a pod picks a class of capacity: a required node affinity on a label the class's
// reference gives its nodes, as a chart would write it, and the taints that class's nodes carry.
type classChoice struct {
	Label, Value string
	Tolerations  []corev1.Toleration
}

// createClassDeploymentT creates a Deployment of one pod that carries its stack's placement (nil where admission
// injects it) and picks a class; scale it with scaleDeploymentT.
func createClassDeploymentT(t *testing.T, namespace, name, cpu string, sp stackPlacement, class classChoice) {
	t.Helper()
	waitForDefaultServiceAccountT(t, namespace)
	labels := map[string]string{"app": name}
	spec := workloadPodSpec(cpu, sp.NodeSelector, append(append([]corev1.Toleration{}, sp.Tolerations...), class.Tolerations...), corev1.RestartPolicyAlways)
	spec.Affinity = classAffinity(class)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
		},
	}
	if _, err := env.Cluster.Typed.AppsV1().Deployments(namespace).Create(t.Context(), d, metav1.CreateOptions{}); err != nil {
		t.Fatalf("cannot create Deployment %s/%s: %v", namespace, name, err)
	}
}

// classAffinity is a required node affinity on the class's label.
func classAffinity(class classChoice) *corev1.Affinity {
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
			{Key: class.Label, Operator: corev1.NodeSelectorOpIn, Values: []string{class.Value}},
		}}},
	}}}
}

// waitForSelectedPodsOnPoolT waits until every pod a label selector selects in a namespace is Running on a node
// of the pool, and returns them.
func waitForSelectedPodsOnPoolT(t *testing.T, namespace, selector, pool string, want int) []corev1.Pod {
	t.Helper()
	var out []corev1.Pod
	waitForT(t, landTimeout, fmt.Sprintf("%d pods %s of namespace %s to run on nodes of pool %s", want, selector, namespace, pool), func(ctx context.Context) (bool, string, error) {
		pods, err := podsOf(ctx, namespace, selector)
		if err != nil {
			return false, err.Error(), nil
		}
		if len(pods) != want {
			return false, fmt.Sprintf("%d pods; warnings: %s", len(pods), warnings(ctx, namespace)), nil
		}
		for _, p := range pods {
			switch {
			case p.Spec.NodeName == "":
				return false, fmt.Sprintf("pod %s not bound yet: %s", p.Name, scheduledMessage(p)), nil
			case poolOfNode(ctx, p.Spec.NodeName) != pool:
				return false, "", fmt.Errorf("pod %s is on node %s of pool %q, want pool %s", p.Name, p.Spec.NodeName, poolOfNode(ctx, p.Spec.NodeName), pool)
			case p.Status.Phase != corev1.PodRunning:
				return false, fmt.Sprintf("pod %s is %s", p.Name, p.Status.Phase), nil
			}
		}
		out = pods
		return true, "", nil
	})
	return out
}

// assertClassNodeT checks that a pod's node is of the class it picked: the class reference's label and taint,
// and kiso's class label.
func assertClassNodeT(t *testing.T, pod corev1.Pod, class string, choice classChoice) {
	t.Helper()
	node, err := env.Cluster.Typed.CoreV1().Nodes().Get(t.Context(), pod.Spec.NodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("cannot read node %s of pod %s: %v", pod.Spec.NodeName, pod.Name, err)
	}
	if got := node.Labels[choice.Label]; got != choice.Value {
		t.Errorf("node %s of pod %s has %s=%q, want %q from its class's reference", node.Name, pod.Name, choice.Label, got, choice.Value)
	}
	if got, want := node.Labels["kiso.dev/class"], class; got != want {
		t.Errorf("node %s of pod %s has kiso.dev/class=%q, want %q", node.Name, pod.Name, got, want)
	}
	for _, tol := range choice.Tolerations {
		found := false
		for _, taint := range node.Spec.Taints {
			found = found || taint.Key == tol.Key && taint.Value == tol.Value && taint.Effect == tol.Effect
		}
		if !found {
			t.Errorf("node %s of pod %s lacks its class's taint %s=%s:%s: %v", node.Name, pod.Name, tol.Key, tol.Value, tol.Effect, node.Spec.Taints)
		}
	}
}

// waitForNoPoolToFitT waits until Karpenter says it can schedule the selected pod on no pool, and checks it is
// bound to no node.
func waitForNoPoolToFitT(t *testing.T, namespace, selector string) {
	t.Helper()
	waitForT(t, landTimeout, "Karpenter to find no pool for pod "+selector+" of namespace "+namespace, func(ctx context.Context) (bool, string, error) {
		pods, err := podsOf(ctx, namespace, selector)
		if err != nil || len(pods) != 1 {
			return false, fmt.Sprintf("pods %d: %v", len(pods), err), nil
		}
		p := pods[0]
		if p.Spec.NodeName != "" {
			return false, "", fmt.Errorf("pod %s is on node %s of pool %q; want it on none", p.Name, p.Spec.NodeName, poolOfNode(ctx, p.Spec.NodeName))
		}
		events, err := env.Cluster.Typed.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + p.Name})
		if err != nil {
			return false, err.Error(), nil
		}
		for _, e := range events.Items {
			if e.Reason == "FailedScheduling" && strings.HasPrefix(e.Message, "Failed to schedule pod") {
				t.Logf("Karpenter on pod %s: %s", p.Name, e.Message)
				return true, "", nil
			}
		}
		return false, "no event from Karpenter on pod " + p.Name + " yet: " + scheduledMessage(p), nil
	})
}

// poolsHolding is what an organization's NodePools hold of a resource, and their limits on it, as the
// apiserver has them.
func poolsHolding(ctx context.Context, resourceName string, pools []string) (held, limits map[string]resource.Quantity, err error) {
	held, limits = map[string]resource.Quantity{}, map[string]resource.Quantity{}
	for _, name := range pools {
		np, err := env.Cluster.Get(ctx, NodePoolKind, "", name)
		if err != nil {
			return nil, nil, err
		}
		held[name] = quantityAt(np, "status", "resources", resourceName)
		if _, set, _ := unstructured.NestedFieldNoCopy(np.Object, "spec", "limits", resourceName); set {
			limits[name] = quantityAt(np, "spec", "limits", resourceName)
		}
	}
	return held, limits, nil
}

// waitForLimitsLeftT waits until each of an organization's pools, which caps the resource no lower itself, may
// grow in it exactly to what its limit across pools leaves beside what the other pools hold: kiso has followed
// Karpenter's count.
func waitForLimitsLeftT(t *testing.T, resourceName, limit string, pools []string) {
	t.Helper()
	total := resource.MustParse(limit)
	waitForT(t, landTimeout, fmt.Sprintf("the limits of pools %v on %s to be what the organization's %s leaves", pools, resourceName, limit), func(ctx context.Context) (bool, string, error) {
		held, limits, err := poolsHolding(ctx, resourceName, pools)
		if err != nil {
			return false, err.Error(), nil
		}
		for _, p := range pools {
			want := total.DeepCopy()
			for _, other := range pools {
				if other != p {
					want.Sub(held[other])
				}
			}
			if want.Sign() < 0 {
				want = resource.Quantity{}
			}
			got, set := limits[p]
			if !set || got.Cmp(want) != 0 {
				return false, fmt.Sprintf("pool %s limits %s to %s, want %s (the pools hold %v)", p, resourceName, got.String(), want.String(), held), nil
			}
		}
		return true, "", nil
	})
}

// waitForPoolFullT waits until Karpenter tells a pending pod the selector selects that the pool may grow no more
// (its message holds why), no selected pod bound to a node of another pool meanwhile.
func waitForPoolFullT(t *testing.T, namespace, selector, pool, why string) {
	t.Helper()
	waitForT(t, landTimeout, "pool "+pool+" to be full with pods "+selector+" left pending", func(ctx context.Context) (bool, string, error) {
		pods, err := podsOf(ctx, namespace, selector)
		if err != nil {
			return false, err.Error(), nil
		}
		var pending []corev1.Pod
		for _, p := range pods {
			if p.Spec.NodeName == "" {
				pending = append(pending, p)
			} else if got := poolOfNode(ctx, p.Spec.NodeName); got != pool {
				return false, "", fmt.Errorf("pod %s is on node %s of pool %q, not of its pool %s", p.Name, p.Spec.NodeName, got, pool)
			}
		}
		for _, p := range pending {
			events, err := env.Cluster.Typed.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + p.Name})
			if err != nil {
				return false, err.Error(), nil
			}
			for _, e := range events.Items {
				if e.Reason == "FailedScheduling" && strings.Contains(e.Message, why) && strings.Contains(e.Message, "NodePool="+pool+")") {
					return true, "", nil
				}
			}
		}
		return false, fmt.Sprintf("%d of %d pods pending, none told by Karpenter %q about pool %s yet", len(pending), len(pods), why, pool), nil
	})
}

// waitForCountedT waits until Karpenter counts, in each pool's NodePool status, every NodeClaim of the pool: what
// kiso reads has caught up with what Karpenter launched.
func waitForCountedT(t *testing.T, pools []string) {
	t.Helper()
	waitForT(t, landTimeout, fmt.Sprintf("Karpenter to count the nodes of pools %v", pools), func(ctx context.Context) (bool, string, error) {
		held, _, err := poolsHolding(ctx, "nodes", pools)
		if err != nil {
			return false, err.Error(), nil
		}
		for _, pool := range pools {
			claims, err := env.Cluster.List(ctx, NodeClaimKind, "", nodePoolLabel+"="+pool)
			if err != nil {
				return false, err.Error(), nil
			}
			if counted := held[pool]; counted.Value() != int64(len(claims)) {
				return false, fmt.Sprintf("pool %s: %d NodeClaims, %s counted", pool, len(claims), counted.String()), nil
			}
		}
		return true, "", nil
	})
}

// organizationNodes are the NodeClaims of an organization's pools.
func organizationNodes(t *testing.T, pools []string) []string {
	t.Helper()
	var names []string
	for _, pool := range pools {
		for _, nc := range env.Cluster.ListT(t, NodeClaimKind, "", nodePoolLabel+"="+pool) {
			names = append(names, pool+"/"+nc.GetName())
		}
	}
	return names
}

// classColumn is what the CLASSES column says of one class whose only pool is the NodePool given, as Karpenter
// counts it: class(<nodes>n,cpu=<held>/<limit>).
func classColumn(t *testing.T, class, pool string) string {
	t.Helper()
	np := env.Cluster.GetT(t, NodePoolKind, "", pool)
	held, limit := quantityAt(np, "status", "resources", "cpu"), quantityAt(np, "spec", "limits", "cpu")
	return fmt.Sprintf("%s(%sn,cpu=%s/%s)", class, stringAt(np, "status", "nodes"), held.String(), limit.String())
}

// printedColumns reads the one row kubectl get printed by its header: a column starts where its name does, and
// an empty one prints nothing.
func printedColumns(out string) map[string]string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	header, row := lines[0], lines[len(lines)-1]
	names := strings.Fields(header)
	columns := make(map[string]string, len(names))
	at := 0
	for i, name := range names {
		start := at + strings.Index(header[at:], name)
		end := len(row)
		if i+1 < len(names) {
			end = min(start+strings.Index(header[start:], " "+names[i+1])+1, len(row))
		}
		if start < len(row) {
			columns[name] = strings.TrimSpace(row[start:end])
		}
		at = start + len(name)
	}
	return columns
}
