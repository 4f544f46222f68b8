package fncall

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv1 "github.com/crossplane/crossplane/apis/v2/core/v2"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composite"
)

// Crossplane's Synced messages when it may not read a required NodePool, and when it may not apply a
// composed admission policy.
const (
	fetchRefused      = `cannot compose resources: cannot run Composition pipeline step "isolation": fetching resources for nodePoolRef: cannot get required resource by name: nodepools.karpenter.sh "tenant-reference" is forbidden: User "system:serviceaccount:crossplane-system:crossplane" cannot get resource "nodepools" in API group "karpenter.sh" at the cluster scope`
	applyRefused      = `cannot compose resources: cannot apply composed resource "placement-policy": validatingadmissionpolicies.admissionregistration.k8s.io "kiso-placement" is forbidden: User "system:serviceaccount:crossplane-system:crossplane" cannot patch resource "validatingadmissionpolicies" in API group "admissionregistration.k8s.io" at the cluster scope`
	escalationRefused = `cannot compose resources: cannot apply composed resource "placement-role-acme": roles.rbac.authorization.k8s.io "kiso-placement" is forbidden: user "system:serviceaccount:crossplane-system:crossplane" (groups=["system:serviceaccounts" "system:serviceaccounts:crossplane-system" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:
{APIGroups:["placement.kiso.dev"], Resources:["organizations"], Verbs:["acme"]}`
	coreRefused = `cannot compose resources: cannot apply composed resource "placement-acme": configmaps "kiso-placement" is forbidden: User "system:serviceaccount:crossplane-system:crossplane" cannot patch resource "configmaps" in API group "" in the namespace "acme"`
)

var crossplane = "system:serviceaccount:crossplane-system:crossplane"

func TestParseReadsTheAPIServersRefusal(t *testing.T) {
	cases := map[string]struct {
		message string
		want    Refusal
		ok      bool
	}{
		"RequiredResourceFetch": {fetchRefused, Refusal{User: crossplane, Verb: "get", Resource: "nodepools", Group: "karpenter.sh"}, true},
		"ComposedResourceApply": {applyRefused, Refusal{User: crossplane, Verb: "patch", Resource: "validatingadmissionpolicies", Group: "admissionregistration.k8s.io"}, true},
		"CoreGroup":             {coreRefused, Refusal{User: crossplane, Verb: "patch", Resource: "configmaps", Group: ""}, true},
		"RoleEscalation":        {escalationRefused, Refusal{User: crossplane, Verb: "escalate", Resource: "roles", Group: "rbac.authorization.k8s.io"}, true},
		"OtherError":            {`cannot compose resources: admission webhook "nousages.protection.crossplane.io" denied the request`, Refusal{}, false},
		"Empty":                 {"", Refusal{}, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := ParseRefusal(tc.message)
			if ok != tc.ok {
				t.Fatalf("ParseRefusal(...): ok %t, want %t", ok, tc.ok)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseRefusal(...): -want, +got:\n%s", diff)
			}
		})
	}
}

// The message a function writes must lead its next call back to the same refusal, or the function would render
// (and be refused) again on every other call.
func TestMessageQuotesTheRefusal(t *testing.T) {
	r := Refusal{User: crossplane, Verb: "get", Resource: "nodepools", Group: "karpenter.sh"}
	got, ok := ParseRefusal("pipeline step \"isolation\" returned a fatal result: " + r.Message())
	if !ok || got != r {
		t.Errorf("ParseRefusal(Message()) = %+v, %t; want %+v", got, ok, r)
	}
}

func TestCheck(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	refused, _ := ParseRefusal(fetchRefused)
	permittedFalse := func(age time.Duration) xpv1.Condition {
		return xpv1.Condition{Type: TypePermitted, Status: corev1.ConditionFalse, Reason: ReasonForbidden, Message: refused.Message(),
			LastTransitionTime: metav1.NewTime(now.Add(-age))}
	}
	syncedFalse := func(msg string) xpv1.Condition {
		return xpv1.Condition{Type: xpv1.TypeSynced, Status: corev1.ConditionFalse, Reason: xpv1.ReasonReconcileError, Message: msg}
	}
	cases := map[string]struct {
		reason     string
		conditions []xpv1.Condition
		want       RefusalVerdict
	}{
		"NeverRefused": {
			reason:     "An XR Crossplane was never refused for renders as usual and gets no Permitted condition.",
			conditions: []xpv1.Condition{xpv1.ReconcileSuccess()},
			want:       RefusalVerdict{},
		},
		"OtherError": {
			reason:     "An error other than a refusal is not reported as one.",
			conditions: []xpv1.Condition{syncedFalse("cannot compose resources: connection refused")},
			want:       RefusalVerdict{},
		},
		"CrossplaneWasRefused": {
			reason:     "Crossplane's last reconcile was refused: stop and say so.",
			conditions: []xpv1.Condition{syncedFalse(fetchRefused)},
			want:       RefusalVerdict{Refused: &refused},
		},
		"StandingRefusal": {
			reason:     "The function stopped on a refusal a moment ago: stop again, with the same message.",
			conditions: []xpv1.Condition{permittedFalse(time.Minute), syncedFalse("pipeline step \"isolation\" returned a fatal result: " + refused.Message())},
			want:       RefusalVerdict{Refused: &refused},
		},
		"RetryAfterAWhile": {
			reason:     "A refusal older than RetryAfter: render normally once, to learn whether the grant arrived.",
			conditions: []xpv1.Condition{permittedFalse(RetryAfter), syncedFalse("pipeline step \"isolation\" returned a fatal result: " + refused.Message())},
			want:       RefusalVerdict{Report: true},
		},
		"RetryRefusedAgain": {
			reason: "The retry was refused: Crossplane marked the condition Unknown and wrote the refusal; stop again.",
			conditions: []xpv1.Condition{{Type: TypePermitted, Status: corev1.ConditionUnknown, Reason: "FatalError"},
				syncedFalse(applyRefused)},
			want: RefusalVerdict{Refused: &Refusal{User: crossplane, Verb: "patch", Resource: "validatingadmissionpolicies", Group: "admissionregistration.k8s.io"}},
		},
		"Granted": {
			reason: "The retry succeeded: render normally and set Permitted back to True.",
			conditions: []xpv1.Condition{{Type: TypePermitted, Status: corev1.ConditionUnknown, Reason: "FatalError"},
				xpv1.ReconcileSuccess()},
			want: RefusalVerdict{Report: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			xr := &resource.Composite{Resource: composite.New()}
			xr.Resource.SetConditions(tc.conditions...)
			if diff := cmp.Diff(tc.want, CheckRefusal(xr, now)); diff != "" {
				t.Errorf("%s\nCheck(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestStopIsFatalWithAConditionForTheClaim(t *testing.T) {
	r, _ := ParseRefusal(applyRefused)
	rsp := &fnv1.RunFunctionResponse{}
	StopRefused(rsp, r)
	target := fnv1.Target_TARGET_COMPOSITE_AND_CLAIM
	want := &fnv1.RunFunctionResponse{
		Results: []*fnv1.Result{{Severity: fnv1.Severity_SEVERITY_FATAL, Message: r.Message(), Target: fnv1.Target_TARGET_COMPOSITE.Enum()}},
		Conditions: []*fnv1.Condition{{Type: TypePermitted, Status: fnv1.Status_STATUS_CONDITION_FALSE, Reason: ReasonForbidden,
			Message: &[]string{r.Message()}[0], Target: &target}},
	}
	if diff := cmp.Diff(want, rsp, protocmp.Transform()); diff != "" {
		t.Errorf("StopRefused(...): -want, +got:\n%s", diff)
	}
}
