// Package clusterview is what an XKarpenterCluster shows the organizations bound to it: its spec and the part
// of its status they build on, in an EnvironmentConfig the cluster composes and every organization requires.
//
// Organizations do not require the XKarpenterCluster itself because Crossplane reconciles every XR that
// requires an object whenever that object changes, its status included, and a cluster's status counts its
// organizations: with a rollout, each organization onboarded or moved to a new revision changed the cluster,
// which woke every organization bound to it, so onboarding or rolling out N organizations cost N² reconciles.
// The view changes only when something an organization reads does: the spec, the names the cluster gives,
// a rollout's revision, open wave and snapshots.
package clusterview

import (
	"encoding/json"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/fnstate"
	"github.com/kiso-dev/kiso/functions/internal/names"
)

// GVK is the kind of a view: Crossplane's own kind for data that compositions read, cluster-scoped, which only
// the platform may write (no tenant role grants it) and Crossplane may compose.
var GVK = schema.GroupVersionKind{Group: "apiextensions.crossplane.io", Version: "v1beta1", Kind: "EnvironmentConfig"}

// maxName is the longest an object name may be (a DNS subdomain).
const maxName = 253

// Name is the name of the view of the XKarpenterCluster named cluster.
func Name(cluster string) string { return names.Shorten(maxName, "kiso-cluster."+cluster) }

// Render returns the view of the XKarpenterCluster named cluster: its spec, and of its status what
// organizations read (ForOrganizations).
func Render(cluster string, spec v1alpha1.XKarpenterClusterSpec, status v1alpha1.XKarpenterClusterStatus) (*composed.Unstructured, error) {
	// The API server names every XR so; whatever else a request carries must not name an object.
	if errs := validation.IsDNS1123Subdomain(Name(cluster)); len(errs) > 0 {
		return nil, fmt.Errorf("cannot name the view of %s %q: %s", v1alpha1.ClusterKind, cluster, strings.Join(errs, "; "))
	}
	data, err := toJSONObject(struct {
		Spec   v1alpha1.XKarpenterClusterSpec   `json:"spec"`
		Status v1alpha1.XKarpenterClusterStatus `json:"status"`
	}{spec, ForOrganizations(status)})
	if err != nil {
		return nil, fmt.Errorf("cannot render the view of %s %q: %w", v1alpha1.ClusterKind, cluster, err)
	}
	u := composed.New()
	u.SetGroupVersionKind(GVK)
	u.SetName(Name(cluster))
	u.Object["data"] = data
	return u, nil
}

// ForOrganizations is the part of a cluster's status organizations read: the names the cluster gives and, per
// reference rollout, the revision, the open wave and the snapshots. What a rollout counts (organizations per
// revision, how many wait, who holds the wave, when it was done) and Karpenter's Helm values are the
// platform's to read on the cluster, and change with every organization.
func ForOrganizations(status v1alpha1.XKarpenterClusterStatus) v1alpha1.XKarpenterClusterStatus {
	status.Helm = nil
	status.Rollout = ""
	rollouts := make([]v1alpha1.ReferenceRollout, 0, len(status.Rollouts))
	for _, r := range status.Rollouts {
		rollouts = append(rollouts, v1alpha1.ReferenceRollout{Reference: r.Reference, Revision: r.Revision, Wave: r.Wave, Snapshots: r.Snapshots})
	}
	status.Rollouts = nil
	if len(rollouts) > 0 {
		status.Rollouts = rollouts
	}
	return status
}

// ComposedBy reports whether a view is the one the XKarpenterCluster named cluster composed: Crossplane made
// that cluster its controller. Any other EnvironmentConfig of its name is not that cluster's to read.
func ComposedBy(u *unstructured.Unstructured, cluster string) bool {
	owner := metav1.GetControllerOf(u)
	return owner != nil && owner.Kind == v1alpha1.ClusterKind && owner.APIVersion == v1alpha1.Group+"/"+v1alpha1.Version && owner.Name == cluster
}

// Read decodes a view into spec and status; an error names the field as the cluster's (spec.tags).
func Read(u *unstructured.Unstructured, spec *v1alpha1.XKarpenterClusterSpec, status *v1alpha1.XKarpenterClusterStatus) error {
	data, _ := u.Object["data"].(map[string]any)
	// In order, so a view with both fields malformed always reads the same.
	for _, f := range []struct {
		name string
		into any
	}{{"spec", spec}, {"status", status}} {
		if err := fnstate.Decode(data, f.name, f.into); err != nil {
			return err
		}
	}
	return nil
}

// toJSONObject is v as the JSON object it encodes to.
func toJSONObject(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	return out, json.Unmarshal(b, &out)
}
