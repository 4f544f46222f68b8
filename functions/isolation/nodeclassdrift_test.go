package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kiso-dev/kiso/functions/internal/fntest"
	"github.com/kiso-dev/kiso/functions/internal/placement"
)

// TestANodeClassChangeDriftsThePoolsNodes: the pool's node template carries the mark of its NodeClass spec, so a
// NodeClass change is a NodePool template change (Karpenter's static drift, whatever the provider); a pool
// composed before the mark existed keeps its template, the one its nodes were launched from, until its NodeClass
// changes.
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
	cases := map[string]struct {
		observed  *unstructured.Unstructured
		nodeClass *unstructured.Unstructured
		// wantMark is the mark on the node template, "" for none; wantBaseline the NodePool's baseline, "" for none.
		wantMark, wantBaseline string
	}{
		"ANewPoolIsMarked":                          {nodeClass: before, wantMark: hashOf(before)},
		"AMarkedPoolFollowsItsNodeClass":            {observed: nodePool(nil, map[string]string{"kiso.dev/nodeclass": hashOf(before)}), nodeClass: after, wantMark: hashOf(after)},
		"APoolFromBeforeMarksKeepsItsTemplate":      {observed: nodePool(nil, nil), nodeClass: before, wantBaseline: hashOf(before)},
		"APoolFromBeforeMarksOnItsBaseline":         {observed: nodePool(map[string]string{"kiso.dev/nodeclass-baseline": hashOf(before)}, nil), nodeClass: before, wantBaseline: hashOf(before)},
		"APoolFromBeforeMarksWhoseNodeClassChanged": {observed: nodePool(map[string]string{"kiso.dev/nodeclass-baseline": hashOf(before)}, nil), nodeClass: after, wantMark: hashOf(after), wantBaseline: hashOf(before)},
		"ARevertedPoolStaysMarked":                  {observed: nodePool(map[string]string{"kiso.dev/nodeclass-baseline": hashOf(before)}, map[string]string{"kiso.dev/nodeclass": hashOf(after)}), nodeClass: before, wantMark: hashOf(before), wantBaseline: ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			// The rendered NodePool shares its template with the reference: marking it must not write there.
			reference := nodePool(nil, nil)
			rendered := &unstructured.Unstructured{Object: map[string]any{"kind": "NodePool", "metadata": map[string]any{"name": "kiso-acme.web"}, "spec": reference.DeepCopy().Object["spec"]}}
			shared := rendered.Object["spec"].(map[string]any)["template"]
			if err := markNodeClass(rendered, tc.observed, tc.nodeClass, keys); err != nil {
				t.Fatal(err)
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
	// Meanwhile the platform changed the reference NodeClass: once it is back, the change drifts the nodes.
	changed := strings.Replace(refNodeClass, "al2023@latest", "al2023@v20261201", 1)
	after := fntest.Desired(t, run(t, newRequest(t, input, xr(stackSpec), asObserved(kept)), cluster{changed, refNodePool}))
	for name := range baselines {
		if mark, _, _ := unstructured.NestedString(after[name], "spec", "template", "metadata", "annotations", "kiso.dev/nodeclass"); mark == "" {
			t.Errorf("%s: the NodeClass changed across the gap, and its node template carries no mark (no node drifts)", name)
		}
	}
}
