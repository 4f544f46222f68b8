package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/fntest"
)

// Tests for how kiso names and paths its AWS resources, and how it never
// takes over another tool's unless asked to.

func TestDefaultNamesAndPathAreKisosOwn(t *testing.T) {
	got := fntest.Desired(t, run(t, newRequest(t, xr(podIdentitySpec), nil)))
	for name, o := range got {
		if !strings.HasSuffix(o["apiVersion"].(string), ".aws.upbound.io/v1beta1") {
			continue
		}
		if external, ok := fntest.Dig(o, "metadata", "annotations", meta.AnnotationKeyExternalName).(string); ok && !strings.HasPrefix(external, "kiso-prod-karpenter-") {
			t.Errorf("%s: AWS name %q does not start with kiso-prod-karpenter-", name, external)
		}
		if path, ok := fntest.Dig(o, "spec", "forProvider", "path").(string); ok && path != "/kiso/prod/" {
			t.Errorf("%s: IAM path %q, want /kiso/prod/", name, path)
		}
		if policy, ok := fntest.Dig(o, "spec", "deletionPolicy").(string); ok {
			t.Errorf("%s: deletionPolicy %q on a resource kiso created; it must be deleted with the XR", name, policy)
		}
	}
	if q := fntest.Dig(got["queue"], "spec", "forProvider", "name"); q != "kiso-prod-karpenter-interruption" {
		t.Errorf("queue name: want kiso-prod-karpenter-interruption, got %v", q)
	}
}

func TestControllerMayPassOrganizationRolesButNotItself(t *testing.T) {
	p := newPlan(validSpec())
	want := []string{
		"arn:aws:iam::111122223333:role/kiso/prod/kiso-prod-karpenter-node",
		"arn:aws:iam::111122223333:role/kiso/prod/organizations/*",
	}
	if diff := cmp.Diff(want, []string(p.PassRoleResources)); diff != "" {
		t.Errorf("iam:PassRole resources: -want, +got:\n%s", diff)
	}
	if strings.HasPrefix(p.ControllerRoleARN, strings.TrimSuffix(want[1], "*")) {
		t.Errorf("the controller role %s lives where the controller may pass roles", p.ControllerRoleARN)
	}
	if p.NodeRolePath != "/kiso/prod/organizations/" {
		t.Errorf("status.nodeRolePath: want /kiso/prod/organizations/, got %q", p.NodeRolePath)
	}
}

func TestPrefixAndPathMeetABoundary(t *testing.T) {
	spec := `{"clusterName":"socle-sbx-53","region":"eu-west-3","accountId":"111122223333",
		"naming":{"prefix":"socle-sbx-53","iamPath":"/socle/socle-sbx-53/"}}`
	got := fntest.Desired(t, run(t, newRequest(t, xr(spec), nil)))
	for name, o := range got {
		if external, ok := fntest.Dig(o, "metadata", "annotations", meta.AnnotationKeyExternalName).(string); ok && !strings.HasPrefix(external, "socle-sbx-53-") {
			t.Errorf("%s: AWS name %q is outside the boundary's socle-sbx-53-*", name, external)
		}
		if path, ok := fntest.Dig(o, "spec", "forProvider", "path").(string); ok && path != "/socle/socle-sbx-53/" {
			t.Errorf("%s: IAM path %q is outside the boundary's /socle/socle-sbx-53/", name, path)
		}
	}
	if q := fntest.Dig(got["queue"], "spec", "forProvider", "name"); q != "socle-sbx-53-karpenter-interruption" {
		t.Errorf("queue name %v is outside the boundary's socle-sbx-53-*", q)
	}
}

func TestTakeOverIsExplicitAndNeverDeletes(t *testing.T) {
	spec := `{"clusterName":"prod","region":"eu-west-3","accountId":"111122223333","naming":{"takeOver":"AWSGettingStarted"}}`
	rsp := run(t, newRequest(t, xr(spec), nil))
	fntest.AssertNoFatal(t, rsp)
	got := fntest.Desired(t, rsp)
	wantNames := map[string]string{
		"controller-role":                      "prod-karpenter",
		"node-role":                            "KarpenterNodeRole-prod",
		"node-instance-profile":                "KarpenterNodeRole-prod",
		"controller-policy-resource-discovery": "KarpenterControllerResourceDiscoveryPolicy-prod",
	}
	for name, want := range wantNames {
		if got := fntest.Dig(got[name], "metadata", "annotations", meta.AnnotationKeyExternalName); got != want {
			t.Errorf("%s: taken-over AWS name: want %s, got %v", name, want, got)
		}
		if path := fntest.Dig(got[name], "spec", "forProvider", "path"); path != "/" {
			t.Errorf("%s: taken-over IAM path: want /, got %v", name, path)
		}
	}
	if q := fntest.Dig(got["queue"], "spec", "forProvider", "name"); q != "prod" {
		t.Errorf("taken-over queue name: want prod, got %v", q)
	}
	for name, o := range got {
		if !strings.HasSuffix(o["apiVersion"].(string), ".aws.upbound.io/v1beta1") {
			continue
		}
		if policy := fntest.Dig(o, "spec", "deletionPolicy"); policy != "Orphan" {
			t.Errorf("%s: deletionPolicy %v; a taken-over setup must never be deleted from AWS", name, policy)
		}
	}
}

// TestEverythingWaitsForTheControllerRole checks the deletion order: every
// AWS object of the cluster is kept by a Usage, either by the controller role
// or, for the node identity's access entry and attachments, by the node role
// (which the controller role keeps); and the controller role and Karpenter's
// Release are kept by Usages with no user, which go only with the cluster
// (which tenant pools keep).
func TestEverythingWaitsForTheControllerRole(t *testing.T) {
	spec := strings.Replace(podIdentitySpec, `"clusterName"`, `"karpenter":{"install":{}},"clusterName"`, 1)
	got := fntest.Desired(t, run(t, newRequest(t, xr(spec), deployedCRDs(t, xr(spec)))))
	keptBy := map[string]string{}          // kind/name -> kind/name of the user
	keptWithCluster := map[string]string{} // kind/name -> the Usage's reason
	for _, o := range got {
		if o["kind"] != "ClusterUsage" {
			continue
		}
		ref := func(side string) string {
			return fmt.Sprint(fntest.Dig(o, "spec", side, "kind")) + "/" + fmt.Sprint(fntest.Dig(o, "spec", side, "resourceRef", "name"))
		}
		if fntest.Dig(o, "spec", "replayDeletion") != true {
			t.Errorf("usage %s does not replay the blocked deletion", ref("of"))
		}
		if fntest.Dig(o, "spec", "by") == nil {
			keptWithCluster[ref("of")], _ = fntest.Dig(o, "spec", "reason").(string)
			continue
		}
		keptBy[ref("of")] = ref("by")
	}
	controller := "Role/" + newPlan(validSpec()).ControllerRoleResource
	release := "Release/" + newPlan(validSpec()).releaseName()
	for _, kept := range []string{controller, release} {
		reason, ok := keptWithCluster[kept]
		if !ok || !strings.Contains(reason, "XKarpenterCluster prod") {
			t.Errorf("%s: kept with the cluster %v, by a Usage whose reason is %q; want one naming XKarpenterCluster prod", kept, ok, reason)
		}
	}
	if len(keptWithCluster) != 2 {
		t.Errorf("Usages with no user keep %v; want the controller role and Karpenter's Release only", keptWithCluster)
	}
	for name, o := range got {
		if !strings.HasSuffix(o["apiVersion"].(string), ".aws.upbound.io/v1beta1") || name == "controller-role" {
			continue
		}
		self := o["kind"].(string) + "/" + fntest.Dig(o, "metadata", "name").(string)
		// Follow the chain of users up to the controller role.
		at, seen := self, map[string]bool{}
		for at != controller {
			next, ok := keptBy[at]
			if !ok || seen[at] {
				t.Errorf("%s (%s) is not kept until the controller role is gone (chain stops at %s)", name, self, at)
				break
			}
			seen[at], at = true, next
		}
	}
}

func TestValidateNaming(t *testing.T) {
	cases := map[string]struct {
		naming v1alpha1.Naming
		want   []string
	}{
		"PrefixTooLong": {
			naming: v1alpha1.Naming{Prefix: strings.Repeat("p", 41)},
			want:   []string{"spec.naming.prefix: Too long: may not be more than 40 bytes"},
		},
		"PrefixWithSlash": {
			naming: v1alpha1.Naming{Prefix: "team/prod"},
			want:   []string{`spec.naming.prefix: Invalid value: "team/prod": must start with a letter or digit and hold only letters, digits, '-' and '_': it starts IAM, SQS and EventBridge names`},
		},
		"PathWithoutTrailingSlash": {
			naming: v1alpha1.Naming{IAMPath: "/socle/prod"},
			want:   []string{`spec.naming.iamPath: Invalid value: "/socle/prod": must be an IAM path: / or /<segment>/.../, segments of letters, digits and +=,.@_-`},
		},
		"TakeOverKeepsAWSsPath": {
			naming: v1alpha1.Naming{TakeOver: v1alpha1.TakeOverAWSGettingStarted, IAMPath: "/kiso/"},
			want:   []string{"spec.naming.iamPath: Forbidden: takeOver AWSGettingStarted uses AWS's names and the path / for what it takes over; iamPath is only for kiso's own names"},
		},
		"UnknownTakeOver": {
			naming: v1alpha1.Naming{TakeOver: "Eksctl"},
			want:   []string{`spec.naming.takeOver: Unsupported value: "Eksctl": supported values: "AWSGettingStarted"`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := validSpec()
			spec.Naming = tc.naming
			var got []string
			for _, e := range validateSpec(spec) {
				got = append(got, e.Error())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("validateSpec(...): -want, +got:\n%s", diff)
			}
		})
	}
}
