package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/kiso-dev/kiso/functions/internal/fnstate"
	"github.com/kiso-dev/kiso/functions/internal/fntest"
	"github.com/kiso-dev/kiso/functions/internal/placement"
	"github.com/kiso-dev/kiso/functions/internal/remote"
)

// TestANodeClassChangeDriftsThePoolsNodes: the pool's node template carries the mark of its NodeClass spec, so a
// NodeClass change is a NodePool template change (Karpenter's static drift, whatever the provider), once the
// NodeClass is applied and never before; a pool composed before the mark existed keeps its template, the one its
// nodes were launched from, until its NodeClass changes. While the mark lags the rendered NodeClass, the NodePool
// stays on the revision it was observed on: the cluster's rollout must not see it on the new one before its
// template is.
func TestANodeClassChangeDriftsThePoolsNodes(t *testing.T) {
	keys := placement.NewKeys("kiso.dev")
	nodeClass := func(ami string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: fntest.JSONMap(t, `{"kind":"EC2NodeClass","metadata":{"name":"kiso-acme.web"},"spec":{"role":"r","amiSelectorTerms":[{"alias":"`+ami+`"}]}}`)}
	}
	hashOf := func(nc *unstructured.Unstructured) string {
		h, err := nodeClassHash(nc)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	before, after := nodeClass("al2023@v20261101"), nodeClass("al2023@v20261201")
	if hashOf(before) == hashOf(after) {
		t.Fatal("two AMI aliases hash the same")
	}
	nodePool := func(annotations, templateAnnotations map[string]string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: fntest.JSONMap(t, `{"kind":"NodePool","metadata":{"name":"kiso-acme.web"},"spec":{"template":{"metadata":{"labels":{"tier":"general"}}}}}`)}
		u.SetAnnotations(annotations)
		if templateAnnotations != nil {
			m := map[string]any{}
			for k, v := range templateAnnotations {
				m[k] = v
			}
			_ = unstructured.SetNestedMap(u.Object, m, "spec", "template", "metadata", "annotations")
		}
		return u
	}
	// applied is the NodeClass composed and carrying the hash of a spec where Karpenter reads it ("" for none).
	applied := func(nc *unstructured.Unstructured) appliedNodeClass {
		if nc == nil {
			return appliedNodeClass{Composed: true}
		}
		return appliedNodeClass{Composed: true, Hash: hashOf(nc)}
	}
	markedWith := func(nc *unstructured.Unstructured) *unstructured.Unstructured {
		return nodePool(nil, map[string]string{"kiso.dev/nodeclass": hashOf(nc)})
	}
	baselineOn := func(nc *unstructured.Unstructured) map[string]string {
		return map[string]string{"kiso.dev/nodeclass-baseline": hashOf(nc)}
	}
	cases := map[string]struct {
		observed  *unstructured.Unstructured
		nodeClass *unstructured.Unstructured
		applied   appliedNodeClass
		// wantMark is the mark on the node template, "" for none; wantBaseline the NodePool's baseline, "" for none.
		wantMark, wantBaseline string
		// keepsRevision is true when the NodePool stays on the revision it was observed on.
		keepsRevision bool
	}{
		"ANewPoolIsMarked":                          {nodeClass: before, wantMark: hashOf(before)},
		"AMarkedPoolFollowsItsNodeClassOnceApplied": {observed: markedWith(before), nodeClass: after, applied: applied(after), wantMark: hashOf(after)},
		"TheMarkNeverRunsAheadOfTheNodeClass":       {observed: markedWith(before), nodeClass: after, applied: applied(before), wantMark: hashOf(before), keepsRevision: true},
		"ANodeClassNotObservedThereYetKeepsTheMark": {observed: markedWith(before), nodeClass: after, applied: applied(nil), wantMark: hashOf(before), keepsRevision: true},
		"APoolFromBeforeMarksKeepsItsTemplate":      {observed: nodePool(nil, nil), nodeClass: before, applied: applied(nil), wantBaseline: hashOf(before)},
		"APoolFromBeforeMarksOnItsBaseline":         {observed: nodePool(baselineOn(before), nil), nodeClass: before, applied: applied(before), wantBaseline: hashOf(before)},
		"APoolFromBeforeMarksWhoseNodeClassChanged": {observed: nodePool(baselineOn(before), nil), nodeClass: after, applied: applied(after), wantMark: hashOf(after), wantBaseline: hashOf(before)},
		"APoolFromBeforeMarksWaitsForItsNodeClass":  {observed: nodePool(baselineOn(before), nil), nodeClass: after, applied: applied(nil), wantBaseline: hashOf(before), keepsRevision: true},
		"ARevertedPoolStaysMarked":                  {observed: nodePool(baselineOn(before), map[string]string{"kiso.dev/nodeclass": hashOf(after)}), nodeClass: before, applied: applied(before), wantMark: hashOf(before), wantBaseline: ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			// The rendered NodePool shares its template with the reference: marking it must not write there.
			reference := nodePool(nil, nil)
			rendered := &unstructured.Unstructured{Object: map[string]any{"kind": "NodePool", "metadata": map[string]any{"name": "kiso-acme.web"}, "spec": reference.DeepCopy().Object["spec"]}}
			setAnnotation(rendered, "kiso.dev/revision", "r2")
			shared := rendered.Object["spec"].(map[string]any)["template"]
			nodeClass := tc.nodeClass.DeepCopy()
			observed := tc.observed
			if observed != nil {
				observed = observed.DeepCopy()
				setAnnotation(observed, "kiso.dev/revision", "r1")
			}
			if err := markNodeClass(rendered, observed, nodeClass, tc.applied, keys); err != nil {
				t.Fatal(err)
			}
			wantRevision := "r2"
			if tc.keepsRevision {
				wantRevision = "r1"
			}
			if got := rendered.GetAnnotations()["kiso.dev/revision"]; got != wantRevision {
				t.Errorf("the NodePool says it is on revision %q, want %q", got, wantRevision)
			}
			if got := nodeClass.GetAnnotations()["kiso.dev/nodeclass"]; got != hashOf(tc.nodeClass) {
				t.Errorf("the NodeClass carries %q, want the hash of its spec %q", got, hashOf(tc.nodeClass))
			}
			mark, _, _ := unstructured.NestedString(rendered.Object, "spec", "template", "metadata", "annotations", "kiso.dev/nodeclass")
			if mark != tc.wantMark {
				t.Errorf("mark %q, want %q", mark, tc.wantMark)
			}
			if got := rendered.GetAnnotations()["kiso.dev/nodeclass-baseline"]; got != tc.wantBaseline {
				t.Errorf("baseline %q, want %q", got, tc.wantBaseline)
			}
			if diff := cmp.Diff(reference.Object["spec"].(map[string]any)["template"], shared); diff != "" {
				t.Errorf("marking wrote into the template it shares: -before, +after:\n%s", diff)
			}
			if tc.wantMark == "" {
				if diff := cmp.Diff(reference.Object["spec"], rendered.Object["spec"]); diff != "" {
					t.Errorf("an unmarked pool's spec changed (its nodes would drift): -before, +after:\n%s", diff)
				}
			}
		})
	}
}

// TestAnUpgradeDriftsNoNode: a pool rendered before NodeClass marks existed (its observed NodePool has no mark)
// is rendered with the same node template, so Karpenter's hash of it, and every node, stays.
func TestAnUpgradeDriftsNoNode(t *testing.T) {
	desired := fntest.Desired(t, run(t, newRequest(t, input, xr(stackSpec), nil), cluster{refNodeClass, refNodePool}))
	observed := map[string]string{}
	for name, o := range desired {
		if strings.HasPrefix(name, "nodepool-") {
			delete(o["spec"].(map[string]any)["template"].(map[string]any)["metadata"].(map[string]any), "annotations")
		}
		observed[name] = fntest.ToJSON(t, o)
	}
	again := fntest.Desired(t, run(t, newRequest(t, input, xr(stackSpec), observed), cluster{refNodeClass, refNodePool}))
	for name, o := range again {
		if !strings.HasPrefix(name, "nodepool-") {
			continue
		}
		if diff := cmp.Diff(fntest.JSONMap(t, observed[name])["spec"], o["spec"]); diff != "" {
			t.Errorf("%s's spec changed on upgrade: -before, +after:\n%s", name, diff)
		}
		if o["metadata"].(map[string]any)["annotations"].(map[string]any)["kiso.dev/nodeclass-baseline"] == nil {
			t.Errorf("%s: no baseline recorded", name)
		}
	}
}

// TestABaselineSurvivesAGap: a pool composed before NodeClass marks keeps its baseline while a reference is
// missing for a moment (kiso keeps the pool as observed), so a NodeClass change made across the gap still drifts
// its nodes: had the kept NodePool dropped the baseline, the next render would take the changed NodeClass as it.
func TestABaselineSurvivesAGap(t *testing.T) {
	asObserved := func(desired map[string]map[string]any) map[string]string {
		out := map[string]string{}
		for name, o := range desired {
			out[name] = fntest.ToJSON(t, o)
		}
		return out
	}
	first := fntest.Desired(t, run(t, newRequest(t, input, xr(stackSpec), nil), cluster{refNodeClass, refNodePool}))
	for name, o := range first {
		if strings.HasPrefix(name, "nodepool-") {
			delete(o["spec"].(map[string]any)["template"].(map[string]any)["metadata"].(map[string]any), "annotations")
		}
	}
	upgraded := fntest.Desired(t, run(t, newRequest(t, input, xr(stackSpec), asObserved(first)), cluster{refNodeClass, refNodePool}))
	baselines := map[string]any{}
	for name, o := range upgraded {
		if strings.HasPrefix(name, "nodepool-") {
			baselines[name] = o["metadata"].(map[string]any)["annotations"].(map[string]any)["kiso.dev/nodeclass-baseline"]
		}
	}
	if len(baselines) == 0 {
		t.Fatal("the stack spec composes no NodePool")
	}
	// The reference NodePool is missing for a moment: every pool is kept as observed.
	rsp := run(t, newRequest(t, input, xr(stackSpec), asObserved(upgraded)), cluster{refNodeClass})
	fntest.AssertNoFatal(t, rsp)
	kept := fntest.Desired(t, rsp)
	for name, want := range baselines {
		if got := kept[name]["metadata"].(map[string]any)["annotations"].(map[string]any)["kiso.dev/nodeclass-baseline"]; got != want {
			t.Errorf("%s kept through the gap with baseline %v, want %v", name, got, want)
		}
	}
	// Meanwhile the platform changed the reference NodeClass: once it is back, and the changed NodeClass applied,
	// the change drifts the nodes.
	changed := strings.Replace(refNodeClass, "al2023@latest", "al2023@v20261201", 1)
	back := fntest.Desired(t, run(t, newRequest(t, input, xr(stackSpec), asObserved(kept)), cluster{changed, refNodePool}))
	after := fntest.Desired(t, run(t, newRequest(t, input, xr(stackSpec), asObserved(back)), cluster{changed, refNodePool}))
	for name := range baselines {
		if mark, _, _ := unstructured.NestedString(after[name], "spec", "template", "metadata", "annotations", "kiso.dev/nodeclass"); mark == "" {
			t.Errorf("%s: the NodeClass changed across the gap, and its node template carries no mark (no node drifts)", name)
		}
	}
}

// TestTheMarkFollowsTheNodeClassWhereKarpenterReadsIt: what a pool's NodeClass says of itself is read where it
// runs: the NodeClass Crossplane observes, or, in a workload cluster, the one the provider last observed there
// (an Object's status.atProvider.manifest), not the manifest the Object asks for.
func TestTheMarkFollowsTheNodeClassWhereKarpenterReadsIt(t *testing.T) {
	keys := placement.NewKeys("kiso.dev")
	nodeClass := func(hash string) map[string]any {
		return map[string]any{"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass",
			"metadata": map[string]any{"name": "kiso-acme", "annotations": map[string]any{"kiso.dev/nodeclass": hash}}}
	}
	object := func(asked, there map[string]any) map[string]any {
		o := map[string]any{"apiVersion": remote.ObjectAPIVersion, "kind": remote.ObjectKind,
			"metadata": map[string]any{"name": "kiso-acme"}, "spec": map[string]any{"forProvider": map[string]any{"manifest": asked}}}
		if there != nil {
			o["status"] = map[string]any{"atProvider": map[string]any{"manifest": there}}
		}
		return o
	}
	cases := map[string]struct {
		observed map[string]any
		want     appliedNodeClass
	}{
		"NotComposedYet":                        {want: appliedNodeClass{}},
		"Observed":                              {observed: nodeClass("h1"), want: appliedNodeClass{Composed: true, Hash: "h1"}},
		"InAWorkloadClusterAsAppliedThere":      {observed: object(nodeClass("h2"), nodeClass("h1")), want: appliedNodeClass{Composed: true, Hash: "h1"}},
		"InAWorkloadClusterNotYetObservedThere": {observed: object(nodeClass("h2"), nil), want: appliedNodeClass{Composed: true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			observed := map[resource.Name]resource.ObservedComposed{}
			if tc.observed != nil {
				observed["nodeclass-kiso-acme"] = resource.ObservedComposed{Resource: &composed.Unstructured{Unstructured: unstructured.Unstructured{Object: tc.observed}}}
			}
			if got := nodeClassApplied(fnstate.ObservedOf(observed), "nodeclass-kiso-acme", keys); got != tc.want {
				t.Errorf("read %+v, want %+v", got, tc.want)
			}
		})
	}
}
