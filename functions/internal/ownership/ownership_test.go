package ownership

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/protobuf/testing/protocmp"
	"k8s.io/apimachinery/pkg/runtime/schema"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/kiso-dev/kiso/functions/internal/fnstate"
)

var (
	roleGVK = schema.GroupVersionKind{Group: "iam.aws.upbound.io", Version: "v1beta1", Kind: "Role"}
	ruleGVK = schema.GroupVersionKind{Group: "monitoring.coreos.com", Version: "v1", Kind: "PrometheusRule"}
	role    = Object{Resource: "role", GVK: roleGVK, Name: "prod-karpenter"}
	rule    = Object{Resource: "rule", GVK: ruleGVK, Namespace: "kube-system", Name: "prod-karpenter"}
)

func TestRequireAsksOnlyForObjectsNotYetComposed(t *testing.T) {
	observed := composed.New()
	observed.SetAPIVersion("iam.aws.upbound.io/v1beta1")
	observed.SetKind("Role")
	observed.SetName("prod-karpenter")
	idx := IndexObserved(fnstate.ObservedOf(map[resource.Name]resource.ObservedComposed{"role": {Resource: observed}}))

	rs := map[string]*fnv1.ResourceSelector{}
	Require(rs, []Object{role, rule}, idx)
	ns := "kube-system"
	want := map[string]*fnv1.ResourceSelector{
		"existing/PrometheusRule.monitoring.coreos.com/kube-system/prod-karpenter": {
			ApiVersion: "monitoring.coreos.com/v1", Kind: "PrometheusRule", Namespace: &ns,
			Match: &fnv1.ResourceSelector_MatchName{MatchName: "prod-karpenter"},
		},
	}
	if diff := cmp.Diff(want, rs, protocmp.Transform()); diff != "" {
		t.Errorf("Require(...): -want, +got:\n%s", diff)
	}
}

// verdict is a Verdict as a user reads it.
type verdict struct {
	Waiting   bool
	Conflicts []string
}

func TestVerify(t *testing.T) {
	answer := func(objects ...string) map[string]*fnv1.Resources {
		items := &fnv1.Resources{}
		for _, o := range objects {
			items.Items = append(items.Items, &fnv1.Resource{Resource: resource.MustStructJSON(o)})
		}
		return map[string]*fnv1.Resources{role.requirement(): items}
	}
	cases := map[string]struct {
		reason   string
		required map[string]*fnv1.Resources
		want     verdict
	}{
		"NotYetAnswered": {
			reason: "Until Crossplane answers, the function waits.",
			want:   verdict{Waiting: true},
		},
		"NameIsFree": {
			reason:   "Nothing holds the name: no conflict.",
			required: answer(),
			want:     verdict{},
		},
		"HeldByAnotherOwner": {
			reason:   "An object without this XR as controller is never adopted.",
			required: answer(`{"apiVersion":"iam.aws.upbound.io/v1beta1","kind":"Role","metadata":{"name":"prod-karpenter","ownerReferences":[{"apiVersion":"v1","kind":"X","name":"other","uid":"other","controller":true}]}}`),
			want:     verdict{Conflicts: []string{`Role "prod-karpenter" already exists and is not composed by this XKarpenterCluster; kiso never adopts or overwrites an object it did not create`}},
		},
		"HeldByThisXR": {
			reason:   "An object this XR controls is its own, even if Crossplane lost track of it.",
			required: answer(`{"apiVersion":"iam.aws.upbound.io/v1beta1","kind":"Role","metadata":{"name":"prod-karpenter","ownerReferences":[{"apiVersion":"kiso.dev/v1alpha1","kind":"XKarpenterCluster","name":"prod","uid":"xr-uid","controller":true}]}}`),
			want:     verdict{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := &fnv1.RunFunctionRequest{RequiredResources: tc.required}
			got := Verify(req, []Object{role}, Composed{}, Owner{Kind: "XKarpenterCluster", UID: "xr-uid"})
			if diff := cmp.Diff(tc.want, verdict{Waiting: got.Waiting, Conflicts: got.Messages()}, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nVerify(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
