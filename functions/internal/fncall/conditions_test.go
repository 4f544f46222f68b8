package fncall

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/response"
)

func TestConditions(t *testing.T) {
	errs := field.ErrorList{field.Required(field.NewPath("spec", "organization"), ""), field.Invalid(field.NewPath("spec", "region"), "x", "bad")}
	composite, claim := fnv1.Target_TARGET_COMPOSITE.Enum(), fnv1.Target_TARGET_COMPOSITE_AND_CLAIM.Enum()
	cases := map[string]struct {
		reason string
		set    func(*fnv1.RunFunctionResponse)
		want   *fnv1.RunFunctionResponse
	}{
		"InvalidSpecIsFatalAndSaysEveryField": {
			reason: "Every spec error is in the condition and in the Fatal result, so nothing is applied or deleted.",
			set:    func(rsp *fnv1.RunFunctionResponse) { InvalidSpec(rsp, errs, CompositeAndClaim) },
			want: &fnv1.RunFunctionResponse{
				Conditions: []*fnv1.Condition{{Type: TypeSpecValid, Status: fnv1.Status_STATUS_CONDITION_FALSE, Reason: ReasonInvalidSpec, Message: ptr.To(errs.ToAggregate().Error()), Target: claim}},
				Results:    []*fnv1.Result{{Severity: fnv1.Severity_SEVERITY_FATAL, Message: errs.ToAggregate().Error(), Target: composite}},
			},
		},
		"SpecValidOnTheXROnly": {
			reason: "An XR without a claim gets its conditions on the XR.",
			set:    func(rsp *fnv1.RunFunctionResponse) { SpecValid(rsp, Composite) },
			want: &fnv1.RunFunctionResponse{
				Conditions: []*fnv1.Condition{{Type: TypeSpecValid, Status: fnv1.Status_STATUS_CONDITION_TRUE, Reason: ReasonValid, Target: composite}},
			},
		},
		"NameConflictsAreJoined": {
			reason: "Every conflict is named, in order, in the condition and the Fatal result.",
			set:    func(rsp *fnv1.RunFunctionResponse) { NameConflicts(rsp, []string{"a exists", "b exists"}, Composite) },
			want: &fnv1.RunFunctionResponse{
				Conditions: []*fnv1.Condition{{Type: TypeNamesAvailable, Status: fnv1.Status_STATUS_CONDITION_FALSE, Reason: ReasonNameConflict, Message: ptr.To("a exists; b exists"), Target: composite}},
				Results:    []*fnv1.Result{{Severity: fnv1.Severity_SEVERITY_FATAL, Message: "a exists; b exists", Target: composite}},
			},
		},
		"NamesAvailable": {
			reason: "No other object holds a name the XR needs.",
			set:    func(rsp *fnv1.RunFunctionResponse) { NamesAvailable(rsp, CompositeAndClaim) },
			want: &fnv1.RunFunctionResponse{
				Conditions: []*fnv1.Condition{{Type: TypeNamesAvailable, Status: fnv1.Status_STATUS_CONDITION_TRUE, Reason: ReasonAvailable, Target: claim}},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := response.To(&fnv1.RunFunctionRequest{}, response.DefaultTTL)
			tc.set(rsp)
			got := &fnv1.RunFunctionResponse{Conditions: rsp.GetConditions(), Results: rsp.GetResults()}
			if diff := cmp.Diff(tc.want, got, protocmp.Transform()); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
