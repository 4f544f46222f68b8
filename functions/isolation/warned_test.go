package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/fntest"
)

// pod is a pod of a namespace, with the placement fields given as JSON (""
// for none) and a phase.
func pod(namespace, name, placementFields, phase string) string {
	spec := `{"containers":[{"name":"app","image":"app"}]`
	if placementFields != "" {
		spec += "," + placementFields
	}
	return fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":%q,"namespace":%q},"spec":%s},"status":{"phase":%q}}`, name, namespace, spec, phase)
}

// TestWarnModeCountsWhatEnforceWouldRefuse: in Warn mode the claim counts the
// pods of the organization's namespaces that select none of its pools, as
// the pools policy reads a pod, so the platform knows when Enforce refuses
// nothing.
func TestWarnModeCountsWhatEnforceWouldRefuse(t *testing.T) {
	const webSelector = `"nodeSelector":{"node-restriction.kubernetes.io/kiso.dev.organization":"acme","node-restriction.kubernetes.io/kiso.dev.stack":"web"}`
	affinity := func(org, stack string) string {
		return `"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[` +
			`{"key":"node-restriction.kubernetes.io/kiso.dev.organization","operator":"In","values":["` + org + `"]},` +
			`{"key":"node-restriction.kubernetes.io/kiso.dev.stack","operator":"In","values":["` + stack + `"]}]}]}}}`
	}
	world := cluster{refNodeClass, refNodePool, clusterPolicy, namespace("acme-web"), namespace("batch"),
		pod("acme-web", "placed", webSelector, "Running"),
		pod("acme-web", "by-affinity", affinity("acme", "web"), "Running"),
		pod("acme-web", "bare", "", "Pending"),
		pod("acme-web", "done", "", "Succeeded"),
		pod("acme-web", "other-stack", affinity("acme", "jobs"), "Running"),
		pod("batch", "web-selector-in-jobs", webSelector, "Running"),
		pod("elsewhere", "not-the-organizations", "", "Running"),
		// Given by the platform, listed by no stack: no Role grants its pods anything, so every pod still running counts.
		namespace("acme-tools"),
		pod("acme-tools", "tool", webSelector, "Running"),
		pod("acme-tools", "finished", "", "Succeeded"),
		// Given and exempt: its pods are admitted without a grant, and not counted.
		`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"acme-agents","labels":{"kiso.dev/organization":"acme","kiso.dev/placement-exempt":"true"}}}`,
		pod("acme-agents", "agent", "", "Running"),
	}
	warnSpec := xr(placementSpec(v1alpha1.IsolationStack, &v1alpha1.Placement{Mode: v1alpha1.PlacementWarn}))
	first := run(t, newRequest(t, input, warnSpec, nil), world)
	fntest.AssertNoFatal(t, first)
	// Crossplane has composed the namespaces' Roles: the policies are in force.
	observed := map[string]string{}
	for name, o := range fntest.Desired(t, first) {
		observed[name] = fntest.ToJSON(t, o)
	}
	rsp := run(t, newRequest(t, input, warnSpec, observed), world)
	fntest.AssertNoFatal(t, rsp)
	st := fntest.AsMap(t, rsp.GetDesired().GetComposite().GetResource())["status"].(map[string]any)
	if diff := cmp.Diff(float64(4), st["warnedPods"]); diff != "" {
		t.Errorf("status.warnedPods: -want, +got:\n%s", diff)
	}
	c := fntest.Condition(t, rsp, TypePlacementEnforced)
	if want := "4 pods in its namespaces select no pool of the organization, so Enforce would refuse them: acme-tools/tool, acme-web/bare, acme-web/other-stack, batch/web-selector-in-jobs"; !strings.HasSuffix(c.GetMessage(), want) {
		t.Errorf("PlacementEnforced message %q, want it to end %q", c.GetMessage(), want)
	}

	// Enforce reads no pod.
	rsp = run(t, newRequest(t, input, xr(placementSpec(v1alpha1.IsolationStack, nil)), nil), world)
	for name := range rsp.GetRequirements().GetResources() {
		if strings.HasPrefix(name, requireWarnedPodsPrefix) {
			t.Errorf("Enforce mode asks for pods: %s", name)
		}
	}
	if st := fntest.AsMap(t, rsp.GetDesired().GetComposite().GetResource())["status"].(map[string]any); st["warnedPods"] != nil {
		t.Errorf("Enforce mode reports warnedPods %v", st["warnedPods"])
	}
}

// TestWarnModeCountsABigOrganizationOnceAnHour: above warnRecountLimit pods, Warn mode counts once an hour and
// asks for no pod in between (their changes then wake nothing), says so, and carries the last count over.
func TestWarnModeCountsABigOrganizationOnceAnHour(t *testing.T) {
	world := cluster{refNodeClass, refNodePool, clusterPolicy, namespace("acme-web"), namespace("batch"), namespace("reindex")}
	for i := range warnRecountLimit + 1 {
		world = append(world, pod("acme-web", fmt.Sprintf("app-%d", i), "", "Running"))
	}
	spec := placementSpec(v1alpha1.IsolationStack, &v1alpha1.Placement{Mode: v1alpha1.PlacementWarn})
	observed := map[string]string{}
	for name, o := range fntest.Desired(t, run(t, newRequest(t, input, xr(spec), nil), world)) {
		observed[name] = fntest.ToJSON(t, o)
	}
	withStatus := func(status string) string {
		return strings.TrimSuffix(xr(spec), "}") + `,"status":` + status + `}`
	}
	asksForPods := func(rsp *fnv1.RunFunctionResponse) bool {
		for name := range rsp.GetRequirements().GetResources() {
			if strings.HasPrefix(name, requireWarnedPodsPrefix) {
				return true
			}
		}
		return false
	}

	// Counted: every pod selects no pool, and the count is due again in an hour.
	rsp := run(t, newRequest(t, input, xr(spec), observed), world)
	fntest.AssertNoFatal(t, rsp)
	st := fntest.AsMap(t, rsp.GetDesired().GetComposite().GetResource())["status"].(map[string]any)
	if st["warnedPods"] != float64(warnRecountLimit+1) || st["podsCounted"] != float64(warnRecountLimit+1) || st["warnedPodsCountedAt"] == nil {
		t.Fatalf("status after counting: warnedPods %v, podsCounted %v, countedAt %v", st["warnedPods"], st["podsCounted"], st["warnedPodsCountedAt"])
	}
	if c := fntest.Condition(t, rsp, TypePlacementEnforced); !strings.Contains(c.GetMessage(), "more than the 1000 Warn mode counts at each change: it counts again at") {
		t.Errorf("PlacementEnforced %q does not say when it counts again", c.GetMessage())
	}
	if ttl := rsp.GetMeta().GetTtl().AsDuration(); ttl > warnRecountEvery {
		t.Errorf("TTL %s, want at most %s", ttl, warnRecountEvery)
	}

	// Ten minutes later: no pod is asked for, the last count is carried over, and the TTL ends at the next count.
	tenMinutesAgo := time.Now().Add(-10 * time.Minute).UTC().Format(time.RFC3339)
	rsp = run(t, newRequest(t, input, withStatus(fmt.Sprintf(`{"warnedPods":1001,"podsCounted":1001,"warnedPodsCountedAt":%q}`, tenMinutesAgo)), observed), world)
	fntest.AssertNoFatal(t, rsp)
	if asksForPods(rsp) {
		t.Error("the pods are asked for again ten minutes after a count of more than the limit")
	}
	st = fntest.AsMap(t, rsp.GetDesired().GetComposite().GetResource())["status"].(map[string]any)
	if st["warnedPods"] != float64(1001) || st["warnedPodsCountedAt"] != tenMinutesAgo {
		t.Errorf("status while paused: warnedPods %v, countedAt %v; want the last count carried over", st["warnedPods"], st["warnedPodsCountedAt"])
	}
	if c := fntest.Condition(t, rsp, TypePlacementEnforced); !strings.Contains(c.GetMessage(), "1001 pods in its namespaces selected no pool of the organization when counted at "+tenMinutesAgo) {
		t.Errorf("PlacementEnforced %q does not carry the last count", c.GetMessage())
	}
	if ttl := rsp.GetMeta().GetTtl().AsDuration(); ttl > 50*time.Minute {
		t.Errorf("TTL %s, want at most the 50 minutes to the next count", ttl)
	}

	// An hour later, it counts again; an organization under the limit always counts.
	anHourAgo := time.Now().Add(-61 * time.Minute).UTC().Format(time.RFC3339)
	if rsp = run(t, newRequest(t, input, withStatus(fmt.Sprintf(`{"warnedPods":1001,"podsCounted":1001,"warnedPodsCountedAt":%q}`, anHourAgo)), observed), world); !asksForPods(rsp) {
		t.Error("no pod asked for an hour after the last count")
	}
	if rsp = run(t, newRequest(t, input, withStatus(fmt.Sprintf(`{"warnedPods":3,"podsCounted":1000,"warnedPodsCountedAt":%q}`, tenMinutesAgo)), observed), world); !asksForPods(rsp) {
		t.Error("no pod asked for in an organization at the limit")
	}
}

// TestWarnModeDegradesWhenThePodsOutgrowARequest: once Crossplane's last reconcile failed because the pods made
// the function's request larger than its server accepts (the Synced condition a real gRPC refusal leaves), Warn
// mode asks for no pod for an hour, keeps the last count that fitted, says why on the claim and keeps composing;
// an hour later it reads them again. Before, every retry asked for the same pods and failed the same way.
func TestWarnModeDegradesWhenThePodsOutgrowARequest(t *testing.T) {
	world := cluster{refNodeClass, refNodePool, clusterPolicy, namespace("acme-web"), namespace("batch"), namespace("reindex"),
		pod("acme-web", "bare", "", "Running")}
	spec := placementSpec(v1alpha1.IsolationStack, &v1alpha1.Placement{Mode: v1alpha1.PlacementWarn})
	observed := map[string]string{}
	for name, o := range fntest.Desired(t, run(t, newRequest(t, input, xr(spec), nil), world)) {
		observed[name] = fntest.ToJSON(t, o)
	}
	withStatus := func(status map[string]any) string {
		return strings.TrimSuffix(xr(spec), "}") + `,"status":` + fntest.ToJSON(t, status) + `}`
	}
	asksForPods := func(rsp *fnv1.RunFunctionResponse) bool {
		for name := range rsp.GetRequirements().GetResources() {
			if strings.HasPrefix(name, requireWarnedPodsPrefix) {
				return true
			}
		}
		return false
	}
	twoHoursAgo := time.Now().Add(-2 * time.Hour).UTC().Format(time.RFC3339)
	refused := fntest.RefusedStatus(t, "kiso-isolation")
	refused["warnedPods"], refused["podsCounted"], refused["warnedPodsCountedAt"] = 3, 900, twoHoursAgo

	rsp := run(t, newRequest(t, input, withStatus(refused), observed), world)
	fntest.AssertNoFatal(t, rsp)
	if asksForPods(rsp) {
		t.Error("the pods are asked for again right after they made the request too large")
	}
	if len(fntest.Desired(t, rsp)) != len(observed) {
		t.Errorf("composes %d objects, had %d: a refused read must not change what is composed", len(fntest.Desired(t, rsp)), len(observed))
	}
	st := fntest.AsMap(t, rsp.GetDesired().GetComposite().GetResource())["status"].(map[string]any)
	unreadAt, _ := st["warnedPodsUnreadAt"].(string)
	at, err := time.Parse(time.RFC3339, unreadAt)
	if err != nil || time.Since(at) > time.Minute {
		t.Fatalf("status.warnedPodsUnreadAt %q, want about now", unreadAt)
	}
	if st["warnedPods"] != float64(3) || st["podsCounted"] != float64(900) || st["warnedPodsCountedAt"] != twoHoursAgo {
		t.Errorf("status %v, want the last count that fitted carried over", st)
	}
	msg := fntest.Condition(t, rsp, TypePlacementEnforced).GetMessage()
	for _, want := range []string{"the pods of its namespaces did not fit in one request to the function at " + unreadAt,
		"not read until " + at.Add(time.Hour).Format(time.RFC3339), "the last count that fitted, at " + twoHoursAgo + ", found 3 of 900 pods"} {
		if !strings.Contains(msg, want) {
			t.Errorf("PlacementEnforced %q does not say %q", msg, want)
		}
	}
	if ttl := rsp.GetMeta().GetTtl().AsDuration(); ttl > time.Hour+time.Minute {
		t.Errorf("TTL %s: the next read would wait past the window", ttl)
	}

	// Ten minutes later, Synced again: still no pod asked for, the window kept.
	tenMinutesAgo := time.Now().Add(-10 * time.Minute).UTC().Format(time.RFC3339)
	waiting := map[string]any{"warnedPods": 3, "podsCounted": 900, "warnedPodsCountedAt": twoHoursAgo, "warnedPodsUnreadAt": tenMinutesAgo}
	rsp = run(t, newRequest(t, input, withStatus(waiting), observed), world)
	if asksForPods(rsp) {
		t.Error("the pods are asked for within the hour after a refusal")
	}
	if st := fntest.AsMap(t, rsp.GetDesired().GetComposite().GetResource())["status"].(map[string]any); st["warnedPodsUnreadAt"] != tenMinutesAgo {
		t.Errorf("status.warnedPodsUnreadAt %v, want %s kept", st["warnedPodsUnreadAt"], tenMinutesAgo)
	}

	// An hour on, it reads them again; once they are counted the window is gone from the status.
	waiting["warnedPodsUnreadAt"] = time.Now().Add(-61 * time.Minute).UTC().Format(time.RFC3339)
	if rsp = run(t, newRequest(t, input, withStatus(waiting), observed), world); !asksForPods(rsp) {
		t.Fatal("no pod asked for an hour after the refusal")
	}
	rsp = run(t, newRequest(t, input, withStatus(waiting), observed), world)
	st = fntest.AsMap(t, rsp.GetDesired().GetComposite().GetResource())["status"].(map[string]any)
	if st["warnedPodsUnreadAt"] != nil || st["warnedPods"] != float64(1) {
		t.Errorf("after counting again: warnedPodsUnreadAt %v, warnedPods %v; want no window and the new count", st["warnedPodsUnreadAt"], st["warnedPods"])
	}

	// Enforce mode reads no pod: a refusal there is not the pods', and nothing is recorded about them.
	enforced := strings.TrimSuffix(xr(placementSpec(v1alpha1.IsolationStack, nil)), "}") + `,"status":` + fntest.ToJSON(t, fntest.RefusedStatus(t, "kiso-isolation")) + `}`
	if st := fntest.AsMap(t, run(t, newRequest(t, input, enforced, observed), world).GetDesired().GetComposite().GetResource())["status"].(map[string]any); st["warnedPodsUnreadAt"] != nil {
		t.Errorf("Enforce mode records a refused pod read: %v", st["warnedPodsUnreadAt"])
	}
}
