package main

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/kiso-dev/kiso/functions/internal/fncall"
	"github.com/kiso-dev/kiso/functions/internal/fntest"
	"github.com/kiso-dev/kiso/functions/internal/usage"
)

// stackSwitch is orgSpec switched to stack isolation.
var stackSwitch = strings.Replace(orgSpec, `"stacks":`, `"isolation":"stack","stacks":`, 1)

func TestModeSwitchKeepsTheOldPoolUntilTheNewOnesAreReady(t *testing.T) {
	old := composedOrg(t, true)
	rsp := run(t, newRequest(t, input, xr(stackSwitch), old), cluster{refNodeClass, refNodePool})
	fntest.AssertNoFatal(t, rsp)

	got := fntest.Desired(t, rsp)
	for _, name := range []string{"nodepool-kiso-acme", "nodeclass-kiso-acme"} {
		if diff := cmp.Diff(fntest.JSONMap(t, old[name]), fntest.WithStatus(t, got[name], old[name])); diff != "" {
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

// TestModeSwitchDropsTheOldPoolOnceTheNewOnesAreReady: once the new pools are Ready, the retired pool's NodePool
// goes first. Its NodeClass stays exactly as rendered while Crossplane still observes the NodePool: the
// cluster's policy refuses to delete a NodeClass a NodePool launches from, and on a refused deletion Crossplane
// gives up the XR's whole reconcile (nothing applied, no status written). Once the NodePool is gone, the
// NodeClass goes.
func TestModeSwitchDropsTheOldPoolOnceTheNewOnesAreReady(t *testing.T) {
	observed := switchedWithNewPoolsReady(t)
	rsp := run(t, newRequest(t, input, xr(stackSwitch), observed), cluster{refNodeClass, refNodePool})
	fntest.AssertNoFatal(t, rsp)
	got := fntest.Desired(t, rsp)
	if _, ok := got["nodepool-kiso-acme"]; ok {
		t.Error("retired nodepool-kiso-acme still rendered after every new pool is Ready")
	}
	if diff := cmp.Diff(fntest.JSONMap(t, observed["nodeclass-kiso-acme"]), fntest.WithStatus(t, got["nodeclass-kiso-acme"], observed["nodeclass-kiso-acme"])); diff != "" {
		t.Errorf("the retired NodeClass its observed NodePool launches from must be kept as rendered: -rendered, +kept:\n%s", diff)
	}
	assertCondition(t, rsp, TypePoolsSettled, fnv1.Status_STATUS_CONDITION_TRUE, ReasonSettled,
		"retired EC2NodeClass kiso-acme goes once NodePool kiso-acme no longer uses it")
	if ttl := rsp.GetMeta().GetTtl().AsDuration(); ttl != fncall.TTLSettling {
		t.Errorf("TTL %s while a retired NodeClass waits for its NodePool to go, want %s", ttl, fncall.TTLSettling)
	}

	delete(observed, "nodepool-kiso-acme")
	rsp = run(t, newRequest(t, input, xr(stackSwitch), observed), cluster{refNodeClass, refNodePool})
	fntest.AssertNoFatal(t, rsp)
	if _, ok := fntest.Desired(t, rsp)["nodeclass-kiso-acme"]; ok {
		t.Error("the retired NodeClass is still rendered once its NodePool is gone")
	}
	assertCondition(t, rsp, TypePoolsSettled, fnv1.Status_STATUS_CONDITION_TRUE, ReasonSettled, "")
}

// withLegacyUsages adds to what Crossplane observes the Usage a release before this one composed for each pool
// (its NodePool uses its NodeClass), and labels what they name in use, as Crossplane does.
func withLegacyUsages(t *testing.T, observed map[string]string) {
	t.Helper()
	for name := range maps.Clone(observed) {
		pool, ok := strings.CutPrefix(name, "nodeclass-")
		if !ok {
			continue
		}
		u := usage.Usage{Name: pool + "-nodepool-uses-nodeclass",
			Of: usage.Ref{APIVersion: "karpenter.k8s.aws/v1", Kind: "EC2NodeClass", Name: pool},
			By: usage.Ref{APIVersion: "karpenter.sh/v1", Kind: "NodePool", Name: pool}}
		o := u.Render(map[string]string{"app.kubernetes.io/managed-by": "kiso"}).Object
		o["status"] = readyStatus()
		observed["usage-"+pool] = fntest.ToJSON(t, o)
	}
	fntest.LabelInUse(t, observed)
}

// switchedWithNewPoolsReady is what the function observes once the switch to stack isolation has composed the
// stack pools and Karpenter reports them Ready, beside the organization's pool (Ready too).
func switchedWithNewPoolsReady(t *testing.T) map[string]string {
	t.Helper()
	observed := composedOrg(t, true)
	for name, o := range fntest.Desired(t, run(t, newRequest(t, input, xr(stackSwitch), nil), cluster{refNodeClass, refNodePool})) {
		o["status"] = readyStatus()
		observed[name] = fntest.ToJSON(t, o)
	}
	return observed
}

// flipBack is what the function observes when the spec switches back to stack isolation while the stack pools a
// release before this one retired a moment ago are still being deleted: the organization's pool (Ready), and the
// stack pools' objects, which Crossplane keeps referencing until every one of them could be deleted, each
// labelled in use while a Usage of that release names it. terminating names the objects already being deleted.
func flipBack(t *testing.T, terminating ...string) map[string]string {
	t.Helper()
	observed := composedOrg(t, true)
	for name, o := range fntest.Desired(t, run(t, newRequest(t, input, xr(stackSwitch), nil), cluster{refNodeClass, refNodePool})) {
		if _, org := observed[name]; org {
			continue
		}
		o["status"] = readyStatus()
		if slices.Contains(terminating, name) {
			o["metadata"].(map[string]any)["deletionTimestamp"] = "2026-12-01T10:00:00Z"
		}
		observed[name] = fntest.ToJSON(t, o)
	}
	withLegacyUsages(t, observed)
	for _, name := range terminating {
		if strings.HasPrefix(name, "usage-") {
			o := fntest.JSONMap(t, observed[name])
			o["metadata"].(map[string]any)["deletionTimestamp"] = "2026-12-01T10:00:00Z"
			observed[name] = fntest.ToJSON(t, o)
		}
	}
	return observed
}

// TestFlipBackWaitsUntilTheRetiredPoolIsGone: a stack pool whose retirement is under way (its Usage is being
// deleted, its NodePool drains) is not composed again until it is gone. Composing it at once would not keep it:
// a Usage that refused the NodeClass's deletion replays it once the old NodePool is gone, and the stack would be
// left with a NodePool whose NodeClass Karpenter holds in deletion. Its NodeClass, which the Usage still names,
// stays as it was. Meanwhile the organization's pool stays.
func TestFlipBackWaitsUntilTheRetiredPoolIsGone(t *testing.T) {
	observed := flipBack(t, "usage-kiso-acme.web", "nodepool-kiso-acme.web")
	rsp := run(t, newRequest(t, input, xr(stackSwitch), observed), cluster{refNodeClass, refNodePool})
	fntest.AssertNoFatal(t, rsp)
	got := fntest.Desired(t, rsp)

	if _, ok := got["nodepool-kiso-acme.web"]; ok {
		t.Error("nodepool-kiso-acme.web is composed again while the pool of that name is still being deleted")
	}
	// Every Usage of the earlier release is released: none replays a deletion it refused.
	for _, name := range []string{"usage-kiso-acme.web", "usage-kiso-acme.jobs", "usage-kiso-acme"} {
		if diff := cmp.Diff(false, fntest.Dig(got[name], "spec", "replayDeletion")); diff != "" || fntest.Dig(got[name], "spec", "by") != nil {
			t.Errorf("%s not released: %v", name, got[name])
		}
	}
	if kept, ok := got["nodeclass-kiso-acme.web"]; !ok || kept["metadata"].(map[string]any)["labels"].(map[string]any)[usage.InUseLabel] != nil {
		t.Errorf("nodeclass-kiso-acme.web, which the Usage being deleted still names, is not kept as it was: %v", kept)
	}
	for _, name := range []string{"nodepool-kiso-acme.jobs", "nodeclass-kiso-acme.jobs"} {
		if _, ok := got[name]; !ok {
			t.Errorf("%s, of a pool not being deleted, is not composed", name)
		}
	}
	for _, name := range []string{"nodepool-kiso-acme", "nodeclass-kiso-acme"} {
		if diff := cmp.Diff(withoutInUse(t, observed[name]), fntest.WithStatus(t, got[name], observed[name])); diff != "" {
			t.Errorf("the organization's %s must stay unchanged until the stack pools are back and Ready: -composed, +kept:\n%s", name, diff)
		}
	}
	assertCondition(t, rsp, TypePoolsSettled, fnv1.Status_STATUS_CONDITION_FALSE, ReasonReplacing,
		"keeping retired pools kiso-acme until new pools kiso-acme.web report Ready; pools kiso-acme.web are composed anew once their earlier objects of the same names are deleted")

	st := fntest.AsMap(t, rsp.GetDesired().GetComposite().GetResource())["status"].(map[string]any)
	for _, p := range st["pools"].([]any) {
		if p := p.(map[string]any); p["name"] == "kiso-acme.web" && p["ready"] == true {
			t.Error("status says kiso-acme.web is Ready while it is being deleted")
		}
	}
}

// TestFlipBackComposesThePoolOnceItIsGone: with the retired objects gone from what Crossplane observes, the
// pool is composed again and the organization's pool goes once it is Ready.
func TestFlipBackComposesThePoolOnceItIsGone(t *testing.T) {
	observed := flipBack(t)
	for _, name := range []string{"nodepool-kiso-acme.web", "nodeclass-kiso-acme.web", "usage-kiso-acme.web"} {
		delete(observed, name)
	}
	got := fntest.Desired(t, run(t, newRequest(t, input, xr(stackSwitch), observed), cluster{refNodeClass, refNodePool}))
	for _, name := range []string{"nodepool-kiso-acme.web", "nodeclass-kiso-acme.web", "nodepool-kiso-acme"} {
		if _, ok := got[name]; !ok {
			t.Errorf("%s is not composed once the earlier pool of that name is gone", name)
		}
	}
}

// TestObjectsDeletedByHandUnderAStandingUsageAreComposedAgain: a NodePool deleted by hand, or a NodeClass whose
// deletion got past the Usage while its NodePool lives, does not make the pool draining: giving up the live
// NodePool would drain the stack's nodes. Crossplane recreates what goes.
func TestObjectsDeletedByHandUnderAStandingUsageAreComposedAgain(t *testing.T) {
	for _, terminating := range [][]string{{"nodepool-kiso-acme.web"}, {"nodeclass-kiso-acme.web"}} {
		t.Run(terminating[0], func(t *testing.T) {
			observed := flipBack(t, terminating...)
			got := fntest.Desired(t, run(t, newRequest(t, input, xr(stackSwitch), observed), cluster{refNodeClass, refNodePool}))
			for _, name := range []string{"nodepool-kiso-acme.web", "nodeclass-kiso-acme.web"} {
				if _, ok := got[name]; !ok {
					t.Errorf("%s is not composed", name)
				}
			}
		})
	}
}

// TestAPoolIsComposedOntoANodeClassStillBeingDeleted: after the retirement's Usage is gone, Karpenter may still
// keep the NodeClass until its old nodes drain, and Crossplane no longer observes it. The pool is composed
// again (Karpenter starts no node on a NodeClass being deleted, and Crossplane composes it anew once it is
// gone), and it is not Ready meanwhile.
func TestAPoolIsComposedOntoANodeClassStillBeingDeleted(t *testing.T) {
	observed := flipBack(t, "nodeclass-kiso-acme.web")
	for _, name := range []string{"nodepool-kiso-acme.web", "usage-kiso-acme.web"} {
		delete(observed, name)
	}
	rsp := run(t, newRequest(t, input, xr(stackSwitch), observed), cluster{refNodeClass, refNodePool})
	got := fntest.Desired(t, rsp)
	for _, name := range []string{"nodepool-kiso-acme.web", "nodeclass-kiso-acme.web", "nodepool-kiso-acme", "nodeclass-kiso-acme"} {
		if _, ok := got[name]; !ok {
			t.Errorf("%s is not composed", name)
		}
	}
	assertCondition(t, rsp, TypePoolsSettled, fnv1.Status_STATUS_CONDITION_FALSE, ReasonReplacing,
		"keeping retired pools kiso-acme until new pools kiso-acme.web report Ready")
}

// TestAPoolBeingDeletedIsNotReady: when the spec asks again for a pool whose NodeClass Karpenter still holds in
// deletion (its old nodes drain), the NodeClass may still say Ready, and so may the NodePool composed anew
// beside it; the organization's pool is kept all the same, since no new node would start.
func TestAPoolBeingDeletedIsNotReady(t *testing.T) {
	observed := flipBack(t, "nodeclass-kiso-acme.web")
	rsp := run(t, newRequest(t, input, xr(stackSwitch), observed), cluster{refNodeClass, refNodePool})
	got := fntest.Desired(t, rsp)
	for _, name := range []string{"nodepool-kiso-acme", "nodeclass-kiso-acme"} {
		if _, ok := got[name]; !ok {
			t.Errorf("the organization's %s is dropped while kiso-acme.web's NodeClass is being deleted", name)
		}
	}
	assertCondition(t, rsp, TypePoolsSettled, fnv1.Status_STATUS_CONDITION_FALSE, ReasonReplacing,
		"keeping retired pools kiso-acme until new pools kiso-acme.web report Ready")
}

// TestARetiredPoolGoesInTheOrderCrossplaneCanDelete, upgraded from a release that composed Usages: once the new
// pools are Ready, the retired pool's NodePool goes, and its Usage is released. Its NodeClass, which that Usage
// names, stays exactly as rendered while Crossplane labels it in use or observes the NodePool: Crossplane's
// webhook, or the cluster's policy, would refuse to delete it, and on the refusal Crossplane gives up the XR's
// whole reconcile (nothing applied, no status written). Once both are gone, the NodeClass goes.
func TestARetiredPoolGoesInTheOrderCrossplaneCanDelete(t *testing.T) {
	observed := switchedWithNewPoolsReady(t)
	rendered := maps.Clone(observed)
	withLegacyUsages(t, observed)
	if !strings.Contains(observed["nodeclass-kiso-acme"], usage.InUseLabel) {
		t.Fatal("the fixture does not label the retired NodeClass in use; the test would prove nothing")
	}

	rsp := run(t, newRequest(t, input, xr(stackSwitch), observed), cluster{refNodeClass, refNodePool})
	fntest.AssertNoFatal(t, rsp)
	got := fntest.Desired(t, rsp)
	if _, ok := got["nodepool-kiso-acme"]; ok {
		t.Error("retired nodepool-kiso-acme still rendered after every new pool is Ready")
	}
	if by := fntest.Dig(got["usage-kiso-acme"], "spec", "by"); by != nil || got["usage-kiso-acme"] == nil {
		t.Errorf("the retired pool's Usage is not released: %v", got["usage-kiso-acme"])
	}
	if diff := cmp.Diff(fntest.JSONMap(t, rendered["nodeclass-kiso-acme"]), fntest.WithStatus(t, got["nodeclass-kiso-acme"], rendered["nodeclass-kiso-acme"])); diff != "" {
		t.Errorf("the retired NodeClass a Usage still names must be kept as rendered: -rendered, +kept:\n%s", diff)
	}
	assertCondition(t, rsp, TypePoolsSettled, fnv1.Status_STATUS_CONDITION_TRUE, ReasonSettled,
		"retired EC2NodeClass kiso-acme goes once NodePool kiso-acme no longer uses it")
	if ttl := rsp.GetMeta().GetTtl().AsDuration(); ttl != fncall.TTLSettling {
		t.Errorf("TTL %s while a retired NodeClass waits for its Usage to go, want %s", ttl, fncall.TTLSettling)
	}

	// Crossplane deleted the NodePool and the released Usage, and no longer labels the NodeClass in use.
	delete(rendered, "nodepool-kiso-acme")
	rsp = run(t, newRequest(t, input, xr(stackSwitch), rendered), cluster{refNodeClass, refNodePool})
	fntest.AssertNoFatal(t, rsp)
	if _, ok := fntest.Desired(t, rsp)["nodeclass-kiso-acme"]; ok {
		t.Error("the retired NodeClass is still rendered once no Usage names it and its NodePool is gone")
	}
}

// TestARetiredNodeClassStaysWhileItsNodePoolIsBeingDeleted: Crossplane deletes a retired NodePool in the
// foreground and stops observing it at once, while the NodePool still exists until the garbage collector (and,
// with nodes, Karpenter) lets it go. The cluster's policy refuses its NodeClass's deletion meanwhile, and a
// refused deletion fails the XR's whole reconcile, so the NodeClass stays, as rendered, until the NodePool of its
// name is gone from the cluster, not only from what Crossplane observes. A settled organization asks for nothing
// of the kind.
func TestARetiredNodeClassStaysWhileItsNodePoolIsBeingDeleted(t *testing.T) {
	observed := switchedWithNewPoolsReady(t)
	world := cluster{refNodeClass, refNodePool}
	rsp := run(t, newRequest(t, input, xr(stackSwitch), observed), world)
	fntest.AssertNoFatal(t, rsp)
	for name := range rsp.GetRequirements().GetResources() {
		if strings.HasPrefix(name, requireNodeClassUser) {
			t.Errorf("asks for %s while every NodeClass's NodePool is observed", name)
		}
	}
	if _, ok := fntest.Desired(t, rsp)["nodepool-kiso-acme"]; ok {
		t.Fatal("retired nodepool-kiso-acme still rendered after every new pool is Ready")
	}

	// Crossplane deleted the NodePool in the foreground: it no longer observes it, and it is still there.
	deleting := fntest.JSONMap(t, observed["nodepool-kiso-acme"])
	deleting["metadata"].(map[string]any)["deletionTimestamp"] = "2026-12-06T10:00:00Z"
	deleting["metadata"].(map[string]any)["finalizers"] = []any{"foregroundDeletion"}
	delete(observed, "nodepool-kiso-acme")
	rsp = run(t, newRequest(t, input, xr(stackSwitch), observed), append(world, fntest.ToJSON(t, deleting)))
	fntest.AssertNoFatal(t, rsp)
	if got := rsp.GetRequirements().GetResources()[requireNodeClassUser+"kiso-acme"]; got.GetMatchName() != "kiso-acme" || got.GetKind() != nodePoolKind {
		t.Errorf("does not ask for the NodePool of the retired NodeClass's name: %v", got)
	}
	if diff := cmp.Diff(fntest.JSONMap(t, observed["nodeclass-kiso-acme"]), fntest.WithStatus(t, fntest.Desired(t, rsp)["nodeclass-kiso-acme"], observed["nodeclass-kiso-acme"])); diff != "" {
		t.Errorf("the retired NodeClass must be kept as rendered while its NodePool is being deleted: -rendered, +kept:\n%s", diff)
	}
	assertCondition(t, rsp, TypePoolsSettled, fnv1.Status_STATUS_CONDITION_TRUE, ReasonSettled,
		"retired EC2NodeClass kiso-acme goes once NodePool kiso-acme (being deleted) no longer uses it")
	if ttl := rsp.GetMeta().GetTtl().AsDuration(); ttl != fncall.TTLSettling {
		t.Errorf("TTL %s while a retired NodeClass waits for its NodePool to go, want %s", ttl, fncall.TTLSettling)
	}

	// The NodePool is gone: the NodeClass goes.
	rsp = run(t, newRequest(t, input, xr(stackSwitch), observed), world)
	fntest.AssertNoFatal(t, rsp)
	if _, ok := fntest.Desired(t, rsp)["nodeclass-kiso-acme"]; ok {
		t.Error("the retired NodeClass is still rendered once its NodePool is gone")
	}
	assertCondition(t, rsp, TypePoolsSettled, fnv1.Status_STATUS_CONDITION_TRUE, ReasonSettled, "")
}

// TestASwitchMovesCapacityNotObjects: once the new pools are Ready, a retired NodePool that still holds nodes is
// not deleted (Karpenter would delete all its nodes at once, every pod on them evicted together): it stays, its
// node template untouched (no node drifts), launching nothing more, and the old placement stays admitted; it goes
// once Karpenter counts no node in it.
func TestASwitchMovesCapacityNotObjects(t *testing.T) {
	observed := switchedWithNewPoolsReady(t)
	// Each namespace's Role as the organization's placement made it, before the switch.
	oldRoles := map[string]string{}
	for name, o := range composedOrg(t, true) {
		if strings.HasPrefix(name, "placement-role-") {
			oldRoles[name], observed[name] = o, o
		}
	}
	holding := fntest.JSONMap(t, observed["nodepool-kiso-acme"])
	holding["status"].(map[string]any)["nodes"] = int64(2)
	observed["nodepool-kiso-acme"] = fntest.ToJSON(t, holding)

	world := cluster{refNodeClass, refNodePool, namespace("acme-web"), namespace("acme-jobs")}
	rsp := run(t, newRequest(t, input, xr(stackSwitch), observed), world)
	fntest.AssertNoFatal(t, rsp)
	got := fntest.Desired(t, rsp)
	np, ok := got["nodepool-kiso-acme"]
	if !ok {
		t.Fatal("a retired NodePool holding 2 nodes was dropped: Karpenter would delete them at once")
	}
	if diff := cmp.Diff(fntest.Dig(holding, "spec", "template"), fntest.Dig(np, "spec", "template")); diff != "" {
		t.Errorf("the retiring pool's node template changed (its nodes would drift): -observed, +kept:\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"nodes": "0"}, fntest.Dig(np, "spec", "limits")); diff != "" {
		t.Errorf("the retiring pool may still launch nodes: limits -want, +got:\n%s", diff)
	}
	// It consolidates no underutilized node (its pods have nowhere else to go) and keeps its own budgets.
	wantBudgets := append(asSlice(fntest.Dig(holding, "spec", "disruption", "budgets")), map[string]any{"nodes": "0", "reasons": []any{"Underutilized"}})
	if diff := cmp.Diff(wantBudgets, fntest.Dig(np, "spec", "disruption", "budgets")); diff != "" {
		t.Errorf("the retiring pool's disruption budgets -want, +got:\n%s", diff)
	}
	if _, ok := got["nodeclass-kiso-acme"]; !ok {
		t.Error("the retiring pool's NodeClass was dropped while its nodes run")
	}
	assertCondition(t, rsp, TypePoolsSettled, fnv1.Status_STATUS_CONDITION_FALSE, ReasonRetiring,
		"retired pools kiso-acme (2 nodes) launch no node and go once they hold none: their pods move to the new pools as their owners roll them (kubectl rollout restart), and Karpenter removes each node once empty, within the pool's disruption budget")
	// The old placement is still granted: a pod evicted from a retiring node and recreated from an old
	// template is admitted, and waits for room there or moves with its owner's next rollout.
	for name, o := range oldRoles {
		for _, r := range asSlice(fntest.JSONMap(t, o)["rules"]) {
			for _, n := range asSlice(r.(map[string]any)["resourceNames"]) {
				if !slices.ContainsFunc(asSlice(got[name]["rules"]), func(g any) bool { return slices.Contains(asSlice(g.(map[string]any)["resourceNames"]), n) }) {
					t.Errorf("%s no longer grants %v while the retiring pool runs the old placement's pods", name, n)
				}
			}
		}
	}
	if len(oldRoles) == 0 {
		t.Fatal("the organization composes no Role: nothing grants its placement")
	}

	holding["status"].(map[string]any)["nodes"] = int64(0)
	observed["nodepool-kiso-acme"] = fntest.ToJSON(t, holding)
	rsp = run(t, newRequest(t, input, xr(stackSwitch), observed), world)
	fntest.AssertNoFatal(t, rsp)
	if _, ok := fntest.Desired(t, rsp)["nodepool-kiso-acme"]; ok {
		t.Error("a retired NodePool Karpenter counts no node in is still kept")
	}
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}
