package fncall

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	xpv1 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composite"
)

// Any XR's condition of any type reads as its GetCondition reads it, whatever its status holds beside the
// conditions, or instead of them.
func FuzzObservedIsGetCondition(f *testing.F) {
	f.Add(`{"status":{"conditions":[{"type":"Synced","status":"False","reason":"ReconcileError","message":"x"}],"pools":[{"name":"acme"}]}}`, "Synced")
	f.Add(`{"status":{"conditions":[{"type":"Ready","status":"True"}]}}`, "Synced")
	f.Add(`{"status":{"pools":[]}}`, "Ready")
	f.Add(`{"status":null}`, "Ready")
	f.Add(`{"status":"not an object"}`, "Ready")
	f.Add(`{"status":{"conditions":"not a list"}}`, "Ready")
	f.Add(`{"status":{"Conditions":[{"type":"Ready","status":"True"}],"conditions":[{"type":"Ready","status":"False"}]}}`, "Ready")
	f.Add(`{"spec":{}}`, "Ready")
	f.Fuzz(func(t *testing.T, object, conditionType string) {
		xr := &resource.Composite{Resource: composite.New()}
		if err := json.Unmarshal([]byte(object), &xr.Resource.Object); err != nil || xr.Resource.Object == nil {
			return
		}
		want := xr.Resource.GetCondition(xpv1.ConditionType(conditionType))
		if diff := cmp.Diff(want, Observed(xr, xpv1.ConditionType(conditionType))); diff != "" {
			t.Errorf("Observed(%s, %q), GetCondition -, Observed +:\n%s", object, conditionType, diff)
		}
	})
}
