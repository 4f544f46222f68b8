package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Steps of the scenarios that compose into the workload cluster: the platform's objects there, and the
// XKarpenterCluster that serves it from the management cluster.

// The workload cluster's XKarpenterCluster (testdata/workload/cluster.yaml), and what kiso names after it.
const (
	remoteClusterXR = "e2e-remote"
	remoteRelease   = "remote-eu-karpenter-release" // <clusterName>-karpenter-release
)

// applyInWorkloadT applies a manifest in the workload cluster, as its administrator, and deletes it at cleanup.
func applyInWorkloadT(t *testing.T, wl *WorkloadCluster, manifest []byte) {
	t.Helper()
	if err := wl.Kubectl.Apply(t.Context(), manifest); err != nil {
		t.Fatalf("cannot apply to the workload cluster: %v", err)
	}
	t.Cleanup(func() {
		if err := wl.Kubectl.Delete(context.Background(), manifest, true); err != nil {
			t.Errorf("cannot clean up the workload cluster: %v", err)
		}
	})
}

// workloadClusterManifestT is the XKarpenterCluster remoteClusterXR that serves the workload cluster through its
// ProviderConfigs and installs Karpenter's chart there from the harness's chart repository.
func workloadClusterManifestT(t *testing.T, wl *WorkloadCluster) []byte {
	t.Helper()
	return []byte(strings.NewReplacer(
		"WORKLOAD_PROVIDER_CONFIG", WorkloadProviderConfig,
		"CHART_REPOSITORY", wl.KarpenterChart.Repository,
		"CHART_VERSION", wl.KarpenterChart.Version,
	).Replace(string(readTestdataT(t, "workload", "cluster.yaml"))))
}

// waitUntilNoReadT waits until the organization's XR xr composes none of the observe-only Objects its function
// names read:<read> for which reads is true: it reads what, its cluster's, no longer itself.
func waitUntilNoReadT(t *testing.T, xr, what string, reads func(read string) bool) {
	t.Helper()
	waitForT(t, xrSettleTimeout, xr+" reads "+what+" no longer itself", func(ctx context.Context) (bool, string, error) {
		objects, err := env.Cluster.List(ctx, ObjectKind, "", "crossplane.io/composite="+xr)
		if err != nil {
			return false, "", err
		}
		for _, o := range objects {
			if read, ok := strings.CutPrefix(o.GetAnnotations()["crossplane.io/composition-resource-name"], "read:"); ok && reads(read) {
				return false, "Object " + o.GetName() + " still reads " + read, nil
			}
		}
		return true, "", nil
	})
}

// assertOrganizationsReadPublishedPlacementT: once provider-kubernetes has the cluster's placement policy in the
// workload cluster, the cluster publishes what it enforces (status.placement, and so its view), and each of its
// organizations stops reading the policy there through an observe-only Object of its own, still reporting the
// placement that cluster enforces.
func assertOrganizationsReadPublishedPlacementT(t *testing.T, tenants []tenant) {
	t.Helper()
	env.Cluster.WaitForT(t, xrSettleTimeout, ClusterKind, "", remoteClusterXR, func(u *unstructured.Unstructured) (bool, string) {
		published, _, _ := unstructured.NestedMap(u.Object, "status", "placement")
		return published["cluster"] == remoteClusterXR, fmt.Sprintf("status.placement %v", published)
	})
	for _, tn := range tenants {
		xr := tn.xrName(t)
		waitUntilNoReadT(t, xr, "the placement policy", func(read string) bool { return read == "placement-policy" })
		env.Cluster.WaitForT(t, xrSettleTimeout, IsolationKind, "", xr, func(u *unstructured.Unstructured) (bool, string) {
			c, _ := Condition(u, "PlacementEnforced")
			return c.Status == "True" && strings.Contains(c.Message, `XKarpenterCluster "`+remoteClusterXR+`"`), c.Status + " " + c.Reason + ": " + c.Message
		})
	}
}

// assertOrganizationsReadPublishedReferencesT: the cluster reads the reference pair it lists (spec.references)
// once, in the workload cluster, and shows it (status.references, and so its view); each of its organizations
// then reads it there and drops its own two reads of it. An edit of the reference there reaches every
// organization's pool all the same, through the cluster's watched read: the platform lengthens the reference
// NodePool's consolidateAfter (no drift, no node replaced) and each pool there follows.
func assertOrganizationsReadPublishedReferencesT(t *testing.T, wl *WorkloadCluster, tenants []tenant, pools map[string]string) {
	t.Helper()
	env.Cluster.WaitForT(t, xrSettleTimeout, ClusterKind, "", remoteClusterXR, func(u *unstructured.Unstructured) (bool, string) {
		refs, _, _ := unstructured.NestedSlice(u.Object, "status", "references")
		for _, r := range refs {
			r, _ := r.(map[string]any)
			if nc, _ := r["nodeClass"].(string); strings.Contains(nc, `"name":"kwok-reference"`) && r["nodePool"] != nil {
				return true, ""
			}
		}
		return false, fmt.Sprintf("status.references %v", refs)
	})
	for _, tn := range tenants {
		xr := tn.xrName(t)
		waitUntilNoReadT(t, xr, "a reference", func(read string) bool { return strings.HasPrefix(read, "reference-") })
		env.Cluster.WaitForT(t, xrSettleTimeout, IsolationKind, "", xr, func(u *unstructured.Unstructured) (bool, string) {
			c, _ := Condition(u, "ReferencesResolved")
			return c.Status == "True", c.Status + " " + c.Reason + ": " + c.Message
		})
	}
	const consolidateAfter = "90s"
	if _, err := wl.Kubectl.Run(t.Context(), nil, "patch", "nodepool", "kwok-reference", "--type=merge",
		"-p", `{"spec":{"disruption":{"consolidateAfter":"`+consolidateAfter+`"}}}`); err != nil {
		t.Fatalf("cannot edit the reference NodePool in the workload cluster: %v", err)
	}
	for org, pool := range pools {
		wl.Cluster.WaitForT(t, xrSettleTimeout, NodePoolKind, "", pool, func(u *unstructured.Unstructured) (bool, string) {
			got, _, _ := unstructured.NestedString(u.Object, "spec", "disruption", "consolidateAfter")
			return got == consolidateAfter, org + "'s pool: consolidateAfter " + got
		})
	}
}
