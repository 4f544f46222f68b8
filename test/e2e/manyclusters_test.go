package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

// TestOneControlPlaneServesAWorkloadCluster is one management cluster (Crossplane, kiso's functions,
// provider-kubernetes and provider-helm) serving a workload cluster (its own apiserver, scheduler, Karpenter with
// its KWOK provider, kwok): an XKarpenterCluster with spec.workloadCluster installs Karpenter's CRD chart there,
// taking over the CRDs already there, then Karpenter's chart with kiso's values; two organizations claimed in the
// management cluster get pools that the workload cluster's Karpenter makes Ready, and their pods land on their
// own nodes there; a pod that asks for the other organization's pool is refused by the workload cluster's
// admission; nothing of Karpenter's kinds is composed into the management cluster; deleting a claim drains its
// nodes in the workload cluster; a chart version bump upgrades Karpenter's CRDs, then Karpenter; and neither
// dropping the install nor deleting the cluster deletes Karpenter's CRDs.
func TestOneControlPlaneServesAWorkloadCluster(t *testing.T) {
	inWorkloadKarpenterLaneT(t)
	wl := env.Workload(t)
	// The install's activation policy, applied for real: the management cluster accepts it (its providers run as
	// External processes here, so there is no managed resource definition for it to activate).
	activation := readRepoFileT(t, "examples/install/activation-policy.yaml")
	env.ApplyT(t, activation)
	t.Cleanup(func() { deleteAtCleanup(t, activation) })
	applyInWorkloadT(t, wl, readTestdataT(t, "workload", "references.yaml"))
	applyInWorkloadT(t, wl, readTestdataT(t, "workload", "namespaces.yaml"))
	cluster := workloadClusterManifestT(t, wl)
	env.ApplyT(t, cluster)
	t.Cleanup(func() { deleteAtCleanup(t, cluster) })

	step(t, "KisoInstallsKarpenterThereWithItsValues", func(t *testing.T) {
		start := time.Now()
		env.Cluster.WaitForConditionT(t, 3*time.Minute, ReleaseKind, "", remoteRelease, "Ready")
		env.Timings.Record("workload: cluster applied -> Karpenter's Release Ready", time.Since(start))
		want := map[string]string{"CLUSTER_NAME": "remote-eu", "LOG_LEVEL": "debug"}
		waitForT(t, time.Minute, fmt.Sprintf("Deployment karpenter/karpenter in the workload cluster with env %v", want), func(ctx context.Context) (bool, string, error) {
			d, err := wl.Cluster.Typed.AppsV1().Deployments("karpenter").Get(ctx, "karpenter", metav1.GetOptions{})
			if err != nil {
				return false, err.Error(), nil
			}
			got := controllerEnv(d)
			for k, v := range want {
				if got[k] != v {
					return false, fmt.Sprintf("env %s = %q", k, got[k]), nil
				}
			}
			return true, "", nil
		})
	})

	var crds map[string]string
	step(t, "KarpentersCRDsThereAreTakenOverByTheirChartAndKarpenterFollowsThem", func(t *testing.T) {
		env.Cluster.WaitForT(t, xrSettleTimeout, ClusterKind, "", remoteClusterXR, karpenterInstalledAt(wl.KarpenterChart.Version))
		crds = assertKarpenterCRDsTakenOverT(t, wl)
		assertKarpenterFollowsItsCRDsT(t, wl)
	})

	claims := readTestdataT(t, "workload", "claims.yaml")
	applied := time.Now()
	env.ApplyT(t, claims)
	t.Cleanup(func() { deleteAtCleanup(t, claims) })

	var dunder, wonka organization
	step(t, "PoolsAreReadyByTheWorkloadClustersKarpenter", func(t *testing.T) {
		dunder = waitForOrganizationT(t, "wl-dunder", "dunder", "dunder")
		wonka = waitForOrganizationT(t, "wl-wonka", "wonka", "wonka")
		env.Timings.Record("workload: claims applied -> pools Ready by the workload cluster's Karpenter", time.Since(applied))
		for _, pool := range append(append([]string{}, dunder.Pools...), wonka.Pools...) {
			np := wl.Cluster.WaitForConditionT(t, poolsReadyTimeout, NodePoolKind, "", pool, "Ready")
			if c, ok := Condition(np, "ValidationSucceeded"); !ok || c.Status != "True" {
				t.Errorf("NodePool %s in the workload cluster: ValidationSucceeded %+v, want True, set by Karpenter there", pool, c)
			}
			if _, err := env.Cluster.Get(t.Context(), NodePoolKind, "", pool); !kerrors.IsNotFound(err) {
				t.Errorf("NodePool %s exists in the management cluster (err %v): kiso must compose it only into the workload cluster", pool, err)
			}
		}
	})

	step(t, "OrganizationsReadThePlacementTheirClusterPublishes", func(t *testing.T) {
		assertOrganizationsReadPublishedPlacementT(t, []tenant{{Namespace: "wl-dunder", Name: "dunder"}, {Namespace: "wl-wonka", Name: "wonka"}})
	})

	step(t, "OrganizationsReadTheReferencesTheirClusterReads", func(t *testing.T) {
		assertOrganizationsReadPublishedReferencesT(t, wl, []tenant{{Namespace: "wl-dunder", Name: "dunder"}, {Namespace: "wl-wonka", Name: "wonka"}},
			map[string]string{"dunder": dunder.Stacks["web"].Pool, "wonka": wonka.Stacks["web"].Pool})
	})

	step(t, "PodsLandOnTheirOwnNodesThere", func(t *testing.T) {
		pending := time.Now()
		for _, org := range []organization{dunder, wonka} {
			sp := org.Stacks["web"]
			createWorkloadDeploymentT(t, wl, sp.Namespaces[0], org.Name+"-web", sp.NodeSelector, sp.Tolerations)
		}
		for _, org := range []organization{dunder, wonka} {
			waitForWorkloadPodsOnPoolT(t, wl, org.Stacks["web"].Namespaces[0], org.Stacks["web"].Pool)
		}
		env.Timings.Record("workload: pending pods -> bound on their pools' new nodes there", time.Since(pending))
		env.Timings.Record("workload: claims applied -> pods bound on the workload cluster", time.Since(applied))
	})

	step(t, "DroppingTheInstallKeepsKarpenterWhileOrganizationsUseTheClusterAndItsCRDs", func(t *testing.T) {
		assertReleaseKeptWhileClusterInUseT(t, func() { assertCRDReleaseOrphanedT(t, wl, crds) })
		env.Cluster.WaitForT(t, xrSettleTimeout, ClusterKind, "", remoteClusterXR, karpenterInstalledAt(wl.KarpenterChart.Version))
	})

	step(t, "AChartVersionBumpUpgradesKarpentersCRDsThenKarpenter", func(t *testing.T) {
		assertVersionBumpUpgradesCRDsFirstT(t, wl, crds)
	})

	step(t, "TheWorkloadClusterRefusesAForeignPod", func(t *testing.T) {
		foreign := wonka.Stacks["web"]
		pod := newPod("wants-wonka", dunder.Stacks["web"].Namespaces[0], foreign.NodeSelector, foreign.Tolerations...)
		_, err := wl.Cluster.Typed.CoreV1().Pods(pod.Namespace).Create(t.Context(), pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err == nil || !kerrors.IsInvalid(err) && !kerrors.IsForbidden(err) {
			t.Fatalf("a pod of dunder's namespace asking for wonka's pool was not refused by the workload cluster: %v", err)
		}
		if !strings.Contains(err.Error(), "kiso-placement") {
			t.Errorf("refused, but not by kiso's placement policy: %v", err)
		}
	})

	// The workload cluster has no prometheus-operator: the alerts the spec asks for (the default) cannot be held
	// there, and the cluster says so on a condition naming the field while everything else works (above).
	step(t, "AlertsThereWaitForPrometheusOperatorAndSaySo", func(t *testing.T) {
		c := env.Cluster.WaitForT(t, policyInForceTimeout, ClusterKind, "", "e2e-remote", func(u *unstructured.Unstructured) (bool, string) {
			c, _ := Condition(u, "Alerts")
			return c.Status == "False" && c.Reason == "PrometheusRuleCRDMissing", c.Status + " " + c.Reason + " " + c.Message
		})
		cond, _ := Condition(c, "Alerts")
		if !strings.HasPrefix(cond.Message, "spec.monitoring.prometheusRule: the cluster has no CustomResourceDefinition prometheusrules.monitoring.coreos.com") {
			t.Errorf("Alerts message %q does not name the field and the CRD", cond.Message)
		}
		objects, err := env.Cluster.List(t.Context(), ObjectKind, "", "crossplane.io/composite=e2e-remote")
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objects {
			if kind, _, _ := unstructured.NestedString(o.Object, "spec", "forProvider", "manifest", "kind"); kind == "PrometheusRule" {
				t.Errorf("Object %s composes a PrometheusRule into a workload cluster that cannot hold it", o.GetName())
			}
		}
	})

	step(t, "APlatformNamespaceNotThereIsThePlatformsAloneToCreate", func(t *testing.T) {
		// Placement exempts crossplane-system by its name (kiso's Composition lists it), and Crossplane runs in
		// the management cluster: the workload cluster has none. The cluster says so...
		const missing = "crossplane-system"
		env.Cluster.WaitForT(t, policyInForceTimeout, ClusterKind, "", "e2e-remote", func(u *unstructured.Unstructured) (bool, string) {
			c, _ := Condition(u, "PlatformNamespacesExist")
			return c.Status == "False" && strings.HasPrefix(c.Message, "platform namespaces "+missing+" do not exist in the cluster: "), c.Status + " " + c.Reason + " " + c.Message
		})
		// ...and a user there who may create namespaces, as many platforms let teams do, cannot create it.
		creator := []byte(userWithClusterRole(namespaceCreator, `{apiGroups: [""], resources: [namespaces], verbs: [create, get, delete]}`))
		if err := wl.Kubectl.Apply(t.Context(), creator); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = wl.Kubectl.Delete(context.Background(), creator, false) })
		out, err := wl.Kubectl.Try(t.Context(), nil, "create", "namespace", missing, "--as="+namespaceCreator)
		if err != nil {
			t.Fatal(err)
		}
		want := "ValidatingAdmissionPolicy '" + identityPolicy + "' with binding '" + identityPolicy + "' denied request: only the platform may create namespace " + missing +
			": placement exempts it by its name (a platform namespace of cluster e2e-remote: crossplane-system, karpenter), so its pods could tolerate and select any organization's nodes " +
			"(the platform holds label on namespaces.placement.kiso.dev)"
		if out.ExitCode == 0 || !strings.Contains(out.Stderr, want) {
			t.Errorf("a namespace creator created platform namespace %s in the workload cluster: exit %d\n got %s\nwant it to contain %s", missing, out.ExitCode, strings.TrimSpace(out.Stderr), want)
		}
		// Any other namespace it may still create.
		if out, err := wl.Kubectl.Try(t.Context(), nil, "create", "namespace", "e2e-team", "--as="+namespaceCreator); err != nil || out.ExitCode != 0 {
			t.Errorf("the namespace creator cannot create an ordinary namespace: %v %s", err, out.Stderr)
		}
		t.Cleanup(func() {
			_, _ = wl.Kubectl.Try(context.Background(), nil, "delete", "namespace", "e2e-team", "--ignore-not-found", "--wait=false")
		})
	})

	step(t, "ANodePoolThePlatformMadeThereIsNeverAdopted", func(t *testing.T) {
		assertWorkloadNodePoolNotAdoptedT(t, wl)
	})

	step(t, "ARolloutThereWaitsForTheCanarysNodesThere", func(t *testing.T) {
		assertRemoteRolloutT(t, wl, dunder, wonka)
	})

	step(t, "DeletingAClaimDrainsItsNodesThere", func(t *testing.T) {
		deleted := time.Now()
		if _, err := env.Kubectl.Run(t.Context(), nil, "delete", "karpenterisolation", "dunder", "-n", "wl-dunder", "--wait=false"); err != nil {
			t.Fatal(err)
		}
		pool := dunder.Stacks["web"].Pool
		wl.Cluster.WaitForDeletionT(t, drainTimeout, NodePoolKind, "", pool)
		waitForT(t, drainTimeout, "the nodes of pool "+pool+" in the workload cluster to go", func(ctx context.Context) (bool, string, error) {
			nodes, err := wl.Cluster.Typed.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: nodePoolLabel + "=" + pool})
			if err != nil {
				return false, "", err
			}
			return len(nodes.Items) == 0, fmt.Sprintf("%d nodes left", len(nodes.Items)), nil
		})
		env.Timings.Record("workload: claim deleted -> its nodes there gone", time.Since(deleted))
		waitForWorkloadPodsOnPoolT(t, wl, wonka.Stacks["web"].Namespaces[0], wonka.Stacks["web"].Pool)
	})

	// Its reference edit makes Karpenter replace wonka's nodes there.
	step(t, "ASettledOrganizationThereSeesEachChangeAtOnce", func(t *testing.T) {
		assertRemoteSettledOrganizationSeesEachChangeT(t, wl, wonka.Stacks["web"].Pool)
	})

	step(t, "AnUnreachableWorkloadClusterKeepsEveryPoolAndSaysWhy", func(t *testing.T) {
		assertUnreachableWorkloadClusterKeepsEveryPoolT(t, wl, wonka.Stacks["web"].Pool)
	})

	step(t, "DeletingTheClusterUninstallsKarpenterAndLeavesItsCRDs", func(t *testing.T) {
		assertDeletingTheClusterLeavesTheCRDsT(t, wl, claims, cluster, crds)
	})
}

// unreachableTimeout bounds how long the provider takes to say the frozen workload cluster does not answer and to
// recover once it answers again. A watch does not see an apiserver that stops answering, so it is the next poll
// of one of the organization's reads: up to the provider's poll as installed (10 minutes, plus its 10% jitter),
// then its request's timeout.
const unreachableTimeout = 13 * time.Minute

// assertUnreachableWorkloadClusterKeepsEveryPoolT freezes the workload cluster's apiserver until the provider's
// poll finds it so: wonka's claim says which reads the workload cluster has not answered and that its pools are
// kept, and none of its Objects is deleted or replaced; thawed, the claim resolves its references again and
// the pool is still there.
func assertUnreachableWorkloadClusterKeepsEveryPoolT(t *testing.T, wl *WorkloadCluster, pool string) {
	t.Helper()
	const organization = "kiso.dev/organization=wonka"
	before := versions(t, ObjectKind, organization)
	if len(before) == 0 {
		t.Fatalf("no Object carries %s", organization)
	}
	stopped := time.Now()
	thaw := wl.UnreachableT(t)
	claim := env.Cluster.WaitForT(t, unreachableTimeout, IsolationClaimKind, "wl-wonka", "wonka", func(u *unstructured.Unstructured) (bool, string) {
		c, _ := Condition(u, "ReferencesResolved")
		return c.Status == "False" && strings.HasPrefix(c.Message, "waiting for workload cluster "+WorkloadProviderConfig+" to answer: ") &&
				strings.HasSuffix(c.Message, "; keeping the pools already composed unchanged meanwhile"),
			"ReferencesResolved " + c.Status + " " + c.Reason + " " + c.Message
	})
	c, _ := Condition(claim, "ReferencesResolved")
	t.Logf("%s after the workload cluster stopped answering, the claim says: %s", time.Since(stopped).Round(time.Second), c.Message)
	assertStillThereT(t, ObjectKind, before, "while unreachable")

	thaw()
	thawed := time.Now()
	env.Cluster.WaitForT(t, unreachableTimeout, IsolationClaimKind, "wl-wonka", "wonka", func(u *unstructured.Unstructured) (bool, string) {
		c, _ := Condition(u, "ReferencesResolved")
		return c.Status == "True", "ReferencesResolved " + c.Status + " " + c.Reason + " " + c.Message
	})
	t.Logf("%s after the workload cluster answered again, the claim's references resolved", time.Since(thawed).Round(time.Second))
	assertStillThereT(t, ObjectKind, before, "once it answers again")
	if _, err := wl.Cluster.Get(t.Context(), NodePoolKind, "", pool); err != nil {
		t.Errorf("NodePool %s in the workload cluster: %v", pool, err)
	}
}

// assertReleaseKeptWhileClusterInUseT drops spec.karpenter.install from the cluster, as a platform moving to a
// Karpenter it installs itself would, while organizations' pools use the cluster: the organizations use the
// XKarpenterCluster, not its Release, so the cluster must keep the Release, and the Usage that keeps it, while a
// tenant pool bound to it is in the workload cluster. Once the cluster has rendered the new spec (its status no longer names a Release), neither is
// gone or being deleted: Crossplane deletes what a function stops returning before it writes the XR's status.
// dropped then checks what else dropping the install does, before the install is given back and the cluster
// names its Release again.
func assertReleaseKeptWhileClusterInUseT(t *testing.T, dropped func()) {
	t.Helper()
	const keptBy = "release-" + remoteRelease + "-kept-with-cluster"
	// The organizations' pools bound to it are in the workload cluster; the cluster reads them there.
	xr := env.Cluster.GetT(t, ClusterKind, "", remoteClusterXR)
	install, _, _ := unstructured.NestedFieldCopy(xr.Object, "spec", "karpenter", "install")
	patch := func(op string, value any) {
		p := map[string]any{"op": op, "path": "/spec/karpenter/install"}
		if value != nil {
			p["value"] = value
		}
		b, err := json.Marshal([]map[string]any{p})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := env.Kubectl.Run(t.Context(), nil, "patch", "xkarpentercluster", remoteClusterXR, "--type=json", "-p", string(b)); err != nil {
			t.Fatalf("cannot %s spec.karpenter.install of XKarpenterCluster %s: %v", op, remoteClusterXR, err)
		}
	}
	releaseNamed := func(want string) func(*unstructured.Unstructured) (bool, string) {
		return func(u *unstructured.Unstructured) (bool, string) {
			got, _, _ := unstructured.NestedString(u.Object, "status", "karpenterReleaseResource")
			return got == want, fmt.Sprintf("status.karpenterReleaseResource %q", got)
		}
	}
	patch("remove", nil)
	env.Cluster.WaitForT(t, xrSettleTimeout, ClusterKind, "", remoteClusterXR, releaseNamed(""))
	for _, o := range []struct {
		gvk  schema.GroupVersionKind
		name string
	}{{ReleaseKind, remoteRelease}, {ClusterUsageKind, keptBy}} {
		if u, err := env.Cluster.Get(t.Context(), o.gvk, "", o.name); err != nil || u.GetDeletionTimestamp() != nil {
			t.Errorf("%s %s went when the cluster, still used by organizations' pools, stopped installing Karpenter (err %v)", o.gvk.Kind, o.name, err)
		}
	}
	dropped()
	patch("add", install)
	env.Cluster.WaitForT(t, xrSettleTimeout, ClusterKind, "", remoteClusterXR, releaseNamed(remoteRelease))
}

// controllerEnv is the environment of a Deployment's containers.
func controllerEnv(d *appsv1.Deployment) map[string]string {
	out := map[string]string{}
	for _, c := range d.Spec.Template.Spec.Containers {
		for _, e := range c.Env {
			out[e.Name] = e.Value
		}
	}
	return out
}

// createWorkloadDeploymentT creates, in the workload cluster, a Deployment of two pods of 500m with the placement
// given, once the namespace's default service account exists there.
func createWorkloadDeploymentT(t *testing.T, wl *WorkloadCluster, namespace, name string, nodeSelector map[string]string, tolerations []corev1.Toleration) {
	t.Helper()
	waitForT(t, time.Minute, "service account default in namespace "+namespace+" of the workload cluster", func(ctx context.Context) (bool, string, error) {
		_, err := wl.Cluster.Typed.CoreV1().ServiceAccounts(namespace).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, fmt.Sprint(err), nil
	})
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       workloadPodSpec("500m", nodeSelector, tolerations, corev1.RestartPolicyAlways),
			},
		},
	}
	if _, err := wl.Cluster.Typed.AppsV1().Deployments(namespace).Create(t.Context(), d, metav1.CreateOptions{}); err != nil {
		t.Fatalf("cannot create Deployment %s/%s in the workload cluster: %v", namespace, name, err)
	}
}

// waitForWorkloadPodsOnPoolT waits until every pod of a namespace of the workload cluster runs on a node of the
// pool there.
func waitForWorkloadPodsOnPoolT(t *testing.T, wl *WorkloadCluster, namespace, pool string) {
	t.Helper()
	waitForT(t, landTimeout, "the pods of namespace "+namespace+" to run on nodes of pool "+pool+" in the workload cluster", func(ctx context.Context) (bool, string, error) {
		pods, err := wl.Cluster.Typed.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		if len(pods.Items) == 0 {
			return false, "no pods yet", nil
		}
		for _, p := range pods.Items {
			if p.Spec.NodeName == "" {
				return false, fmt.Sprintf("pod %s not bound yet: %s", p.Name, scheduledMessage(p)), nil
			}
			node, err := wl.Cluster.Typed.CoreV1().Nodes().Get(ctx, p.Spec.NodeName, metav1.GetOptions{})
			if err != nil {
				return false, err.Error(), nil
			}
			if got := node.Labels[nodePoolLabel]; got != pool {
				return false, fmt.Sprintf("pod %s is on node %s of pool %q, want %s", p.Name, node.Name, got, pool), nil
			}
			if p.Status.Phase != corev1.PodRunning {
				return false, fmt.Sprintf("pod %s is %s", p.Name, p.Status.Phase), nil
			}
		}
		return true, "", nil
	})
}

// assertWorkloadNodePoolNotAdoptedT: a NodePool of the name kiso would give organization wernham's pool already
// exists in the workload cluster, made by the platform; wernham's claim is refused naming it, and the NodePool is
// neither rewritten nor wrapped in an Object, though nothing of it exists in the management cluster, where
// Crossplane would otherwise look.
func assertWorkloadNodePoolNotAdoptedT(t *testing.T, wl *WorkloadCluster) {
	t.Helper()
	foreign := []byte(`apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: kiso-wernham
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.kwok.sh, kind: KWOKNodeClass, name: kwok-reference}
      requirements:
      - {key: kubernetes.io/os, operator: In, values: [linux]}
  limits:
    cpu: 0
`)
	if err := wl.Kubectl.Apply(t.Context(), foreign); err != nil {
		t.Fatalf("cannot create the platform's NodePool in the workload cluster: %v", err)
	}
	t.Cleanup(func() {
		if err := wl.Kubectl.Delete(context.Background(), foreign, true); err != nil {
			t.Errorf("cannot clean up: %v", err)
		}
	})
	before, err := wl.Cluster.Get(t.Context(), NodePoolKind, "", "kiso-wernham")
	if err != nil {
		t.Fatal(err)
	}
	claim := []byte(`apiVersion: v1
kind: Namespace
metadata:
  name: wl-wernham
  labels: {kiso.dev/organization: wernham}
---
apiVersion: kiso.dev/v1alpha1
kind: KarpenterIsolation
metadata:
  name: wernham
  namespace: wl-wernham
spec:
  organization: wernham
  clusterRef: {name: e2e-remote}
  stacks:
  - name: web
  nodeClassRef: {apiVersion: karpenter.kwok.sh/v1alpha1, kind: KWOKNodeClass, name: kwok-reference}
  nodePoolRef: {name: kwok-reference}
`)
	env.ApplyT(t, claim)
	t.Cleanup(func() { deleteAtCleanup(t, claim) })
	c := waitClaimConditionT(t, "wl-wernham", "wernham", "NamesAvailable", "False", "NameConflict")
	if want := `NodePool "kiso-wernham" already exists and is not composed by this XKarpenterIsolation`; !strings.Contains(c.Message, want) {
		t.Errorf("NamesAvailable message %q does not say %q", c.Message, want)
	}
	after, err := wl.Cluster.Get(t.Context(), NodePoolKind, "", "kiso-wernham")
	if err != nil {
		t.Fatal(err)
	}
	// Karpenter writes the NodePool's status and hash annotations meanwhile; provider-kubernetes, which applies an
	// Object's manifest as field manager provider-kubernetes/<Object>, must never have written it.
	for _, m := range after.GetManagedFields() {
		if strings.HasPrefix(m.Manager, "provider-kubernetes") {
			t.Errorf("the platform's NodePool was written by %s (%s)", m.Manager, m.Operation)
		}
	}
	if diff := cmp.Diff(before.Object["spec"], after.Object["spec"]); diff != "" || !maps.Equal(before.GetLabels(), after.GetLabels()) {
		t.Errorf("the platform's NodePool changed: spec -before, +after:\n%s\nlabels %v -> %v", diff, before.GetLabels(), after.GetLabels())
	}
	objects, err := env.Cluster.List(t.Context(), ObjectKind, "", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objects {
		if o.GetName() == WorkloadProviderConfig+".nodepool.kiso-wernham" {
			t.Errorf("an Object %s manages the platform's NodePool", o.GetName())
		}
	}
}
