package e2e

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"
)

// Steps of the placement XKarpenterCluster the scenarios share: its name, its policies and its view, and
// managed resources made Ready as provider-aws would.

// markManagedResourceAvailable does what provider-aws does once AWS holds the resource and its last apply
// succeeded: it sets Ready=True and Synced=True through the status subresource.
func markManagedResourceAvailable(t *testing.T, gvk schema.GroupVersionKind, name string) {
	t.Helper()
	r, err := env.Cluster.Resource(gvk, "")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Format(time.RFC3339)
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		u, err := r.Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if err := unstructured.SetNestedSlice(u.Object, []any{
			map[string]any{"type": "Ready", "status": "True", "reason": "Available", "lastTransitionTime": now},
			map[string]any{"type": "Synced", "status": "True", "reason": "ReconcileSuccess", "lastTransitionTime": now},
		}, "status", "conditions"); err != nil {
			return err
		}
		_, err = r.UpdateStatus(t.Context(), u, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("cannot mark %s %s Ready and Synced: %v", gvk.Kind, name, err)
	}
}

// clusterViewName is the name of the view the cluster named cluster composes for its organizations.
func clusterViewName(cluster string) string { return "kiso-cluster." + cluster }

const placementCluster = "e2e-placement"

// The cluster's policies: every pod outside platform namespaces, the pools of namespaces an organization
// holds, and injection.
const (
	placementPolicy = "kiso-placement"
	poolsPolicy     = "kiso-placement-pools"
	warnPolicy      = "kiso-placement-warn"
	injectPolicy    = "kiso-placement-inject"
)
