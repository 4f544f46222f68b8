package e2e

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// What kiso installs of Karpenter in the workload cluster: the Helm releases, their namespace, and the Release
// of the CRD chart in the management cluster (<clusterName>-karpenter-crd-release).
const (
	remoteKarpenterNS   = "karpenter"
	karpenterHelmName   = "karpenter"
	karpenterCRDsHelm   = "karpenter-crd"
	remoteCRDRelease    = "remote-eu-karpenter-crd-release"
	karpenterInstalled  = "KarpenterInstalled"
	helmReleaseNameKey  = "meta.helm.sh/release-name"
	helmNamespaceKey    = "meta.helm.sh/release-namespace"
	helmManagedByLabel  = "app.kubernetes.io/managed-by"
	helmResourcePolicy  = "helm.sh/resource-policy"
	helmChartLabel      = "helm.sh/chart"
	nodePoolsCRD        = "nodepools.karpenter.sh"
	karpenterDeployment = "karpenter"
)

// karpenterInstalledAt waits for the cluster to say both of Karpenter's Releases are deployed at the version.
func karpenterInstalledAt(version string) func(*unstructured.Unstructured) (bool, string) {
	return func(u *unstructured.Unstructured) (bool, string) {
		c, _ := Condition(u, karpenterInstalled)
		return c.Status == "True" && c.Reason == "Installed" && strings.Contains(c.Message, "karpenter-crd "+version+")"),
			karpenterInstalled + " " + c.Status + " " + c.Reason + " " + c.Message
	}
}

// helmRevisionsT lists a Helm release's records in the workload cluster (a Secret per revision), oldest first.
func helmRevisionsT(t *testing.T, wl *WorkloadCluster, release string) []corev1.Secret {
	t.Helper()
	secrets, err := wl.Cluster.Typed.CoreV1().Secrets(remoteKarpenterNS).List(t.Context(), metav1.ListOptions{LabelSelector: "owner=helm,name=" + release})
	if err != nil {
		t.Fatal(err)
	}
	revision := func(s corev1.Secret) int {
		n, _ := strconv.Atoi(s.Labels["version"])
		return n
	}
	slices.SortFunc(secrets.Items, func(a, b corev1.Secret) int { return revision(a) - revision(b) })
	return secrets.Items
}

// assertKarpenterCRDsTakenOverT checks that every CRD of Karpenter's CRD chart in the workload cluster belongs to
// the Helm release karpenter-crd, which asks Helm to keep it, and existed before that release did: the harness
// applied them with no Helm release owning them, as Karpenter's chart applies its crds/ folder, so the release
// took them over rather than created them. It returns each CRD's UID.
func assertKarpenterCRDsTakenOverT(t *testing.T, wl *WorkloadCluster) map[string]string {
	t.Helper()
	revisions := helmRevisionsT(t, wl, karpenterCRDsHelm)
	if len(revisions) == 0 {
		t.Fatalf("no Helm release %s in namespace %s of the workload cluster", karpenterCRDsHelm, remoteKarpenterNS)
	}
	first := revisions[0].CreationTimestamp
	uids := map[string]string{}
	for _, name := range wl.KarpenterCRDs {
		crd := wl.Cluster.GetT(t, CustomResourceDefinitionKind, "", name)
		uids[name] = string(crd.GetUID())
		annotations := crd.GetAnnotations()
		for key, want := range map[string]string{helmReleaseNameKey: karpenterCRDsHelm, helmNamespaceKey: remoteKarpenterNS, helmResourcePolicy: "keep"} {
			if got := annotations[key]; got != want {
				t.Errorf("CRD %s: annotation %s = %q, want %q", name, key, got, want)
			}
		}
		if got := crd.GetLabels()[helmManagedByLabel]; got != "Helm" {
			t.Errorf("CRD %s: label %s = %q, want Helm", name, helmManagedByLabel, got)
		}
		if created := crd.GetCreationTimestamp(); !created.Before(&first) {
			t.Errorf("CRD %s created at %s, not before Helm release %s (%s): created by it, not taken over", name, created, karpenterCRDsHelm, first)
		}
	}
	return uids
}

// assertKarpenterFollowsItsCRDsT checks, from Helm's records there, that the last revision of Karpenter's release
// was not made before the last one of its CRDs' release.
func assertKarpenterFollowsItsCRDsT(t *testing.T, wl *WorkloadCluster) {
	t.Helper()
	crds, chart := helmRevisionsT(t, wl, karpenterCRDsHelm), helmRevisionsT(t, wl, karpenterHelmName)
	if len(crds) == 0 || len(chart) == 0 {
		t.Fatalf("Helm releases there: %d revisions of %s, %d of %s", len(crds), karpenterCRDsHelm, len(chart), karpenterHelmName)
	}
	lastCRDs, lastChart := crds[len(crds)-1], chart[len(chart)-1]
	if lastChart.CreationTimestamp.Before(&lastCRDs.CreationTimestamp) {
		t.Errorf("revision %s of %s (%s) was made before revision %s of %s (%s): Karpenter moved before its CRDs",
			lastChart.Labels["version"], karpenterHelmName, lastChart.CreationTimestamp, lastCRDs.Labels["version"], karpenterCRDsHelm, lastCRDs.CreationTimestamp)
	}
}

// assertKarpenterCRDsStayT checks that every CRD of Karpenter's CRD chart is still in the workload cluster, the
// same object (its UID) and not being deleted, and that Helm's record of their release is still there: nothing
// uninstalled it.
func assertKarpenterCRDsStayT(t *testing.T, wl *WorkloadCluster, uids map[string]string, when string) {
	t.Helper()
	for name, uid := range uids {
		crd, err := wl.Cluster.Get(t.Context(), CustomResourceDefinitionKind, "", name)
		switch {
		case err != nil:
			t.Errorf("CRD %s %s: %v", name, when, err)
		case string(crd.GetUID()) != uid || crd.GetDeletionTimestamp() != nil:
			t.Errorf("CRD %s %s: UID %s (was %s), deletion %v", name, when, crd.GetUID(), uid, crd.GetDeletionTimestamp())
		}
	}
	revisions := helmRevisionsT(t, wl, karpenterCRDsHelm)
	if len(revisions) == 0 || revisions[len(revisions)-1].Labels["status"] != "deployed" {
		t.Errorf("Helm release %s %s: %d revisions, the last not deployed", karpenterCRDsHelm, when, len(revisions))
	}
}

// assertCRDReleaseOrphanedT: the cluster stopped composing the CRD Release; Crossplane deletes it, and its
// deletion leaves the Helm release and the CRDs in the workload cluster.
func assertCRDReleaseOrphanedT(t *testing.T, wl *WorkloadCluster, uids map[string]string) {
	t.Helper()
	env.Cluster.WaitForDeletionT(t, time.Minute, ReleaseKind, "", remoteCRDRelease)
	assertKarpenterCRDsStayT(t, wl, uids, "once the cluster stopped installing Karpenter")
}

// assertVersionBumpUpgradesCRDsFirstT moves spec.karpenter.install.version to the bump the harness serves:
// Helm upgrades the CRDs in place (the NodePool CRD's description is the new chart's, its UID the same), then
// Karpenter, not before.
func assertVersionBumpUpgradesCRDsFirstT(t *testing.T, wl *WorkloadCluster, uids map[string]string) {
	t.Helper()
	bump := wl.KarpenterChartBump
	bumped := time.Now()
	if _, err := env.Kubectl.Run(t.Context(), nil, "patch", "xkarpentercluster", remoteClusterXR, "--type=merge",
		"-p", fmt.Sprintf(`{"spec":{"karpenter":{"install":{"version":%q}}}}`, bump)); err != nil {
		t.Fatalf("cannot bump spec.karpenter.install.version of XKarpenterCluster %s: %v", remoteClusterXR, err)
	}
	want := bumpedNodePoolDescription(bump)
	wl.Cluster.WaitForT(t, xrSettleTimeout, CustomResourceDefinitionKind, "", nodePoolsCRD, func(u *unstructured.Unstructured) (bool, string) {
		versions, _, _ := unstructured.NestedSlice(u.Object, "spec", "versions")
		for _, v := range versions {
			got, _, _ := unstructured.NestedString(v.(map[string]any), "schema", "openAPIV3Schema", "description")
			if got != want {
				return false, fmt.Sprintf("version %v describes NodePool as %q", v.(map[string]any)["name"], got)
			}
		}
		return len(versions) > 0, "no versions"
	})
	env.Timings.Record("workload: chart version bumped -> Karpenter's CRDs upgraded there", time.Since(bumped))
	chart := karpenterHelmName + "-" + bump
	waitForT(t, xrSettleTimeout, "Deployment karpenter/karpenter in the workload cluster labelled "+helmChartLabel+"="+chart, func(ctx context.Context) (bool, string, error) {
		d, err := wl.Cluster.Typed.AppsV1().Deployments(remoteKarpenterNS).Get(ctx, karpenterDeployment, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		return d.Labels[helmChartLabel] == chart, helmChartLabel + "=" + d.Labels[helmChartLabel], nil
	})
	env.Timings.Record("workload: chart version bumped -> Karpenter upgraded there", time.Since(bumped))
	env.Cluster.WaitForT(t, xrSettleTimeout, ClusterKind, "", remoteClusterXR, karpenterInstalledAt(bump))
	assertKarpenterFollowsItsCRDsT(t, wl)
	assertKarpenterCRDsStayT(t, wl, uids, "once upgraded")
}

// assertDeletingTheClusterLeavesTheCRDsT deletes the organization left, then the cluster, as an operator does:
// Karpenter is uninstalled with the cluster, its CRDs stay, and so does every object of theirs the platform made
// there (the reference NodePool).
func assertDeletingTheClusterLeavesTheCRDsT(t *testing.T, wl *WorkloadCluster, claims, cluster []byte, uids map[string]string) {
	t.Helper()
	deleted := time.Now()
	if err := env.Kubectl.Delete(t.Context(), claims, false); err != nil {
		t.Fatal(err)
	}
	deleteAtCleanup(t, cluster)
	env.Cluster.WaitForDeletionT(t, xrSettleTimeout, ClusterKind, "", remoteClusterXR)
	for _, release := range []string{remoteRelease, remoteCRDRelease} {
		env.Cluster.WaitForDeletionT(t, xrSettleTimeout, ReleaseKind, "", release)
	}
	waitForT(t, time.Minute, "Deployment karpenter/karpenter gone from the workload cluster", func(ctx context.Context) (bool, string, error) {
		_, err := wl.Cluster.Typed.AppsV1().Deployments(remoteKarpenterNS).Get(ctx, karpenterDeployment, metav1.GetOptions{})
		return kerrors.IsNotFound(err), fmt.Sprintf("still there (%v)", err), nil
	})
	env.Timings.Record("workload: organization and cluster deleted -> Karpenter uninstalled there", time.Since(deleted))
	if revisions := helmRevisionsT(t, wl, karpenterHelmName); len(revisions) > 0 {
		t.Errorf("Helm release %s still has %d revisions: not uninstalled", karpenterHelmName, len(revisions))
	}
	assertKarpenterCRDsStayT(t, wl, uids, "once the cluster is deleted")
	if _, err := wl.Cluster.Get(t.Context(), NodePoolKind, "", workloadReference); err != nil {
		t.Errorf("the platform's NodePool %s there: %v", workloadReference, err)
	}
}
