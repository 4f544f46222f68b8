package main

import (
	"testing"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
)

func TestReadiness(t *testing.T) {
	observed := func(conditions string) resource.ObservedComposed {
		cd := composed.New()
		if err := cd.UnmarshalJSON([]byte(`{"apiVersion":"iam.aws.upbound.io/v1beta1","kind":"Role","metadata":{"name":"r"},"status":{"conditions":` + conditions + `}}`)); err != nil {
			t.Fatal(err)
		}
		return resource.ObservedComposed{Resource: cd}
	}
	cases := map[string]struct {
		reason   string
		name     resource.Name
		observed resource.ObservedComposed
		exists   bool
		want     resource.Ready
	}{
		"NotObservedIsNotReady": {
			reason: "A resource Crossplane has not created yet is not ready.",
			name:   crControllerRole, exists: false, want: resource.ReadyFalse,
		},
		"ReadyAndSyncedIsReady": {
			reason:   "The provider created it and its last apply succeeded.",
			name:     crControllerRole,
			observed: observed(`[{"type":"Ready","status":"True"},{"type":"Synced","status":"True"}]`), exists: true,
			want: resource.ReadyTrue,
		},
		"ReadyButNotSyncedIsNotReady": {
			reason:   "It exists in AWS but the last change (say, a policy update) failed: the XR must not claim readiness.",
			name:     crControllerRole,
			observed: observed(`[{"type":"Ready","status":"True"},{"type":"Synced","status":"False","reason":"ReconcileError"}]`), exists: true,
			want: resource.ReadyFalse,
		},
		"SyncedButNotReadyIsNotReady": {
			reason:   "Applied, but AWS has not finished creating it.",
			name:     crQueue,
			observed: observed(`[{"type":"Ready","status":"False","reason":"Creating"},{"type":"Synced","status":"True"}]`), exists: true,
			want: resource.ReadyFalse,
		},
		"NoConditionsIsNotReady": {
			reason:   "A managed resource the provider has not reconciled yet has no conditions.",
			name:     crQueue,
			observed: observed(`[]`), exists: true,
			want: resource.ReadyFalse,
		},
		"PrometheusRuleIsReadyOnceItExists": {
			reason:   "A PrometheusRule has no conditions; existing is all it does.",
			name:     crPrometheusRule,
			observed: observed(`[]`), exists: true,
			want: resource.ReadyTrue,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := readiness(tc.name, tc.observed, tc.exists); got != tc.want {
				t.Errorf("%s\nreadiness: want %v, got %v", tc.reason, tc.want, got)
			}
		})
	}
}
