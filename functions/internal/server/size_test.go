package server

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

func TestSizeGuard(t *testing.T) {
	withPayload := func(n int) *fnv1.RunFunctionResponse {
		return &fnv1.RunFunctionResponse{Desired: &fnv1.State{Resources: map[string]*fnv1.Resource{
			"big": {Resource: &structpb.Struct{Fields: map[string]*structpb.Value{"data": structpb.NewStringValue(strings.Repeat("x", n))}}},
		}}}
	}
	cases := map[string]struct {
		reason    string
		rsp       *fnv1.RunFunctionResponse
		wantFatal bool
	}{
		"FitsTheMessage": {
			reason: "A response Crossplane can receive is returned as it is.",
			rsp:    withPayload(1 << 20),
		},
		"TooLargeForTheMessage": {
			reason:    "A response over 4 MiB becomes a Fatal result with no desired resources, which changes nothing.",
			rsp:       withPayload(5 << 20),
			wantFatal: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := sizeGuard{fixedRunner{rsp: tc.rsp}}.RunFunction(context.Background(), &fnv1.RunFunctionRequest{})
			if err != nil {
				t.Fatal(err)
			}
			msg, fatal := fatalMessage(got)
			if fatal != tc.wantFatal {
				t.Fatalf("%s\nfatal: %v (%q), want %v", tc.reason, fatal, msg, tc.wantFatal)
			}
			if !tc.wantFatal {
				if got != tc.rsp {
					t.Errorf("%s\nthe response was replaced", tc.reason)
				}
				return
			}
			if !strings.HasPrefix(msg, "cannot return the desired state: it is 524") || len(got.GetDesired().GetResources()) != 0 {
				t.Errorf("%s\ngot fatal %q with %d desired resources", tc.reason, msg, len(got.GetDesired().GetResources()))
			}
		})
	}
}
