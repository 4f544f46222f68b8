package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kiso-dev/kiso/monitoring"
)

// The staged-rollout scenario's names.
const (
	rolloutReference = "rollout-reference"
	// rolloutDeadline is the last wave's spec.rollout.progressDeadline: short, so that the node a tenant keeps
	// blocks the wave within the scenario; the other organizations' nodes are replaced well within it.
	rolloutDeadline = "30s"
)

// releases are the reference's releases, told apart by the reference NodeClass alone (its node registration
// delay): a NodeClass change moves no NodePool field of the reference, only the mark kiso puts on each pool's
// node template, and a wave must still wait until Karpenter has replaced its nodes.
var releases = map[string]string{"r1": "0s", "r2": "1s"}

// rolloutOrganizations are the scenario's ten organizations; ro-0 is the canary.
var rolloutOrganizations = []string{"ro-0", "ro-1", "ro-2", "ro-3", "ro-4", "ro-5", "ro-6", "ro-7", "ro-8", "ro-9"}

// halfWave says whether an organization is in the 50% wave, by the stable hash kiso documents (the first 8
// bytes of the SHA-256 of its name, mod 100, under the wave's percent).
func halfWave(organization string) bool {
	sum := sha256.Sum256([]byte(organization))
	return binary.BigEndian.Uint64(sum[:8])%100 < 50
}

// TestAReferenceChangeRollsOutWaveByWave is a platform changing the reference node template under ten
// organizations with the cluster's rollout [canary] → 50% → 100%: first only the canary's NodePool changes and
// Karpenter replaces only its node (drift), the others keep theirs; after the canary's soak, the 50% wave
// moves; a pause holds the last wave back; resumed, everyone moves. The cluster's status counts match at each step.
// With its organizations on their nodes, every series kiso's rules and dashboard read is exported by Karpenter or
// kiso's functions.
func TestAReferenceChangeRollsOutWaveByWave(t *testing.T) {
	requireNodesT(t)
	// Alone while it measures what the cluster's counts wake (Crossplane idle); then beside the others, changing the
	// shared local cluster's rollout.
	besideOthersInLane := laterInLocalClusterLaneT(t)
	references := readTestdataT(t, "rollout", "references.yaml")
	claims := readTestdataT(t, "rollout", "claims.yaml")
	env.ApplyT(t, references)
	t.Cleanup(func() { deleteAtCleanup(t, references) })
	usePlacementClusterT(t)
	patchClusterT(t, fmt.Sprintf(`{"spec":{"rollout":{"waves":[{"organizations":["ro-0"]},{"percent":50},{"percent":100}],"soak":"%s"}}}`, rolloutSoak))
	t.Cleanup(func() {
		if _, err := env.Kubectl.Run(context.Background(), nil, "patch", "xkarpentercluster", rolloutCluster, "--type=merge", "-p", `{"spec":{"rollout":null}}`); err != nil {
			t.Errorf("cannot remove the rollout: %v", err)
		}
	})

	env.ApplyT(t, claims)
	t.Cleanup(func() { deleteAtCleanup(t, claims) })
	nodes := map[string]string{}
	step(t, "EveryOrganizationRunsOnItsOwnNode", func(t *testing.T) {
		for _, o := range rolloutOrganizations {
			org := waitForOrganizationT(t, "e2e-"+o, o, o)
			// The deployment's pods carry no placement: admission adds it, once the apiserver has the cluster's
			// injection policy in force (a pod admitted before that would wait for a node forever).
			waitUntilInjectedT(t, "e2e-"+o, o)
			createDeploymentT(t, "e2e-"+o, "app", 1, "100m", nil, nil)
			pods := waitForPodsOnPoolT(t, "e2e-"+o, org.Pools[0])
			nodes[o] = pods[0].Spec.NodeName
		}
		waitForRolloutT(t, "the rollout of the first release to be done", func(r rolloutState) bool { return r.Wave == 4 && r.On[r.Revision] == 10 })
	})
	first := currentRolloutT(t).Revision
	step(t, "WhatTheClusterCountsWakesNoOrganization", func(t *testing.T) { assertCountsWakeNoOrganizationT(t) })
	besideOthersInLane()

	setReleaseT(t, "r2")
	changed := time.Now()
	var second string
	step(t, "OnlyTheCanaryMoves", func(t *testing.T) {
		r := waitForRolloutT(t, "the canary's wave to open on the new release", func(r rolloutState) bool {
			return r.Revision != first && r.Wave == 0 && r.On[r.Revision] == 1 && r.On[first] == 9
		})
		second = r.Revision
		waitForSecondReleaseT(t, "ro-0")
		assertReleasesT(t, map[string]string{"ro-1": "r1", "ro-2": "r1", "ro-3": "r1", "ro-4": "r1", "ro-5": "r1", "ro-6": "r1", "ro-7": "r1", "ro-8": "r1", "ro-9": "r1"})
	})
	var canaryDone time.Time
	step(t, "KarpenterReplacesOnlyTheCanarysNode", func(t *testing.T) {
		nodes["ro-0"] = waitForReplacedNodeT(t, "ro-0", nodes["ro-0"])
		for _, o := range rolloutOrganizations[1:] {
			assertOnNodeT(t, o, nodes[o])
		}
		// The change was to the NodeClass alone: the canary's wave is done, and starts soaking, only once
		// Karpenter has replaced its node.
		r := waitForRolloutT(t, "the canary's wave to be done and soak", func(r rolloutState) bool { return r.Wave == 0 && r.WaveDoneAt != "" })
		env.Timings.Record("rollout: NodeClass changed -> canary's node replaced, wave done", time.Since(changed))
		var err error
		if canaryDone, err = time.Parse(time.RFC3339, r.WaveDoneAt); err != nil {
			t.Fatalf("status.rollouts[].waveDoneAt %q: %v", r.WaveDoneAt, err)
		}
		n, err := env.Cluster.Typed.CoreV1().Nodes().Get(t.Context(), nodes["ro-0"], metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if launched := n.CreationTimestamp.Truncate(time.Second); canaryDone.Before(launched) {
			t.Errorf("the canary's wave was done at %s, before its replacement node %s was launched at %s", r.WaveDoneAt, n.Name, launched.Format(time.RFC3339))
		}
	})

	var waveOne []string
	for _, o := range rolloutOrganizations[1:] {
		if halfWave(o) {
			waveOne = append(waveOne, o)
		}
	}
	step(t, "AfterTheCanarysSoakThe50PercentWaveMoves", func(t *testing.T) {
		waitForRolloutT(t, "the 50% wave to open", func(r rolloutState) bool { return r.Revision == second && r.Wave == 1 })
		opened := time.Now()
		// It opened once the canary's wave had soaked: its organizations' NodeClasses moved no earlier.
		for _, o := range waveOne {
			waitForSecondReleaseT(t, o)
			moved := lastAppliedT(t, KWOKNodeClassKind, "kiso-"+o)
			if earliest := canaryDone.Add(rolloutSoak); moved.Before(earliest.Add(-time.Second)) {
				t.Errorf("organization %s moved at %s, before the canary's wave (done at %s) had soaked %s", o, moved.Format(time.RFC3339), canaryDone.Format(time.RFC3339), rolloutSoak)
			}
		}
		// Paused as soon as the wave opens: it runs to its end, and no further wave opens.
		patchClusterT(t, `{"spec":{"rollout":{"paused":true}}}`)
		for _, o := range waveOne {
			waitForSecondReleaseT(t, o)
			nodes[o] = waitForReplacedNodeT(t, o, nodes[o])
		}
		waitForRolloutT(t, "the cluster to count the 50% wave on the new release", func(r rolloutState) bool {
			return r.On[second] == int32(1+len(waveOne)) && r.On[first] == int32(9-len(waveOne))
		})
		env.Timings.Record(fmt.Sprintf("rollout: 50%% wave opened -> its %d nodes replaced", len(waveOne)), time.Since(opened))
	})
	step(t, "PausingHoldsTheLastWaveBack", func(t *testing.T) {
		// The wave's soak ends while paused: the reconcile at its end says the pause holds the next wave back.
		r := waitForRolloutT(t, "the 50% wave to be done and soaked, held by the pause", func(r rolloutState) bool {
			return r.Reason == "Paused" && strings.HasPrefix(r.HeldBy, "spec.rollout.paused")
		})
		if r.Wave != 1 {
			t.Errorf("a paused rollout opened wave %d", r.Wave)
		}
		for _, o := range rolloutOrganizations[1:] {
			if !halfWave(o) {
				assertOnNodeT(t, o, nodes[o])
				assertReleasesT(t, map[string]string{o: "r1"})
			}
		}
	})
	// Two organizations of the last wave: one whose team keeps its node (a karpenter.sh/do-not-disrupt pod, which
	// Karpenter's drift respects), and one the platform skips from the start.
	var lastWave []string
	for _, o := range rolloutOrganizations[1:] {
		if !halfWave(o) {
			lastWave = append(lastWave, o)
		}
	}
	if len(lastWave) < 3 {
		t.Fatalf("the last wave holds %v: the scenario wants a holder, a skipped organization and one that moves", lastWave)
	}
	holder, skipped := lastWave[0], lastWave[1]
	step(t, "AWaveHeldPastItsDeadlineIsBlockedNamingWhoHoldsIt", func(t *testing.T) {
		keepNodeAsTenantAdminT(t, holder, true)
		patchClusterT(t, fmt.Sprintf(`{"spec":{"rollout":{"paused":false,"progressDeadline":%q,"skip":[%q]}}}`, rolloutDeadline, skipped))
		resumed := time.Now()
		for _, o := range lastWave[2:] {
			waitForSecondReleaseT(t, o)
			nodes[o] = waitForReplacedNodeT(t, o, nodes[o])
		}
		env.Timings.Record(fmt.Sprintf("rollout: last wave opened -> %d of its nodes replaced", len(lastWave)-2), time.Since(resumed))
		waitForSecondReleaseT(t, holder)
		r := waitForRolloutT(t, "the last wave to be blocked once past its deadline", func(r rolloutState) bool { return r.Reason == "Blocked" })
		for _, want := range []string{
			"is not done within spec.rollout.progressDeadline (" + rolloutDeadline + ")",
			fmt.Sprintf("organization %s: 1 of NodePool kiso-%s's nodes are drifted and not yet replaced", holder, holder),
			"spec.rollout.skip",
		} {
			if !strings.Contains(r.Message, want) {
				t.Errorf("RolledOut=False Blocked says %q; want it to say %q", r.Message, want)
			}
		}
		// What docs/runbooks.md's KisoRolloutBlocked has the operator run says the same.
		if out := runDocBlockT(t, "docs/runbooks.md", "kubectl get xkarpentercluster <cluster>", map[string]string{"<cluster>": rolloutCluster}); strings.TrimSpace(out) != r.Message {
			t.Errorf("docs/runbooks.md's command for cluster %s prints %q; want RolledOut's message %q", rolloutCluster, out, r.Message)
		}
		assertOnNodeT(t, holder, nodes[holder])
		waitForClusterWarningT(t, "rollout blocked: ")
		waitForDriftedSeriesT(t, "kiso-"+holder, nodes[holder])
		// The series KisoRolloutBlocked fires on names the holder; the skipped organization is told apart.
		rolloutState := monitoring.RolloutOrganizationState.Name
		waitForSeriesT(t, "function-cluster", rolloutState, map[string]string{"cluster": rolloutCluster, "organization": holder, "state": monitoring.RolloutBlocked}, 1)
		waitForSeriesT(t, "function-cluster", rolloutState, map[string]string{"cluster": rolloutCluster, "organization": skipped, "state": monitoring.RolloutSkipped}, 1)
		// The skipped organization never moved, and its claim says why and until when.
		assertReleasesT(t, map[string]string{skipped: "r1"})
		assertOnNodeT(t, skipped, nodes[skipped])
		if c := waitClaimConditionT(t, "e2e-"+skipped, skipped, "ReferenceCurrent", "False", "WaitingForWave"); !strings.Contains(c.Message, "spec.rollout.skip no longer names the organization") {
			t.Errorf("the skipped organization's ReferenceCurrent says %q; want it to name spec.rollout.skip", c.Message)
		}
	})
	step(t, "SkippedTheRolloutGoesOnWithoutThem", func(t *testing.T) {
		patchClusterT(t, fmt.Sprintf(`{"spec":{"rollout":{"skip":[%q,%q]}}}`, holder, skipped))
		r := waitForRolloutT(t, "the rollout to be done without the two", func(r rolloutState) bool {
			return r.Reason == "Complete" && strings.Join(r.Skipped, ",") == strings.Join([]string{holder, skipped}, ",")
		})
		if r.On[second] != 9 || r.On[first] != 1 {
			t.Errorf("done without %s and %s: %v on each revision; want 9 on the new one (%s's pool moved before it was skipped), 1 on the old", holder, skipped, r.On, holder)
		}
		assertReleasesT(t, map[string]string{skipped: "r1"})
		assertOnNodeT(t, holder, nodes[holder])
	})
	step(t, "NoLongerSkippedTheyMoveToo", func(t *testing.T) {
		keepNodeAsTenantAdminT(t, holder, false)
		patchClusterT(t, `{"spec":{"rollout":{"skip":null}}}`)
		waitForSecondReleaseT(t, skipped)
		for _, o := range []string{holder, skipped} {
			waitForReplacedNodeT(t, o, nodes[o])
		}
		waitForRolloutT(t, "the rollout to be done", func(r rolloutState) bool {
			return r.Wave == 4 && r.On[second] == 10 && r.Reason == "Complete" && len(r.Skipped) == 0
		})
	})
	env.Timings.Record("rollout: NodeClass changed -> 10 organizations on it (a pause, a deadline, a skip)", time.Since(changed))
	step(t, "EverySeriesTheRulesAndDashboardReadIsExported", func(t *testing.T) {
		// Warn mode's count is exported for an organization in Warn mode: the platform switches the canary, whose
		// pods carry the placement admission injected, so Enforce would refuse none of them.
		canary := rolloutOrganizations[0]
		patchClaimAsPlatformT(t, "e2e-"+canary, canary, `{"spec":{"placement":{"mode":"Warn"}}}`)
		waitForSeriesT(t, "function-isolation", monitoring.OrganizationWarnedPods.Name, map[string]string{"organization": canary, "cluster": rolloutCluster}, 0)
		waitForSeriesT(t, "function-isolation", monitoring.OrganizationReady.Name, map[string]string{"organization": canary, "cluster": rolloutCluster}, 1)
		waitForSeriesT(t, "function-cluster", monitoring.RolloutOrganizationState.Name, map[string]string{"cluster": rolloutCluster, "organization": canary, "state": monitoring.RolloutDone}, 1)
		waitForEverySeriesTheRulesReadT(t)
		assertRulesJoinKarpenterT(t, canary)
	})
}

// waitUntilInjectedT waits until admission adds the organization's toleration to a pod of its namespace that
// carries none (a server-side dry run).
func waitUntilInjectedT(t *testing.T, namespace, organization string) {
	t.Helper()
	waitForAdmittedAsT(t, newPod("probe", namespace, nil), "injection into pods of "+namespace, func(stored *corev1.Pod) (bool, string) {
		for _, tol := range stored.Spec.Tolerations {
			if tol.Key == "kiso.dev/organization" && tol.Value == organization {
				return true, ""
			}
		}
		return false, fmt.Sprintf("admitted without the organization's toleration: %v", stored.Spec.Tolerations)
	})
}

// countChanges is how many times assertCountsWakeNoOrganizationT changes the cluster's count.
const countChanges = 3

// assertCountsWakeNoOrganizationT changes what the cluster's status counts, as an organization onboarded or
// moved does, and restores it (the cluster function rewrites it), countChanges times: Crossplane reconciles
// every XR that requires an object whenever that object changes, so organizations that read the cluster itself
// would each be reconciled twice per change (2×countChanges×10 calls); they read the view the cluster composes
// for them, which shows no count, and none should be. Fewer calls than organizations leaves room for a
// reconcile something else caused.
func assertCountsWakeNoOrganizationT(t *testing.T) {
	t.Helper()
	// Idle, and every organization settled: one that turned Ready less than a minute ago is still to be
	// reconciled once more (fncall.RequeueAfter), which would count here as a wake.
	waitForT(t, settleTimeout, "every rollout organization settled", func(context.Context) (bool, string, error) {
		latest, err := env.latestTTLs(isolationFunction)
		if err != nil {
			return false, "", err
		}
		settled := 0
		for xr, ttl := range latest {
			if strings.HasPrefix(xr, "ro-") && ttl == settledTTL {
				settled++
			}
		}
		return settled >= len(rolloutOrganizations), fmt.Sprintf("%d of %d settled", settled, len(rolloutOrganizations)), nil
	})
	waitForT(t, xrSettleTimeout, "Crossplane idle", crossplaneIdle)
	calls, err := env.loggedCalls(isolationFunction)
	if err != nil {
		t.Fatal(err)
	}
	from := len(calls)
	counted := currentRolloutSummaryT(t)
	for i := range countChanges {
		miscounted := fmt.Sprintf("%s (miscounted %d)", counted, i)
		if _, err := env.Kubectl.Run(t.Context(), nil, "patch", "xkarpentercluster", rolloutCluster, "--subresource=status", "--type=merge",
			"-p", fmt.Sprintf(`{"status":{"rollout":%q}}`, miscounted)); err != nil {
			t.Fatalf("cannot change the cluster's status: %v", err)
		}
		env.Cluster.WaitForT(t, xrSettleTimeout, ClusterKind, "", rolloutCluster, func(u *unstructured.Unstructured) (bool, string) {
			got, _, _ := unstructured.NestedString(u.Object, "status", "rollout")
			return got == counted, fmt.Sprintf("the cluster function to count again: status.rollout %q", got)
		})
	}
	waitForT(t, xrSettleTimeout, "Crossplane idle", crossplaneIdle)
	if calls, err = env.loggedCalls(isolationFunction); err != nil {
		t.Fatal(err)
	}
	woken := map[string]int{}
	for _, c := range calls[from:] {
		if strings.HasPrefix(c.XR, "ro-") {
			woken[c.XR]++
		}
	}
	total := 0
	for _, n := range woken {
		total += n
	}
	if total >= len(rolloutOrganizations) {
		t.Errorf("%d changes of what the cluster counts reconciled the organizations bound to it %d times: %v", 2*countChanges, total, woken)
	}
}

// currentRolloutSummaryT is the cluster's status.rollout.
func currentRolloutSummaryT(t *testing.T) string {
	t.Helper()
	u, err := env.Cluster.Get(t.Context(), ClusterKind, "", rolloutCluster)
	if err != nil {
		t.Fatal(err)
	}
	s, _, _ := unstructured.NestedString(u.Object, "status", "rollout")
	if s == "" {
		t.Fatal("the cluster's status.rollout is empty")
	}
	return s
}

func currentRolloutT(t *testing.T) rolloutState {
	t.Helper()
	u, err := env.Cluster.Get(t.Context(), ClusterKind, "", rolloutCluster)
	if err != nil {
		t.Fatal(err)
	}
	return rolloutOf(u)
}

func rolloutOf(u *unstructured.Unstructured) rolloutState {
	return rolloutOfReference(u, rolloutReference)
}

// waitForRolloutT waits until the cluster's rollout of the scenario's reference pair is as wanted.
func waitForRolloutT(t *testing.T, what string, want func(rolloutState) bool) rolloutState {
	t.Helper()
	return waitForClusterRolloutT(t, rolloutCluster, rolloutReference, what, want)
}

// setReleaseT is the platform changing the reference NodeClass.
func setReleaseT(t *testing.T, release string) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"nodeRegistrationDelay":%q}}`, releases[release])
	if _, err := env.Kubectl.Run(t.Context(), nil, "patch", "kwoknodeclass", rolloutReference, "--type=merge", "-p", patch); err != nil {
		t.Fatalf("cannot change the reference NodeClass: %v", err)
	}
}

// releaseOf is the release an organization's NodeClass is cloned from.
func releaseOf(nodeClass *unstructured.Unstructured) string {
	delay, _, _ := unstructured.NestedString(nodeClass.Object, "spec", "nodeRegistrationDelay")
	for release, d := range releases {
		if d == delay {
			return release
		}
	}
	return "delay " + delay
}

// waitForSecondReleaseT waits until an organization's NodeClass is on release r2.
func waitForSecondReleaseT(t *testing.T, organization string) {
	t.Helper()
	const release = "r2"
	env.Cluster.WaitForT(t, rolloutTimeout, KWOKNodeClassKind, "", "kiso-"+organization, func(u *unstructured.Unstructured) (bool, string) {
		got := releaseOf(u)
		return got == release, "release " + got
	})
}

// assertReleasesT checks organizations' NodeClasses are on the given releases now.
func assertReleasesT(t *testing.T, want map[string]string) {
	t.Helper()
	for o, release := range want {
		u, err := env.Cluster.Get(t.Context(), KWOKNodeClassKind, "", "kiso-"+o)
		if err != nil {
			t.Fatal(err)
		}
		if got := releaseOf(u); got != release {
			t.Errorf("organization %s's NodeClass is on release %q, want %q: it moved before its wave", o, got, release)
		}
	}
}

// waitForReplacedNodeT waits until Karpenter has replaced an organization's node with one launched from its
// NodePool's current template (drift), its pod runs there and the old node is gone; it returns the new node.
func waitForReplacedNodeT(t *testing.T, organization, old string) string {
	t.Helper()
	var node string
	waitForT(t, rolloutTimeout, "organization "+organization+"'s node "+old+" to be replaced", func(ctx context.Context) (bool, string, error) {
		pods, err := podsOf(ctx, "e2e-"+organization, "")
		if err != nil || len(pods) != 1 {
			return false, fmt.Sprintf("%d pods (%v)", len(pods), err), nil
		}
		node = pods[0].Spec.NodeName
		if node == "" || node == old {
			return false, "the pod is on node " + node, nil
		}
		if current, why, err := launchedFromCurrentTemplate(ctx, env.Cluster, "kiso-"+organization, node); err != nil || !current {
			return false, why, err
		}
		if _, err := env.Cluster.Typed.CoreV1().Nodes().Get(ctx, old, metav1.GetOptions{}); err == nil {
			return false, "the old node " + old + " is still there", nil
		}
		return true, "", nil
	})
	return node
}

// lastAppliedT is when Crossplane last changed what it applies to an object (its managed fields' time, to the
// second).
func lastAppliedT(t *testing.T, gvk schema.GroupVersionKind, name string) time.Time {
	t.Helper()
	u := env.Cluster.GetT(t, gvk, "", name)
	var last time.Time
	for _, mf := range u.GetManagedFields() {
		if strings.HasPrefix(mf.Manager, "apiextensions.crossplane.io/composed/") && mf.Time != nil && mf.Time.After(last) {
			last = mf.Time.Time
		}
	}
	if last.IsZero() {
		t.Fatalf("%s %s has no field Crossplane applies", gvk.Kind, name)
	}
	return last
}

// assertOnNodeT checks an organization's pod still runs on the node it had.
func assertOnNodeT(t *testing.T, organization, node string) {
	t.Helper()
	pods, err := podsOf(t.Context(), "e2e-"+organization, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) != 1 || pods[0].Spec.NodeName != node {
		t.Errorf("organization %s's pod moved off node %s before its wave: %d pods", organization, node, len(pods))
	}
}

// keepNodeAsTenantAdminT is the organization's team, as the admin of its namespace, marking its pod
// karpenter.sh/do-not-disrupt (keep) or removing the mark: Karpenter does not replace a drifted node such a pod runs
// on.
func keepNodeAsTenantAdminT(t *testing.T, organization string, keep bool) {
	t.Helper()
	ns, admin := "e2e-"+organization, organization+"-admin"
	if keep {
		if out := env.TryT(t, nil, "create", "rolebinding", "team-admin", "--clusterrole=admin", "--user="+admin, "-n", ns); out.ExitCode != 0 {
			t.Fatalf("cannot make %s the admin of %s: %s", admin, ns, out.Stderr)
		}
	}
	pods, err := podsOf(t.Context(), ns, "")
	if err != nil || len(pods) != 1 {
		t.Fatalf("organization %s's pods: %d (%v), want 1", organization, len(pods), err)
	}
	mark := "karpenter.sh/do-not-disrupt=true"
	if !keep {
		mark = "karpenter.sh/do-not-disrupt-"
	}
	if out := env.TryT(t, nil, "annotate", "pod", pods[0].Name, "-n", ns, mark, "--as="+admin); out.ExitCode != 0 {
		t.Fatalf("%s cannot annotate its pod %s %s: %s", admin, pods[0].Name, mark, out.Stderr)
	}
}

// waitForClusterWarningT waits for a Warning event on the scenario's XKarpenterCluster whose message contains text.
func waitForClusterWarningT(t *testing.T, text string) {
	t.Helper()
	waitForT(t, xrSettleTimeout, "a Warning event on XKarpenterCluster "+rolloutCluster+" saying "+text, func(ctx context.Context) (bool, string, error) {
		list, err := env.Cluster.Typed.CoreV1().Events("").List(ctx, metav1.ListOptions{
			FieldSelector: "involvedObject.kind=XKarpenterCluster,involvedObject.name=" + rolloutCluster + ",type=Warning",
		})
		if err != nil {
			return false, "", err
		}
		var seen []string
		for _, e := range list.Items {
			if strings.Contains(e.Message, text) {
				return true, "", nil
			}
			seen = append(seen, e.Message)
		}
		return false, fmt.Sprintf("warnings: %q", seen), nil
	})
}

// waitForDriftedSeriesT waits until Karpenter's metrics carry the series driftedNodeAlert reads, at 1, for the
// NodeClaim of a pool's node: what the alert fires on once it has lasted its 2 hours.
func waitForDriftedSeriesT(t *testing.T, pool, node string) {
	t.Helper()
	waitForT(t, xrSettleTimeout, driftedNodeClaimsSeries+" of node "+node+"'s NodeClaim", func(ctx context.Context) (bool, string, error) {
		claims, err := env.Cluster.List(ctx, NodeClaimKind, "", nodePoolLabel+"="+pool)
		if err != nil {
			return false, "", err
		}
		claim := ""
		for _, c := range claims {
			if name, _, _ := unstructured.NestedString(c.Object, "status", "nodeName"); name == node {
				claim = c.GetName()
			}
		}
		if claim == "" {
			return false, "no NodeClaim of " + pool + " names node " + node, nil
		}
		families, err := env.scrapeMetrics(ctx, "karpenter")
		if err != nil {
			return false, "", err
		}
		want := map[string]string{"name": claim, "type": "Drifted", "status": "True"}
		for _, m := range families["operator_nodeclaim_status_condition_count"].GetMetric() {
			if labelsMatch(m, want) && m.GetGauge().GetValue() == 1 {
				return true, "", nil
			}
		}
		return false, fmt.Sprintf("Karpenter exports no %s for NodeClaim %s", driftedNodeClaimsSeries, claim), nil
	})
}
