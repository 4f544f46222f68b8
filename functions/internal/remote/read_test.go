package remote

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/kiso-dev/kiso/functions/internal/ownership"
)

// TestReadsWatchWhatOutlivesACall: a read of an object kiso keeps reading (a reference, the cluster's policy) is
// watched, so its edit reaches the XR at once; a name check, which lasts until kiso composes the object and
// often finds that very object being created, is not; a collection has no watch to ask for.
func TestReadsWatchWhatOutlivesACall(t *testing.T) {
	nodePool := schema.GroupVersionKind{Group: "karpenter.sh", Version: "v1", Kind: "NodePool"}
	r := &Reader{ProviderConfig: "eu", Owner: "acme-x7k2p"}
	rs := map[string]*fnv1.ResourceSelector{
		"reference-nodepool": ownership.ByName(nodePool, "", "platform"),
		"namespaces": {ApiVersion: "v1", Kind: "Namespace",
			Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: map[string]string{"kiso.dev/organization": "acme"}}}},
	}
	ownership.Require(rs, []ownership.Object{{Resource: "nodepool", GVK: nodePool, Name: "kiso-acme"}}, ownership.Composed{})
	reads := r.Requirements(rs)
	watched := map[string]bool{}
	for name, o := range reads {
		w, found, _ := unstructured.NestedBool(o.Object, "spec", "watch")
		watched[string(name)] = w && found
	}
	want := map[string]bool{readPrefix + "reference-nodepool": true, readPrefix + "namespaces": false}
	for key := range rs {
		if ownership.IsNameCheck(key) {
			t.Fatalf("name check %s was left to Crossplane; it reads a workload cluster's kind", key)
		}
	}
	nameChecks := 0
	for name, w := range watched {
		if expected, ok := want[name]; ok {
			if w != expected {
				t.Errorf("read %s watched %t, want %t", name, w, expected)
			}
			continue
		}
		nameChecks++
		if w {
			t.Errorf("name check %s is watched", name)
		}
	}
	if nameChecks != 1 || len(watched) != 3 {
		t.Errorf("reads %v, want the reference, the namespaces and one name check", watched)
	}
}
