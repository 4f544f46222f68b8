package clusterview

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
)

// fullStatus is a cluster's status in the middle of a rollout, every field set.
func fullStatus() v1alpha1.XKarpenterClusterStatus {
	return v1alpha1.XKarpenterClusterStatus{
		Helm:                     &v1alpha1.HelmValues{Settings: v1alpha1.HelmSettings{ClusterName: "prod-eu", InterruptionQueue: "q"}},
		ControllerRoleARN:        "arn:aws:iam::123456789012:role/c",
		ControllerRoleResource:   "prod-eu-karpenter-controller",
		KarpenterReleaseResource: "prod-eu-karpenter-release",
		NodeRoleName:             "n",
		NodeRoleARN:              "arn:aws:iam::123456789012:role/n",
		InstanceProfileName:      "n",
		NodeRolePath:             "/kiso/prod-eu/organizations/",
		QueueName:                "q",
		NamePrefix:               "kiso-prod-eu",
		Rollout:                  "wave 2/3: 4/10 on 1a2b3c4d5e",
		Rollouts: []v1alpha1.ReferenceRollout{{
			Reference: "EC2NodeClass.v1.karpenter.k8s.aws/default,NodePool/default", Revision: "1a2b3c4d5e", Wave: 1,
			WaveDoneAt: "2026-12-02T12:00:00Z", Waiting: 6, HeldBy: "organization o1: pool kiso-o1 is still on revision 0f",
			Organizations: []v1alpha1.RevisionCount{{Revision: "1a2b3c4d5e", Organizations: 4}, {Revision: "0f", Organizations: 6}},
			Snapshots:     []v1alpha1.ReferenceSnapshot{{Revision: "0f"}, {Revision: "1a2b3c4d5e"}},
		}},
	}
}

func TestOrganizationsSeeWhatTheyBuildOnAndNoCount(t *testing.T) {
	want := fullStatus()
	want.Helm, want.Rollout = nil, ""
	want.Rollouts = []v1alpha1.ReferenceRollout{{
		Reference: "EC2NodeClass.v1.karpenter.k8s.aws/default,NodePool/default", Revision: "1a2b3c4d5e", Wave: 1,
		Snapshots: []v1alpha1.ReferenceSnapshot{{Revision: "0f"}, {Revision: "1a2b3c4d5e"}},
	}}
	if diff := cmp.Diff(want, ForOrganizations(fullStatus())); diff != "" {
		t.Errorf("ForOrganizations: -want, +got:\n%s", diff)
	}

	// Another organization moved: the counts change, the view does not.
	moved := fullStatus()
	moved.Rollout = "wave 2/3: 5/10 on 1a2b3c4d5e"
	moved.Rollouts[0].Waiting, moved.Rollouts[0].HeldBy = 5, "organization o2: pool kiso-o2 is still on revision 0f"
	moved.Rollouts[0].Organizations = []v1alpha1.RevisionCount{{Revision: "1a2b3c4d5e", Organizations: 5}, {Revision: "0f", Organizations: 5}}
	before, err := Render("prod", v1alpha1.XKarpenterClusterSpec{ClusterName: "prod-eu"}, fullStatus())
	if err != nil {
		t.Fatal(err)
	}
	after, err := Render("prod", v1alpha1.XKarpenterClusterSpec{ClusterName: "prod-eu"}, moved)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before.Object, after.Object); diff != "" {
		t.Errorf("an organization moving changed the view every organization reads: -before, +after:\n%s", diff)
	}
}

func TestAViewReadsBackAsRendered(t *testing.T) {
	spec := v1alpha1.XKarpenterClusterSpec{ClusterName: "prod-eu", Region: "eu-west-3", Tags: map[string]string{"team": "platform"}}
	view, err := Render("prod", spec, fullStatus())
	if err != nil {
		t.Fatal(err)
	}
	if view.GetName() != "kiso-cluster.prod" || view.GroupVersionKind() != GVK {
		t.Errorf("view %s %s, want %s kiso-cluster.prod", view.GroupVersionKind(), view.GetName(), GVK)
	}
	var gotSpec v1alpha1.XKarpenterClusterSpec
	var gotStatus v1alpha1.XKarpenterClusterStatus
	if err := Read(&view.Unstructured, &gotSpec, &gotStatus); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(spec, gotSpec); diff != "" {
		t.Errorf("spec: -rendered, +read:\n%s", diff)
	}
	if diff := cmp.Diff(ForOrganizations(fullStatus()), gotStatus); diff != "" {
		t.Errorf("status: -rendered, +read:\n%s", diff)
	}
}

func TestOnlyTheClustersOwnViewIsComposedByIt(t *testing.T) {
	cluster := metav1.OwnerReference{APIVersion: "kiso.dev/v1alpha1", Kind: "XKarpenterCluster", Name: "prod", Controller: ptr.To(true)}
	other := func(edit func(*metav1.OwnerReference)) metav1.OwnerReference { o := cluster; edit(&o); return o }
	for name, tc := range map[string]struct {
		owners []metav1.OwnerReference
		want   bool
	}{
		"Controlled":        {owners: []metav1.OwnerReference{cluster}, want: true},
		"NoOwner":           {},
		"OwnedOnly":         {owners: []metav1.OwnerReference{other(func(o *metav1.OwnerReference) { o.Controller = nil })}},
		"AnotherCluster":    {owners: []metav1.OwnerReference{other(func(o *metav1.OwnerReference) { o.Name = "staging" })}},
		"AnotherGroup":      {owners: []metav1.OwnerReference{other(func(o *metav1.OwnerReference) { o.APIVersion = "example.org/v1alpha1" })}},
		"AnotherKind":       {owners: []metav1.OwnerReference{other(func(o *metav1.OwnerReference) { o.Kind = "XKarpenterIsolation" })}},
		"NameInAnotherCase": {owners: []metav1.OwnerReference{other(func(o *metav1.OwnerReference) { o.Name = strings.ToUpper("prod") })}},
	} {
		t.Run(name, func(t *testing.T) {
			view, err := Render("prod", v1alpha1.XKarpenterClusterSpec{}, v1alpha1.XKarpenterClusterStatus{})
			if err != nil {
				t.Fatal(err)
			}
			view.SetOwnerReferences(tc.owners)
			if got := ComposedBy(&view.Unstructured, "prod"); got != tc.want {
				t.Errorf("ComposedBy = %t, want %t", got, tc.want)
			}
		})
	}
}

func TestANameNoAPIServerGivesIsRefused(t *testing.T) {
	for _, cluster := range []string{"", "Prod", "prod_eu", "-prod"} {
		if _, err := Render(cluster, v1alpha1.XKarpenterClusterSpec{}, v1alpha1.XKarpenterClusterStatus{}); err == nil {
			t.Errorf("Render(%q): no error, want one", cluster)
		}
	}
}

func TestALongClusterNameGivesAValidName(t *testing.T) {
	long := strings.Repeat("a", 253)
	if got := Name(long); len(got) > maxName || !strings.HasPrefix(got, "kiso-cluster.") {
		t.Errorf("Name(253 characters) = %q (%d characters)", got, len(got))
	}
	if Name(long) == Name(long[:252]) {
		t.Error("two cluster names gave one view name")
	}
}
