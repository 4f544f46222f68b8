package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/kiso-dev/kiso/functions/internal/fntest"
)

// stackSwitch is orgSpec switched to stack isolation.
var stackSwitch = strings.Replace(orgSpec, `"stacks":`, `"isolation":"stack","stacks":`, 1)

func TestModeSwitchKeepsTheOldPoolUntilTheNewOnesAreReady(t *testing.T) {
	old := composedOrg(t, true)
	rsp := run(t, newRequest(t, input, xr(stackSwitch), old), cluster{refNodeClass, refNodePool})
	fntest.AssertNoFatal(t, rsp)

	got := fntest.Desired(t, rsp)
	for _, name := range []string{"nodepool-kiso-acme", "nodeclass-kiso-acme", "usage-kiso-acme"} {
		if diff := cmp.Diff(fntest.JSONMap(t, old[name]), withStatus(t, got[name], old[name])); diff != "" {
			t.Errorf("retired %s must be kept unchanged until its replacements are Ready: -composed, +kept:\n%s", name, diff)
		}
	}
	for _, name := range []string{"nodepool-kiso-acme.web", "nodepool-kiso-acme.jobs"} {
		if _, ok := got[name]; !ok {
			t.Errorf("new pool %s not rendered", name)
		}
	}
	assertCondition(t, rsp, TypePoolsSettled, fnv1.Status_STATUS_CONDITION_FALSE, ReasonReplacing,
		"keeping retired pools kiso-acme until new pools kiso-acme.web, kiso-acme.jobs report Ready")
}

func TestModeSwitchDropsTheOldPoolOnceTheNewOnesAreReady(t *testing.T) {
	observed := composedOrg(t, true)
	for name, o := range fntest.Desired(t, run(t, newRequest(t, input, xr(stackSwitch), nil), cluster{refNodeClass, refNodePool})) {
		o["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}}
		observed[name] = fntest.ToJSON(t, o)
	}
	rsp := run(t, newRequest(t, input, xr(stackSwitch), observed), cluster{refNodeClass, refNodePool})
	got := fntest.Desired(t, rsp)
	for _, name := range []string{"nodepool-kiso-acme", "nodeclass-kiso-acme", "usage-kiso-acme"} {
		if _, ok := got[name]; ok {
			t.Errorf("retired %s still rendered after every new pool is Ready", name)
		}
	}
	assertCondition(t, rsp, TypePoolsSettled, fnv1.Status_STATUS_CONDITION_TRUE, ReasonSettled, "")
}

// withStatus copies the observed status onto a kept object, which carries
// none, so the two can be compared whole.
func withStatus(t *testing.T, kept map[string]any, observed string) map[string]any {
	t.Helper()
	if st, ok := fntest.JSONMap(t, observed)["status"]; ok && kept != nil {
		kept["status"] = st
	}
	return kept
}
