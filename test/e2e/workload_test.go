package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestWorkloadCluster proves the management cluster acts in a workload cluster the way kiso composes for it: a
// provider-kubernetes Object puts a ConfigMap there, and a provider-helm Release installs Karpenter's AWS chart
// from the harness's chart repository with the values it sets, beside the harness's own Karpenter, and both
// take what they made with them when deleted.
//
// It does not check that Karpenter's CRDs stay out of the management cluster: the harness applies them there
// for the isolation scenarios, which compose NodePools into the cluster Crossplane runs in.
func TestWorkloadCluster(t *testing.T) {
	inWorkloadKarpenterLaneT(t)
	wl := env.Workload(t)
	object := fmt.Appendf(nil, `apiVersion: %s
kind: Object
metadata:
  name: e2e-workload-configmap
spec:
  providerConfigRef:
    name: %s
  forProvider:
    manifest:
      apiVersion: v1
      kind: ConfigMap
      metadata:
        name: e2e-workload
        namespace: default
      data:
        composed-by: provider-kubernetes
`, ObjectKind.GroupVersion(), WorkloadProviderConfig)
	release := fmt.Appendf(nil, `apiVersion: %s
kind: Release
metadata:
  name: karpenter
spec:
  providerConfigRef:
    name: %s
  forProvider:
    namespace: karpenter
    chart:
      repository: %s
      name: %s
      version: %s
    values:
      settings:
        clusterName: wl
        interruptionQueue: q
`, ReleaseKind.GroupVersion(), WorkloadProviderConfig, wl.KarpenterChart.Repository, wl.KarpenterChart.Name, wl.KarpenterChart.Version)
	deleteAtCleanup(t, object)
	deleteAtCleanup(t, release)

	step(t, "AnObjectCreatesItsConfigMapInTheWorkloadCluster", func(t *testing.T) {
		start := time.Now()
		env.ApplyT(t, object)
		configMap := wl.Cluster.WaitForT(t, 2*time.Minute, ConfigMapKind, "default", "e2e-workload", nil)
		if got, _, _ := unstructured.NestedString(configMap.Object, "data", "composed-by"); got != "provider-kubernetes" {
			t.Errorf("ConfigMap default/e2e-workload data.composed-by = %q, want provider-kubernetes", got)
		}
		env.Cluster.WaitForConditionT(t, time.Minute, ObjectKind, "", "e2e-workload-configmap", "Ready")
		env.Timings.Record("workload: Object applied to its ConfigMap there and Ready", time.Since(start))
	})

	step(t, "AReleaseInstallsKarpentersChartWithItsValues", func(t *testing.T) {
		start := time.Now()
		env.ApplyT(t, release)
		env.Cluster.WaitForConditionT(t, 3*time.Minute, ReleaseKind, "", "karpenter", "Ready")
		env.Timings.Record("workload: Release applied to Ready", time.Since(start))
		want := map[string]string{"CLUSTER_NAME": "wl", "INTERRUPTION_QUEUE": "q"}
		waitForT(t, time.Minute, "Deployment karpenter/karpenter in the workload cluster to have env "+fmt.Sprint(want), func(ctx context.Context) (bool, string, error) {
			deployment, err := wl.Cluster.Typed.AppsV1().Deployments("karpenter").Get(ctx, "karpenter", metav1.GetOptions{})
			if err != nil {
				return false, err.Error(), nil
			}
			got := map[string]string{}
			for _, c := range deployment.Spec.Template.Spec.Containers {
				for _, v := range c.Env {
					if _, ok := want[v.Name]; ok {
						got[v.Name] = v.Value
					}
				}
			}
			return fmt.Sprint(got) == fmt.Sprint(want), "env " + fmt.Sprint(got), nil
		})
	})

	step(t, "DeletingTheObjectDeletesTheConfigMap", func(t *testing.T) {
		// The Object goes about 30 s after it created the ConfigMap, not at once: until then the managed
		// reconciler does not trust that an object it created is gone (its creation grace period).
		env.DeleteT(t, object)
		wl.Cluster.WaitForDeletionT(t, time.Minute, ConfigMapKind, "default", "e2e-workload")
	})

	step(t, "AnObjectTakesOverAConfigMapItDidNotCreateAndDeletesIt", func(t *testing.T) {
		existing := []byte(`apiVersion: v1
kind: ConfigMap
metadata:
  name: e2e-existing
  namespace: default
data:
  owner: workload-admin
  untouched: "yes"
`)
		if err := wl.Kubectl.Apply(t.Context(), existing); err != nil {
			t.Fatal(err)
		}
		takeover := []byte(`apiVersion: ` + ObjectKind.GroupVersion().String() + `
kind: Object
metadata:
  name: e2e-workload-takeover
spec:
  providerConfigRef:
    name: ` + WorkloadProviderConfig + `
  forProvider:
    manifest:
      apiVersion: v1
      kind: ConfigMap
      metadata:
        name: e2e-existing
        namespace: default
      data:
        owner: provider-kubernetes
`)
		deleteAtCleanup(t, takeover)
		env.ApplyT(t, takeover)
		env.Cluster.WaitForConditionT(t, time.Minute, ObjectKind, "", "e2e-workload-takeover", "Ready")
		configMap := wl.Cluster.GetT(t, ConfigMapKind, "default", "e2e-existing")
		data, _, _ := unstructured.NestedStringMap(configMap.Object, "data")
		if want := map[string]string{"owner": "provider-kubernetes", "untouched": "yes"}; fmt.Sprint(data) != fmt.Sprint(want) {
			t.Errorf("ConfigMap default/e2e-existing data = %v, want %v: the Object's fields applied, the others kept", data, want)
		}
		env.DeleteT(t, takeover)
		wl.Cluster.WaitForDeletionT(t, time.Minute, ConfigMapKind, "default", "e2e-existing")
	})

	step(t, "AnObserveOnlyObjectOfAMissingObjectIsNotSynced", func(t *testing.T) {
		observer := []byte(`apiVersion: ` + ObjectKind.GroupVersion().String() + `
kind: Object
metadata:
  name: e2e-workload-observer
spec:
  managementPolicies: ["Observe"]
  providerConfigRef:
    name: ` + WorkloadProviderConfig + `
  forProvider:
    manifest:
      apiVersion: v1
      kind: ConfigMap
      metadata:
        name: e2e-missing
        namespace: default
`)
		deleteAtCleanup(t, observer)
		env.ApplyT(t, observer)
		u := env.Cluster.WaitForT(t, time.Minute, ObjectKind, "", "e2e-workload-observer", func(u *unstructured.Unstructured) (bool, string) {
			_, ok := Condition(u, "Synced")
			return ok, "not reconciled yet"
		})
		synced, _ := Condition(u, "Synced")
		t.Logf("Observe-only Object of a missing ConfigMap: conditions %s, Synced message %q", conditionSummary(u), synced.Message)
		if synced.Status != "False" || synced.Reason != "ReconcileError" {
			t.Errorf("Synced = %s (%s), want False (ReconcileError)", synced.Status, synced.Reason)
		}
		if _, err := wl.Cluster.Get(t.Context(), ConfigMapKind, "default", "e2e-missing"); !kerrors.IsNotFound(err) {
			t.Errorf("an Observe-only Object created ConfigMap default/e2e-missing (or it cannot be read: %v)", err)
		}
		env.DeleteT(t, observer)
	})

	step(t, "DeletingTheReleaseUninstallsTheChart", func(t *testing.T) {
		env.DeleteT(t, release)
		waitForT(t, time.Minute, "Deployment karpenter/karpenter gone from the workload cluster", func(ctx context.Context) (bool, string, error) {
			_, err := wl.Cluster.Typed.AppsV1().Deployments("karpenter").Get(ctx, "karpenter", metav1.GetOptions{})
			if kerrors.IsNotFound(err) {
				return true, "", nil
			}
			return false, fmt.Sprintf("still there (%v)", err), nil
		})
		// Helm keeps a release's history in secrets of its namespace (labelled with the release's name); an
		// uninstall removes them. Only this release's: the CRD chart's release karpenter-crd, which the scenario
		// of a workload cluster's XKarpenterCluster leaves there by design (Karpenter's CRDs are never deleted),
		// may be there too, depending on which of the lane's scenarios ran first.
		secrets, err := wl.Cluster.Typed.CoreV1().Secrets("karpenter").List(t.Context(), metav1.ListOptions{LabelSelector: "owner=helm,name=karpenter"})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(secrets.Items); n > 0 {
			t.Errorf("%d Helm release secrets of release karpenter left in namespace karpenter: %s", n, secretNames(secrets.Items))
		}
	})
}

func secretNames(secrets []corev1.Secret) string {
	names := make([]string, 0, len(secrets))
	for _, s := range secrets {
		names = append(names, s.Name)
	}
	return fmt.Sprint(names)
}
