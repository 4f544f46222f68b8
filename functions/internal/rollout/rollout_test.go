package rollout

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
)

func pair(t *testing.T, nodeClassSpec, nodePoolSpec string) Revision {
	t.Helper()
	obj := func(spec string) *unstructured.Unstructured {
		var m map[string]any
		if err := json.Unmarshal([]byte(spec), &m); err != nil {
			t.Fatal(err)
		}
		return &unstructured.Unstructured{Object: map[string]any{"spec": m}}
	}
	r, err := Current(obj(nodeClassSpec), obj(nodePoolSpec), Inherited{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestARevisionIsItsSpecs(t *testing.T) {
	a := pair(t, `{"role":"r","tags":{"a":"1","b":"2"}}`, `{"template":{"metadata":{"labels":{"tier":"general"}}}}`)
	reordered := pair(t, `{"tags":{"b":"2","a":"1"},"role":"r"}`, `{"template":{"metadata":{"labels":{"tier":"general"}}}}`)
	changed := pair(t, `{"role":"r","tags":{"a":"1","b":"2"}}`, `{"template":{"metadata":{"labels":{"tier":"general-v2"}}}}`)
	swapped := pair(t, `{"template":{"metadata":{"labels":{"tier":"general"}}}}`, `{"role":"r","tags":{"a":"1","b":"2"}}`)
	if a.ID != reordered.ID {
		t.Errorf("the order of keys changed the revision: %s, %s", a.ID, reordered.ID)
	}
	if a.ID == changed.ID || a.ID == swapped.ID {
		t.Errorf("different specs share revision %s", a.ID)
	}
	reverted := pair(t, `{"role":"r","tags":{"a":"1","b":"2"}}`, `{"template":{"metadata":{"labels":{"tier":"general"}}}}`)
	if reverted.ID != a.ID {
		t.Errorf("reverting the reference returns to another revision: %s, want %s", reverted.ID, a.ID)
	}
}

func TestAReferenceReadsBack(t *testing.T) {
	r := Reference{NodeClass: schema.GroupVersionKind{Group: "karpenter.k8s.aws", Version: "v1", Kind: "EC2NodeClass"}, NodeClassRef: "default", NodePool: "general.arm"}
	got, err := ParseReference(r.String())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r, got); diff != "" {
		t.Errorf("-want, +got:\n%s", diff)
	}
	for _, bad := range []string{"", "EC2NodeClass/default", "EC2NodeClass.v1/default,NodePool/x", "EC2NodeClass.v1.k/default,Pool/x", "EC2NodeClass.v1.k/,NodePool/x"} {
		if _, err := ParseReference(bad); err == nil {
			t.Errorf("ParseReference(%q) read a reference", bad)
		}
	}
}

func TestWaveOf(t *testing.T) {
	waves := []v1alpha1.Wave{{Organizations: []string{"canary"}}, {Percent: ptr.To[int32](50)}, {Percent: ptr.To[int32](100)}}
	if got := WaveOf("canary", waves); got != 0 {
		t.Errorf("a named organization is in its wave: %d", got)
	}
	inHalf := 0
	for i := range 1000 {
		o := fmt.Sprintf("org-%d", i)
		w := WaveOf(o, waves)
		switch {
		case w != 1 && w != 2:
			t.Fatalf("%s in wave %d, want 1 or 2", o, w)
		case w == 1:
			inHalf++
		}
		if WaveOf(o, waves[:2]) != w && w == 1 {
			t.Errorf("%s left the 50%% wave when the 100%% wave was dropped", o)
		}
	}
	if inHalf < 400 || inHalf > 600 {
		t.Errorf("the 50%% wave holds %d of 1000 organizations", inHalf)
	}
	if got := WaveOf("anyone", waves[:1]); got != 1 {
		t.Errorf("an organization no wave holds moves after the last: wave %d, want 1", got)
	}
}

// FuzzASnapshotKeepsItsRevision: whatever the reference's specs, the
// cluster's snapshot of a revision renders as that same revision, so a
// waiting organization is never rendered from specs other than its own.
func FuzzASnapshotKeepsItsRevision(f *testing.F) {
	f.Add(`{"role":"r","tags":{"a":"1"}}`, `{"limits":{"cpu":1000},"weight":10}`)
	f.Add(`{"x":1e300,"y":-0.5,"z":"\u003c\u2028"}`, `{"a":[1,2,{"b":null}]}`)
	f.Fuzz(func(t *testing.T, nodeClassSpec, nodePoolSpec string) {
		var nc, np map[string]any
		if json.Unmarshal([]byte(nodeClassSpec), &nc) != nil || json.Unmarshal([]byte(nodePoolSpec), &np) != nil {
			return
		}
		r, err := Current(&unstructured.Unstructured{Object: map[string]any{"spec": nc}}, &unstructured.Unstructured{Object: map[string]any{"spec": np}}, Inherited{})
		if err != nil {
			return
		}
		s, err := r.Snapshot()
		if err != nil {
			t.Fatalf("cannot snapshot revision %s: %v", r.ID, err)
		}
		back, err := FromSnapshot(s)
		if err != nil {
			t.Fatalf("snapshot of %s does not read back: %v", r.ID, err)
		}
		if back.ID != r.ID {
			t.Fatalf("snapshot of %s reads back as %s", r.ID, back.ID)
		}
	})
}

func TestARevisionCoversWhatThePoolsInherit(t *testing.T) {
	nc := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"role": "r"}}}
	np := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"tier": "general"}}}}}}
	current := func(tags map[string]string) Revision {
		t.Helper()
		r, err := Current(nc, np, InheritedFrom(tags))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	untagged, tagged, edited := current(nil), current(map[string]string{"env": "prod"}), current(map[string]string{"env": "production"})
	reserved := current(map[string]string{"env": "prod", "kubernetes.io/cluster/prod": "owned", "karpenter.sh/nodepool": "x"})
	// What the revision was before it covered the tags: the two specs alone.
	before, err := newRevision(untagged.NodeClass, untagged.NodePool, nil)
	if err != nil {
		t.Fatal(err)
	}
	if untagged.ID != before.ID {
		t.Errorf("a cluster without tags changed revision (%s, before %s): its upgrade would start a rollout", untagged.ID, before.ID)
	}
	if tagged.ID == untagged.ID || tagged.ID == edited.ID {
		t.Errorf("an edit of the cluster's tags kept revision %s: it would reach every pool at once", tagged.ID)
	}
	if reserved.ID != tagged.ID {
		t.Errorf("tags no EC2NodeClass may carry changed the revision (%s, want %s)", reserved.ID, tagged.ID)
	}
	for name, r := range map[string]Revision{"untagged": untagged, "tagged": tagged} {
		s, err := r.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		back, err := FromSnapshot(s)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if diff := cmp.Diff(r, back, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: a snapshot read back differs (-kept +read):\n%s", name, diff)
		}
	}
	// A snapshot kept before revisions covered the tags has none, and says it does not know them.
	s, err := untagged.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	s.Inherited = ""
	back, err := FromSnapshot(s)
	if err != nil {
		t.Fatal(err)
	}
	if back.ID != untagged.ID || back.Inherited != nil {
		t.Errorf("an old snapshot reads back as %s inheriting %v, want %s inheriting nothing known", back.ID, back.Inherited, untagged.ID)
	}
}
