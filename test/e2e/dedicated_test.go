package e2e

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestDedicatedIdentityInTheBoundCluster proves the cluster binding of the tenancy issue on a real control
// plane: Crossplane hands the isolation function the XKarpenterCluster the claim names; the organization gets
// an IAM role and instance profile of its own under the cluster's node-role path and permissions boundary,
// tagged with the cluster's and the organization's tags; its EC2NodeClass names that profile only; and the
// cluster's deletion policy keeps the identity while the EC2NodeClass names it, so it cannot be deleted from
// under a tenant.
func TestDedicatedIdentityInTheBoundCluster(t *testing.T) {
	inLocalClusterLaneT(t)
	// The organization's role starts with the cluster's name prefix and lives where the controller may pass
	// roles: <prefix>-org-<organization>-node under <iamPath>organizations/.
	const (
		dedicatedRoleAWSName = "kiso-dedicated-eu-org-hooli-node"
		dedicatedRolePath    = "/kiso/dedicated-eu/organizations/"
	)
	useReferenceObjectsT(t)
	cluster := readTestdataT(t, "dedicated", "cluster.yaml")
	env.ApplyT(t, cluster)
	t.Cleanup(func() { deleteLocalClusterAtCleanup(t, cluster) })
	bound := env.Cluster.WaitForT(t, 60*time.Second, ClusterKind, "", "e2e-dedicated", func(u *unstructured.Unstructured) (bool, string) {
		r, _, _ := unstructured.NestedString(u.Object, "status", "controllerRoleResource")
		return r != "", "no status.controllerRoleResource yet"
	})
	controllerRole, _, _ := unstructured.NestedString(bound.Object, "status", "controllerRoleResource")

	claim := readTestdataT(t, "dedicated", "claim.yaml")
	env.ApplyT(t, claim)
	tn := tenant{Namespace: "e2e-hooli", Name: "hooli", Organization: "hooli"}
	xr := tn.xrName(t)

	role := env.Cluster.WaitForT(t, 60*time.Second, RoleKind, "", "kiso-hooli-node", nil)
	if got := role.GetAnnotations()["crossplane.io/external-name"]; got != dedicatedRoleAWSName {
		t.Errorf("dedicated role's AWS name: want %s, got %q", dedicatedRoleAWSName, got)
	}
	wantForProvider := map[string]any{
		"path":                dedicatedRolePath,
		"permissionsBoundary": "arn:aws:iam::111122223333:policy/platform-boundary",
		"tags":                map[string]any{"environment": "e2e", "kiso.dev/organization": "hooli", "kiso.dev/customer": "hooli-xyz"},
	}
	gotForProvider := map[string]any{}
	for k := range wantForProvider {
		gotForProvider[k] = nested(role, "spec", "forProvider", k)
	}
	if diff := cmp.Diff(wantForProvider, gotForProvider); diff != "" {
		t.Errorf("dedicated role: -want, +got:\n%s", diff)
	}
	profile := env.Cluster.WaitForT(t, 60*time.Second, InstanceProfileKind, "", "kiso-hooli-node", nil)
	if got := nested(profile, "spec", "forProvider", "roleRef", "name"); got != "kiso-hooli-node" {
		t.Errorf("instance profile's roleRef: want kiso-hooli-node, got %v", got)
	}
	entry := env.Cluster.WaitForT(t, 60*time.Second, AccessEntryKind, "", "kiso-hooli-node", nil)
	if got := []any{nested(entry, "spec", "forProvider", "type"), nested(entry, "spec", "forProvider", "clusterName")}; !cmp.Equal(got, []any{"EC2_LINUX", "dedicated-eu"}) {
		t.Errorf("access entry (type, cluster): want [EC2_LINUX dedicated-eu], got %v", got)
	}

	nc := env.Cluster.WaitForT(t, 60*time.Second, EC2NodeClassKind, "", "kiso-hooli", nil)
	if got := nested(nc, "spec", "instanceProfile"); got != dedicatedRoleAWSName {
		t.Errorf("EC2NodeClass instanceProfile: want %s, got %v", dedicatedRoleAWSName, got)
	}
	if got := nested(nc, "spec", "role"); got != nil {
		t.Errorf("EC2NodeClass still names the reference's role %v", got)
	}
	wantTags := map[string]any{"platform.example.com/team": "platform", "environment": "e2e", "kiso.dev/organization": "hooli", "kiso.dev/customer": "hooli-xyz"}
	if diff := cmp.Diff(wantTags, nested(nc, "spec", "tags")); diff != "" {
		t.Errorf("EC2NodeClass tags (the cluster's inherited): -want, +got:\n%s", diff)
	}

	// Every identity object carries the instance profile its EC2NodeClass names, by which the cluster's deletion
	// policy keeps it: deleted directly, the role is refused while the EC2NodeClass names its profile.
	for _, kind := range []schema.GroupVersionKind{RoleKind, InstanceProfileKind, AccessEntryKind} {
		if got := env.Cluster.GetT(t, kind, "", "kiso-hooli-node").GetAnnotations()["kiso.dev/instance-profile"]; got != dedicatedRoleAWSName {
			t.Errorf("%s kiso-hooli-node: annotation kiso.dev/instance-profile %q, want %s", kind.Kind, got, dedicatedRoleAWSName)
		}
	}
	waitUntilDeletionRefusedT(t, []string{"roles.iam.aws.upbound.io", "kiso-hooli-node"}, "kiso-deletion-order.e2e-dedicated")
	assertDeletionRefusedT(t, []string{"roles.iam.aws.upbound.io", "kiso-hooli-node"}, "kiso-deletion-order.e2e-dedicated",
		"Role kiso-hooli-node is in use: EC2NodeClass kiso-hooli launches nodes with instance profile "+dedicatedRoleAWSName+
			", whose identity it is part of; it goes once that NodeClass, and so its last node, is gone")
	// The cluster keeps its controller role with a Usage of its own, the same however many organizations it has.
	kept := env.Cluster.WaitForT(t, 60*time.Second, ClusterUsageKind, "", "role-"+controllerRole+"-kept-with-cluster", nil)
	if of, by := nested(kept, "spec", "of", "resourceRef", "name"), nested(kept, "spec", "by"); of != controllerRole || by != nil {
		t.Errorf("the cluster's Usage of its controller role: of %v by %v, want of %s by nothing", of, by, controllerRole)
	}

	// Deleted, the claim's EC2NodeClass goes (no Karpenter for AWS holds it here), and the role after it, at the
	// garbage collector's next attempt.
	env.DeleteT(t, claim)
	env.Cluster.WaitForDeletionT(t, 90*time.Second, IsolationKind, "", xr)
	env.Cluster.WaitForDeletionT(t, 180*time.Second, RoleKind, "", "kiso-hooli-node")
}
