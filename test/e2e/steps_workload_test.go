package e2e

import (
	"context"
	"strings"
	"testing"
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
