package main

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/kiso-dev/kiso/functions/internal/fntest"
	"github.com/kiso-dev/kiso/functions/internal/usage"
)

// legacyUsages are the ClusterUsages a release before this one composed for a Dedicated organization bound to a
// cluster, with one pool kiso-acme, as Crossplane observed them: composed (so a Usage with a user waits for it to
// go), Ready, and one of them recorded as having refused a deletion of its object.
func legacyUsages(t *testing.T) map[string]string {
	t.Helper()
	ref := func(apiVersion, kind, name string) usage.Ref {
		return usage.Ref{APIVersion: apiVersion, Kind: kind, Name: name}
	}
	nodeClass := ref("karpenter.k8s.aws/v1", "EC2NodeClass", "kiso-acme")
	role := ref("iam.aws.upbound.io/v1beta1", "Role", "kiso-acme-node")
	usages := map[string]usage.Usage{
		"usage-kiso-acme":                  {Name: "kiso-acme-nodepool-uses-nodeclass", Of: nodeClass, By: ref("karpenter.sh/v1", "NodePool", "kiso-acme")},
		"usage-kiso-acme-cluster":          {Name: "kiso-acme-nodeclass-uses-cluster", Of: ref("kiso.dev/v1alpha1", "XKarpenterCluster", "prod"), By: nodeClass},
		"usage-kiso-acme-node-role":        {Name: "kiso-acme-nodeclass-uses-node-role", Of: role, By: nodeClass},
		"usage-kiso-acme-instance-profile": {Name: "kiso-acme-nodeclass-uses-instance-profile", Of: ref("iam.aws.upbound.io/v1beta1", "InstanceProfile", "kiso-acme-node"), By: nodeClass},
		"node-usage-node-access-entry":     {Name: "kiso-acme-node-access-entry-used-by-role", Of: ref("eks.aws.upbound.io/v1beta1", "AccessEntry", "kiso-acme-node"), By: role},
	}
	out := make(map[string]string, len(usages))
	for name, u := range usages {
		o := u.Render(map[string]string{"app.kubernetes.io/managed-by": "kiso", "crossplane.io/composite": "acme-x1"}).Object
		o["metadata"].(map[string]any)["annotations"] = map[string]any{"crossplane.io/composition-resource-name": name}
		o["status"] = readyStatus()
		out[name] = fntest.ToJSON(t, o)
	}
	return out
}

// Releases before this one ordered deletion with ClusterUsages, which Crossplane polls. Upgraded, an organization
// first releases each (no user, replayDeletion off: deleted with a user, it would wait for the user to go and
// then replay any deletion it once refused), changing nothing else; once Crossplane observes them released it
// stops composing them, and they go at once. Nothing else is deleted or rendered differently on the way.
func TestUpgradeReleasesTheUsagesWithoutTouchingAnythingElse(t *testing.T) {
	world := cluster{refNodeClass, refNodePool, clusterXR, namespace("acme-web"), namespace("acme-jobs")}
	current := composedIn(t, dedicatedSpec, world, true)
	legacy := legacyUsages(t)
	observed := maps.Clone(current)
	maps.Copy(observed, legacy)

	rsp := run(t, newRequest(t, input, xr(dedicatedSpec), observed), world)
	fntest.AssertNoFatal(t, rsp)
	got := fntest.Desired(t, rsp)
	released := map[string]string{}
	for name, was := range legacy {
		u, ok := got[name]
		if !ok {
			t.Errorf("%s not composed on the upgrade: Crossplane would delete it with its user still there, and wait for the user", name)
			continue
		}
		want := map[string]any{"of": fntest.Dig(fntest.JSONMap(t, was), "spec", "of"), "reason": releasedReason, "replayDeletion": false}
		if diff := cmp.Diff(want, u["spec"]); diff != "" {
			t.Errorf("%s released: -want, +got:\n%s", name, diff)
		}
		delete(got, name)
		u["status"] = readyStatus()
		released[name] = fntest.ToJSON(t, u)
	}
	if diff := cmp.Diff(current, observedAfterObjects(t, got)); diff != "" {
		t.Errorf("upgraded, everything but the Usages: -as without them, +rendered:\n%s", diff)
	}
	if ttl := rsp.GetMeta().GetTtl().AsDuration(); ttl >= time.Hour {
		t.Errorf("TTL %s while Usages are being released, want a reconcile soon", ttl)
	}

	// Observed released, they are no longer composed: Crossplane deletes them, and they go at once.
	maps.Copy(observed, released)
	rsp = run(t, newRequest(t, input, xr(dedicatedSpec), observed), world)
	fntest.AssertNoFatal(t, rsp)
	after := observedAfter(t, rsp, true)
	for name := range legacy {
		if _, ok := after[name]; ok {
			t.Errorf("%s still composed once released", name)
		}
	}
	if diff := cmp.Diff(current, after); diff != "" {
		t.Errorf("Usages released and gone: -as without them, +rendered:\n%s", diff)
	}
	assertCondition(t, rsp, TypePoolsSettled, fnv1.Status_STATUS_CONDITION_TRUE, ReasonSettled, "")
}

// observedAfterObjects is observedAfter for desired objects already decoded.
func observedAfterObjects(t *testing.T, desired map[string]map[string]any) map[string]string {
	t.Helper()
	out := make(map[string]string, len(desired))
	for name, o := range desired {
		if !strings.HasPrefix(name, "placement-") {
			o["status"] = readyStatus()
		}
		out[name] = fntest.ToJSON(t, o)
	}
	return out
}

// No Usage is composed any more: the cluster's admission policies order deletion on DELETE alone, reading the
// instance profile each dedicated identity object is annotated with.
func TestAnOrganizationComposesNoUsage(t *testing.T) {
	world := cluster{refNodeClass, refNodePool, clusterXR, namespace("acme-web"), namespace("acme-jobs")}
	desired := fntest.Desired(t, run(t, newRequest(t, input, xr(everyKindSpec), composedIn(t, everyKindSpec, world, true)), world))
	profile := fntest.Dig(desired["nodeclass-kiso-acme.web"], "spec", "instanceProfile")
	if profile == nil {
		t.Fatalf("the organization's EC2NodeClass names no instance profile: %v", desired["nodeclass-kiso-acme.web"])
	}
	for name, o := range desired {
		if fntest.Dig(o, "kind") == usage.Kind {
			t.Errorf("%s: a ClusterUsage composed", name)
		}
		group, _, _ := strings.Cut(fntest.Dig(o, "apiVersion").(string), "/")
		if !strings.HasSuffix(group, ".aws.upbound.io") {
			continue
		}
		if got := fntest.Dig(o, "metadata", "annotations", "kiso.dev/instance-profile"); got != profile {
			t.Errorf("%s: annotation kiso.dev/instance-profile %v, want %v, the profile the organization's EC2NodeClasses name", name, got, profile)
		}
	}
}

// A NodeClass retired while Crossplane still observes its NodePool stays as rendered (the cluster's policy
// refuses its deletion while a NodePool launches from it, and a refused deletion fails the XR's whole
// reconcile); an identity switched from Dedicated to the cluster's node role stays as rendered while an observed
// EC2NodeClass names its instance profile. Each goes once nothing observed names it.
func TestRetiredObjectsStayWhileAnObservedObjectNamesThem(t *testing.T) {
	world := cluster{refNodeClass, refNodePool, clusterXR, namespace("acme-web"), namespace("acme-jobs")}
	dedicated := composedIn(t, dedicatedSpec, world, true)
	shared := strings.Replace(dedicatedSpec, `"nodeRole":"Dedicated",`, "", 1)

	rsp := run(t, newRequest(t, input, xr(shared), dedicated), world)
	fntest.AssertNoFatal(t, rsp)
	got := fntest.Desired(t, rsp)
	identity := slices.Sorted(func(yield func(string) bool) {
		for name := range dedicated {
			if strings.HasPrefix(name, "node-") && !yield(name) {
				return
			}
		}
	})
	if len(identity) == 0 {
		t.Fatal("the dedicated organization composed no identity")
	}
	for _, name := range identity {
		if _, ok := got[name]; !ok {
			t.Errorf("%s dropped while the observed EC2NodeClass still names its instance profile", name)
		}
	}
	if profile := fntest.Dig(got["nodeclass-kiso-acme"], "spec", "instanceProfile"); profile != nil {
		t.Errorf("the shared organization's EC2NodeClass names instance profile %v", profile)
	}

	// Applied: the EC2NodeClass names the cluster's role now, and the identity goes.
	after := observedAfter(t, rsp, true)
	for _, name := range identity {
		after[name] = dedicated[name]
	}
	rsp = run(t, newRequest(t, input, xr(shared), after), world)
	fntest.AssertNoFatal(t, rsp)
	for _, name := range identity {
		if _, ok := fntest.Desired(t, rsp)[name]; ok {
			t.Errorf("%s still composed once no EC2NodeClass names its instance profile", name)
		}
	}
}

// A released Usage Crossplane is deleting (it goes at once: no user to wait for, nothing to replay) does not make
// its pool draining: the pool's NodePool and NodeClass stay composed. Taken for a retirement under way, it would
// drop the NodePool, and Crossplane would delete a live pool.
func TestAReleasedUsageBeingDeletedDrainsNothing(t *testing.T) {
	world := cluster{refNodeClass, refNodePool, clusterXR, namespace("acme-web"), namespace("acme-jobs")}
	current := composedIn(t, dedicatedSpec, world, true)
	observed := maps.Clone(current)
	o := fntest.JSONMap(t, legacyUsages(t)["usage-kiso-acme"])
	o["spec"] = map[string]any{"of": fntest.Dig(o, "spec", "of"), "reason": releasedReason, "replayDeletion": false}
	o["metadata"].(map[string]any)["deletionTimestamp"] = "2026-12-05T10:00:00Z"
	observed["usage-kiso-acme"] = fntest.ToJSON(t, o)

	rsp := run(t, newRequest(t, input, xr(dedicatedSpec), observed), world)
	fntest.AssertNoFatal(t, rsp)
	if diff := cmp.Diff(current, observedAfter(t, rsp, true)); diff != "" {
		t.Errorf("a released Usage being deleted: -composed, +rendered:\n%s", diff)
	}
}
