package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/fntest"
	"github.com/kiso-dev/kiso/functions/internal/rollout"
)

// revisionFrom is the revision of the reference NodeClass with a reference NodePool for clusterXR, whose pools
// inherit its tags.
func revisionFrom(t *testing.T, nodePool string) rollout.Revision {
	t.Helper()
	return revisionInheriting(t, nodePool, clusterXR)
}

// revisionInheriting is the revision of the reference NodeClass with a reference NodePool for a cluster, whose
// pools inherit its tags.
func revisionInheriting(t *testing.T, nodePool, cluster string) rollout.Revision {
	t.Helper()
	var c struct {
		Spec v1alpha1.XKarpenterClusterSpec `json:"spec"`
	}
	if err := json.Unmarshal([]byte(cluster), &c); err != nil {
		t.Fatal(err)
	}
	r, err := rollout.Current(object(t, refNodeClass), object(t, nodePool), rollout.InheritedFrom(c.Spec.Tags))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func object(t *testing.T, j string) *unstructured.Unstructured {
	t.Helper()
	return &unstructured.Unstructured{Object: fntest.JSONMap(t, j)}
}

// The platform's second revision of the reference NodePool: its nodes get
// another label, which Karpenter sees as drift of every node.
var refNodePoolV2 = strings.Replace(refNodePool, `"tier":"general"`, `"tier":"general-v2"`, 1)

// stagedCluster is clusterXR rolling the reference out in waves, canary
// first, then everyone else, with its status as the cluster function leaves
// it: revision rolling, the open wave, and the snapshots it keeps.
func stagedCluster(t *testing.T, rolling string, openWave int, snapshots ...rollout.Revision) string {
	t.Helper()
	return stagedClusterReleased(t, rolling, openWave, "", snapshots...)
}

// stagedClusterReleased is stagedCluster that last released revision released.
func stagedClusterReleased(t *testing.T, rolling string, openWave int, released string, snapshots ...rollout.Revision) string {
	t.Helper()
	ref := "EC2NodeClass.v1.karpenter.k8s.aws/default,NodePool/default"
	st := v1alpha1.ReferenceRollout{Reference: ref, Revision: rolling, Wave: int32(openWave), Released: released}
	for _, r := range snapshots {
		s, err := r.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		st.Snapshots = append(st.Snapshots, s)
	}
	b, err := json.Marshal([]v1alpha1.ReferenceRollout{st})
	if err != nil {
		t.Fatal(err)
	}
	c := strings.Replace(clusterXR, `"tags":{"environment"`, `"rollout":{"waves":[{"organizations":["canary"]},{"percent":100}]},"tags":{"environment"`, 1)
	return strings.Replace(c, `"status":{`, fmt.Sprintf(`"status":{"rollouts":%s,`, b), 1)
}

// boundSpec is acme in organization isolation, bound to cluster prod, with
// a limit of its own.
var boundSpec = strings.Replace(orgSpec, `"nodeClassRef"`, `"clusterRef":{"name":"prod"},"pool":{"limits":{"cpu":"64"}},"nodeClassRef"`, 1)

// onFirstRevision renders acme from the first revision of the reference and
// returns what it composed, as Crossplane then observes it.
func onFirstRevision(t *testing.T, spec string) map[string]string {
	t.Helper()
	v1 := revisionFrom(t, refNodePool)
	rsp := run(t, newRequest(t, input, xr(spec), nil), cluster{refNodeClass, refNodePool, stagedCluster(t, v1.ID, 2, v1)})
	fntest.AssertNoFatal(t, rsp)
	observed := map[string]string{}
	for name, o := range fntest.Desired(t, rsp) {
		observed[name] = fntest.ToJSON(t, o)
	}
	return observed
}

func tier(t *testing.T, np map[string]any) any {
	t.Helper()
	return fntest.Dig(np, "spec", "template", "metadata", "labels", "tier")
}

func TestAnOrganizationWaitsForItsWave(t *testing.T) {
	v1, v2 := revisionFrom(t, refNodePool), revisionFrom(t, refNodePoolV2)
	observed := onFirstRevision(t, boundSpec)
	if got := fntest.JSONMap(t, observed["nodepool-kiso-acme"])["metadata"].(map[string]any)["annotations"].(map[string]any)["kiso.dev/revision"]; got != v1.ID {
		t.Fatalf("the first render is on revision %v, want %s", got, v1.ID)
	}

	cases := map[string]struct {
		reason      string
		cluster     string
		spec        string
		wantTier    string
		wantRev     string
		wantCurrent fnv1.Status
	}{
		"WaitsWhileOnlyTheCanaryWaveIsOpen": {
			reason:  "acme is in the second wave: while the canary's is open, its pool stays on the revision it has, from the cluster's snapshot.",
			cluster: stagedCluster(t, v2.ID, 0, v1, v2), spec: boundSpec,
			wantTier: "general", wantRev: v1.ID, wantCurrent: fnv1.Status_STATUS_CONDITION_FALSE,
		},
		"WaitsWhileTheClusterHasNotSeenTheNewRevision": {
			reason:  "The cluster still rolls the first revision: nothing of the second reaches acme before the cluster opens a wave for it.",
			cluster: stagedCluster(t, v1.ID, 2, v1), spec: boundSpec,
			wantTier: "general", wantRev: v1.ID, wantCurrent: fnv1.Status_STATUS_CONDITION_FALSE,
		},
		"MovesOnceItsWaveOpens": {
			reason:  "The second wave is open: acme moves to the current revision.",
			cluster: stagedCluster(t, v2.ID, 1, v1, v2), spec: boundSpec,
			wantTier: "general-v2", wantRev: v2.ID, wantCurrent: fnv1.Status_STATUS_CONDITION_TRUE,
		},
		"MovesAtOnceWithoutStagedRollouts": {
			reason:  "A cluster without spec.rollout stages nothing: a reference change reaches every organization at once.",
			cluster: clusterXR, spec: boundSpec,
			wantTier: "general-v2", wantRev: v2.ID, wantCurrent: fnv1.Status_STATUS_CONDITION_TRUE,
		},
		"MovesAtOnceAsACanary": {
			reason:  "The canary wave is open and names the organization.",
			cluster: stagedCluster(t, v2.ID, 0, v1, v2), spec: strings.Replace(boundSpec, `"organization":"acme"`, `"organization":"canary"`, 1),
			wantTier: "general-v2", wantRev: v2.ID, wantCurrent: fnv1.Status_STATUS_CONDITION_TRUE,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obs := observed
			if strings.Contains(tc.spec, `"canary"`) {
				obs = onFirstRevision(t, tc.spec)
			}
			rsp := run(t, newRequest(t, input, xr(tc.spec), obs), cluster{refNodeClass, refNodePoolV2, tc.cluster})
			fntest.AssertNoFatal(t, rsp)
			pool := "kiso-" + strings.Split(strings.Split(tc.spec, `"organization":"`)[1], `"`)[0]
			np := fntest.Desired(t, rsp)["nodepool-"+pool]
			if got := tier(t, np); got != tc.wantTier {
				t.Errorf("%s\nnode label tier = %v, want %s", tc.reason, got, tc.wantTier)
			}
			if got := fntest.Dig(np, "metadata", "annotations", "kiso.dev/revision"); got != tc.wantRev {
				t.Errorf("%s\nrevision annotation = %v, want %s", tc.reason, got, tc.wantRev)
			}
			// The organization's own settings apply whatever revision it is on.
			if got := fntest.Dig(np, "spec", "limits", "cpu"); got != "64" {
				t.Errorf("%s\nspec.limits.cpu = %v, want the organization's 64", tc.reason, got)
			}
			st := fntest.AsMap(t, rsp.GetDesired().GetComposite().GetResource())["status"].(map[string]any)
			if got := st["pools"].([]any)[0].(map[string]any)["reference"]; got != tc.wantRev {
				t.Errorf("%s\nstatus.pools[0].reference = %v, want %s", tc.reason, got, tc.wantRev)
			}
			if c := fntest.Condition(t, rsp, TypeReferenceCurrent); c.GetStatus() != tc.wantCurrent {
				t.Errorf("%s\nReferenceCurrent = %s (%s), want %s", tc.reason, c.GetStatus(), c.GetMessage(), tc.wantCurrent)
			}
		})
	}
}

func TestAWaitingPoolWithoutASnapshotIsKeptAsItIs(t *testing.T) {
	v2 := revisionFrom(t, refNodePoolV2)
	observed := onFirstRevision(t, boundSpec)
	// The cluster's status lost the first revision's snapshot.
	rsp := run(t, newRequest(t, input, xr(boundSpec), observed), cluster{refNodeClass, refNodePoolV2, stagedCluster(t, v2.ID, 0, v2)})
	fntest.AssertNoFatal(t, rsp)
	got := fntest.Desired(t, rsp)
	for _, name := range []string{"nodepool-kiso-acme", "nodeclass-kiso-acme"} {
		want := fntest.JSONMap(t, observed[name])
		if diff := cmp.Diff(want["spec"], got[name]["spec"]); diff != "" {
			t.Errorf("%s changed although its revision is known to nobody: -observed, +desired:\n%s", name, diff)
		}
		if diff := cmp.Diff(want["metadata"].(map[string]any)["annotations"], got[name]["metadata"].(map[string]any)["annotations"]); diff != "" {
			t.Errorf("%s annotations: -observed, +desired:\n%s", name, diff)
		}
	}
	c := fntest.Condition(t, rsp, TypeReferenceCurrent)
	if c.GetReason() != ReasonWaitingForWave || !strings.Contains(c.GetMessage(), "kept exactly as they are") {
		t.Errorf("ReferenceCurrent: %s %q, want WaitingForWave saying the pool is kept", c.GetReason(), c.GetMessage())
	}
}

// TestANewPoolDoesNotSkipTheQueue: a pool composed for the first time while its organization waits for its wave
// (a new stack, a new organization) starts on the revision the organization's other pools are on, else on the
// last one the cluster released, and never on the one still held back; with neither known it waits for its wave.
func TestANewPoolDoesNotSkipTheQueue(t *testing.T) {
	v1, v2 := revisionFrom(t, refNodePool), revisionFrom(t, refNodePoolV2)
	staged := strings.Replace(boundSpec, `"organization":"acme"`, `"organization":"acme","isolation":"stack"`, 1)
	observed := onFirstRevision(t, staged)
	// Stack batch is new while acme waits: it starts where acme's other pools are.
	grown := strings.Replace(staged, `{"name":"jobs"}`, `{"name":"jobs"},{"name":"batch"}`, 1)
	rsp := run(t, newRequest(t, input, xr(grown), observed), cluster{refNodeClass, refNodePoolV2, stagedCluster(t, v2.ID, 0, v1, v2)})
	fntest.AssertNoFatal(t, rsp)
	got := fntest.Desired(t, rsp)
	for pool, want := range map[string]string{"kiso-acme.web": "general", "kiso-acme.jobs": "general", "kiso-acme.batch": "general"} {
		if g := tier(t, got["nodepool-"+pool]); g != want {
			t.Errorf("pool %s: node label tier = %v, want %s", pool, g, want)
		}
	}

	newcomer := strings.Replace(boundSpec, `"organization":"acme"`, `"organization":"newco"`, 1)
	cases := map[string]struct {
		cluster  string
		wantTier any
		wantHeld bool
	}{
		"AWaitingNewOrganizationStartsOnTheReleasedRevision": {cluster: stagedClusterReleased(t, v2.ID, 0, v1.ID, v2, v1), wantTier: "general"},
		"ANewOrganizationWaitsWhenNothingWasReleased":        {cluster: stagedCluster(t, v2.ID, 0, v2), wantHeld: true},
		"ANewOrganizationAfterTheRolloutStartsOnTheCurrent":  {cluster: stagedClusterReleased(t, v2.ID, 3, v2.ID, v2), wantTier: "general-v2"},
		"ANewOrganizationBeforeTheClusterSeesTheNewRevision": {cluster: stagedClusterReleased(t, v1.ID, 3, v1.ID, v1), wantTier: "general"},
		"ANewOrganizationWhoseWaveIsOpenStartsOnTheCurrent":  {cluster: stagedClusterReleased(t, v2.ID, 1, v1.ID, v2, v1), wantTier: "general-v2"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := run(t, newRequest(t, input, xr(newcomer), nil), cluster{refNodeClass, refNodePoolV2, tc.cluster})
			fntest.AssertNoFatal(t, rsp)
			np, composed := fntest.Desired(t, rsp)["nodepool-kiso-newco"]
			if tc.wantHeld {
				if composed {
					t.Errorf("the pool is composed (tier %v) though no revision was released", tier(t, np))
				}
				if c := fntest.Condition(t, rsp, TypeReferenceCurrent); c.GetReason() != ReasonWaitingForWave || !strings.Contains(c.GetMessage(), "pools kiso-newco are new and are composed once wave 2 of 3 opens") {
					t.Errorf("ReferenceCurrent %s %q, want WaitingForWave saying the new pool waits", c.GetReason(), c.GetMessage())
				}
				return
			}
			if g := tier(t, np); g != tc.wantTier {
				t.Errorf("node label tier = %v, want %v", g, tc.wantTier)
			}
		})
	}
}

// TestASkippedOrganizationStaysWhereItIs: an organization the cluster's spec.rollout.skip names stays on the
// revision it is on even once its wave opens, and the claim says why and until when.
func TestASkippedOrganizationStaysWhereItIs(t *testing.T) {
	v1, v2 := revisionFrom(t, refNodePool), revisionFrom(t, refNodePoolV2)
	observed := onFirstRevision(t, boundSpec)
	skipping := strings.Replace(stagedCluster(t, v2.ID, 1, v1, v2), `"rollout":{`, `"rollout":{"skip":["acme"],`, 1)
	rsp := run(t, newRequest(t, input, xr(boundSpec), observed), cluster{refNodeClass, refNodePoolV2, skipping})
	fntest.AssertNoFatal(t, rsp)
	if got := tier(t, fntest.Desired(t, rsp)["nodepool-kiso-acme"]); got != "general" {
		t.Errorf("node label tier = %v: a skipped organization moved with its wave", got)
	}
	c := fntest.Condition(t, rsp, TypeReferenceCurrent)
	if c.GetReason() != ReasonWaitingForWave || !strings.Contains(c.GetMessage(), "until the cluster's spec.rollout.skip no longer names the organization") {
		t.Errorf("ReferenceCurrent %s %q, want WaitingForWave saying it is skipped", c.GetReason(), c.GetMessage())
	}
	// Removed from the list, it moves with its (open) wave.
	rsp = run(t, newRequest(t, input, xr(boundSpec), observed), cluster{refNodeClass, refNodePoolV2, stagedCluster(t, v2.ID, 1, v1, v2)})
	if got := tier(t, fntest.Desired(t, rsp)["nodepool-kiso-acme"]); got != "general-v2" {
		t.Errorf("node label tier = %v once no longer skipped, want general-v2", got)
	}
}

// editedTags is a cluster whose platform changed the tags every organization's NodeClass inherits.
func editedTags(cluster string) string {
	return strings.Replace(cluster, `"environment":"prod"`, `"environment":"production"`, 1)
}

func TestAClusterTagEditMovesInWaves(t *testing.T) {
	v1 := revisionFrom(t, refNodePool)
	edited := revisionInheriting(t, refNodePool, editedTags(clusterXR))
	if edited.ID == v1.ID {
		t.Fatalf("an edit of the cluster's tags is revision %s, the one before it: it would reach every organization at once", v1.ID)
	}
	observed := onFirstRevision(t, boundSpec)
	before := fntest.JSONMap(t, observed["nodepool-kiso-acme"])
	cases := map[string]struct {
		reason  string
		cluster string
		wantEnv string
		wantRev string
	}{
		"WaitsWhileOnlyTheCanaryWaveIsOpen": {
			reason:  "acme is in the second wave: its NodeClass keeps the tags of its revision, from the cluster's snapshot, and its nodes are not replaced.",
			cluster: editedTags(stagedCluster(t, edited.ID, 0, v1, edited)), wantEnv: "prod", wantRev: v1.ID,
		},
		"MovesOnceItsWaveOpens": {
			reason:  "The second wave is open: acme's NodeClass takes the cluster's new tags.",
			cluster: editedTags(stagedCluster(t, edited.ID, 1, v1, edited)), wantEnv: "production", wantRev: edited.ID,
		},
		"MovesAtOnceWithoutStagedRollouts": {
			reason:  "A cluster without spec.rollout stages nothing: its tags reach every organization at once, as a reference change does.",
			cluster: editedTags(clusterXR), wantEnv: "production", wantRev: edited.ID,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := run(t, newRequest(t, input, xr(boundSpec), observed), cluster{refNodeClass, refNodePool, tc.cluster})
			fntest.AssertNoFatal(t, rsp)
			// The reconcile after: the NodeClass as it rendered is applied, and the pool's mark may follow it.
			applied := map[string]string{}
			for name, o := range fntest.Desired(t, rsp) {
				applied[name] = fntest.ToJSON(t, o)
			}
			rsp = run(t, newRequest(t, input, xr(boundSpec), applied), cluster{refNodeClass, refNodePool, tc.cluster})
			fntest.AssertNoFatal(t, rsp)
			desired := fntest.Desired(t, rsp)
			nc, np := desired["nodeclass-kiso-acme"], desired["nodepool-kiso-acme"]
			if got := fntest.Dig(nc, "spec", "tags", "environment"); got != tc.wantEnv {
				t.Errorf("%s\nNodeClass tag environment = %v, want %s", tc.reason, got, tc.wantEnv)
			}
			if got := fntest.Dig(np, "metadata", "annotations", "kiso.dev/revision"); got != tc.wantRev {
				t.Errorf("%s\nrevision annotation = %v, want %s", tc.reason, got, tc.wantRev)
			}
			sameTemplate := cmp.Equal(fntest.Dig(before, "spec", "template"), fntest.Dig(np, "spec", "template"))
			if waits := tc.wantRev == v1.ID; sameTemplate != waits {
				t.Errorf("%s\nnode template unchanged = %t, want %t (the NodeClass mark moves with the tags, and only then)", tc.reason, sameTemplate, waits)
			}
		})
	}
}

// A cluster's snapshot kept before revisions covered its tags holds none: a pool waiting on it keeps the tags the
// cluster has, as it was rendered with them, and its revision (the one it had, before tags counted) still verifies.
func TestAnUpgradeKeepsAWaitingPoolsTags(t *testing.T) {
	v1 := revisionFrom(t, refNodePool)
	untagged := revisionInheriting(t, refNodePool, "{}")
	kept, err := untagged.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	kept.Inherited = ""
	observed := onFirstRevision(t, boundSpec)
	for name, o := range observed {
		observed[name] = strings.ReplaceAll(o, v1.ID, untagged.ID)
	}
	before := fntest.JSONMap(t, observed["nodeclass-kiso-acme"])

	ref := "EC2NodeClass.v1.karpenter.k8s.aws/default,NodePool/default"
	st := []v1alpha1.ReferenceRollout{{Reference: ref, Revision: v1.ID, Wave: 0, Snapshots: []v1alpha1.ReferenceSnapshot{kept}}}
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	c := strings.Replace(clusterXR, `"tags":{"environment"`, `"rollout":{"waves":[{"organizations":["canary"]},{"percent":100}]},"tags":{"environment"`, 1)
	c = strings.Replace(c, `"status":{`, fmt.Sprintf(`"status":{"rollouts":%s,`, b), 1)

	rsp := run(t, newRequest(t, input, xr(boundSpec), observed), cluster{refNodeClass, refNodePool, c})
	fntest.AssertNoFatal(t, rsp)
	nc := fntest.Desired(t, rsp)["nodeclass-kiso-acme"]
	if got := fntest.Dig(nc, "metadata", "annotations", "kiso.dev/revision"); got != untagged.ID {
		t.Errorf("revision annotation = %v, want %s: acme waits for its wave on the revision it had", got, untagged.ID)
	}
	if diff := cmp.Diff(before["spec"], nc["spec"]); diff != "" {
		t.Errorf("a waiting pool's NodeClass changed on upgrade (-before +after):\n%s", diff)
	}
}
