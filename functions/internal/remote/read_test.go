package remote

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"

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

// TestACollectionAnswersWithoutMembersItCouldNotDelete: Crossplane's RBAC manager grants a provider no delete on
// its own kinds, so unless the install grants it, provider-kubernetes keeps the member of a NodeClaim Karpenter
// replaced, observing "does not exist", and says its collection is not synced. The read still answers with the
// objects there now: a replaced node must not hold a rollout wave for ever. A collection the provider could not
// list stays unanswered.
func TestACollectionAnswersWithoutMembersItCouldNotDelete(t *testing.T) {
	r := &Reader{ProviderConfig: "eu", Owner: "eu-cluster"}
	rs := map[string]*fnv1.ResourceSelector{"nodeclaims": {ApiVersion: "karpenter.sh/v1", Kind: "NodeClaim",
		Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: map[string]string{"kiso.dev/organization": "acme"}}}}}
	reads := r.Requirements(rs)
	collection := reads[readPrefix+"nodeclaims"]
	if collection == nil {
		t.Fatalf("no collection read for the NodeClaims: %v", reads)
	}
	synced := func(status, message string) map[string]any {
		return map[string]any{"type": "Synced", "status": status, "reason": "ReconcileError", "message": message}
	}
	readyTrue := map[string]any{"type": "Ready", "status": "True", "reason": "Available"}
	member := func(name string, labels map[string]any, conditions ...any) *fnv1.Resource {
		s, err := structpb.NewStruct(map[string]any{
			"apiVersion": "kubernetes.crossplane.io/v1alpha2", "kind": "Object",
			"metadata": map[string]any{"name": name},
			"status": map[string]any{
				"conditions": append([]any{readyTrue}, conditions...),
				"atProvider": map[string]any{"manifest": map[string]any{"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
					"metadata": map[string]any{"name": name, "labels": labels}}},
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		return &fnv1.Resource{Resource: s}
	}
	acme := map[string]any{"kiso.dev/organization": "acme"}
	members := &fnv1.Resources{Items: []*fnv1.Resource{
		member("kiso-acme-new", acme, synced("True", "")),
		member("kiso-acme-replaced", acme, synced("False", "observe failed: "+notExist)),
		member("kiso-other", map[string]any{"kiso.dev/organization": "other"}, synced("True", "")),
	}}
	for _, tc := range []struct {
		what, collectionSynced string
		want                   []string
	}{
		{what: "synced", collectionSynced: "", want: []string{"kiso-acme-new"}},
		{what: "not allowed to delete a member", collectionSynced: `cannot delete observed object {...}: objects.kubernetes.crossplane.io "kiso-read-1" is forbidden`, want: []string{"kiso-acme-new"}},
		{what: "not able to list", collectionSynced: "error fetching objects for GVK karpenter.sh/v1, Kind=NodeClaim: connection refused"},
	} {
		observed := collection.DeepCopy()
		status := "True"
		if tc.collectionSynced != "" {
			status = "False"
		}
		observed.Object["status"] = map[string]any{"conditions": []any{readyTrue, synced(status, tc.collectionSynced)}}
		req := &fnv1.RunFunctionRequest{RequiredResources: map[string]*fnv1.Resources{membersPrefix + "nodeclaims": members}}
		_, unanswered, err := answer(req, map[resource.Name]resource.ObservedComposed{readPrefix + "nodeclaims": {Resource: observed}})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		if answer, ok := req.GetRequiredResources()["nodeclaims"]; ok {
			got = []string{}
			for _, item := range answer.GetItems() {
				got = append(got, item.GetResource().AsMap()["metadata"].(map[string]any)["name"].(string))
			}
		}
		if !cmp.Equal(got, tc.want, cmpopts.EquateEmpty()) || (tc.want == nil) != (len(unanswered) == 1) {
			t.Errorf("collection %s: answered with %v (unanswered %v), want %v", tc.what, got, unanswered, tc.want)
		}
	}
}

// TestACurrentCollectionIsReadAgainEachPeriod: a collection the function keeps current carries the period of
// the call's clock in the template of its members, the same all through one period and another in the next, so
// the provider lists it, and observes its members, once a period; any other read carries none, and the reader
// says whether the function must be called again within the period.
func TestACurrentCollectionIsReadAgainEachPeriod(t *testing.T) {
	nodePool := schema.GroupVersionKind{Group: "karpenter.sh", Version: "v1", Kind: "NodePool"}
	requirements := func() map[string]*fnv1.ResourceSelector {
		byLabels := func(kind string) *fnv1.ResourceSelector {
			return &fnv1.ResourceSelector{ApiVersion: "karpenter.sh/v1", Kind: kind,
				Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: map[string]string{"app.kubernetes.io/managed-by": "kiso"}}}}
		}
		return map[string]*fnv1.ResourceSelector{
			"pools":              byLabels("NodePool"),
			"nodeclaims":         byLabels("NodeClaim"),
			"reference-nodepool": ownership.ByName(nodePool, "", "platform"),
		}
	}
	stamps := func(r *Reader) map[string]string {
		out := map[string]string{}
		for name, o := range r.Requirements(requirements()) {
			if v, found, _ := unstructured.NestedString(o.Object, "spec", "objectTemplate", "metadata", "annotations", rereadAnnotation); found {
				out[string(name)] = v
			}
		}
		return out
	}
	start := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	r := &Reader{ProviderConfig: "eu", Owner: "XKarpenterCluster/prod", Now: start,
		Current: map[string]bool{"pools": true, "reference-nodepool": true}}
	// Not composed yet: the provider lists a new collection as it is created.
	if none := stamps(r); len(none) != 0 || r.Rereading() {
		t.Errorf("reads not composed yet, yet stamped %v (rereading %t)", none, r.Rereading())
	}
	// Composed: Crossplane observes them, before the provider says anything of them.
	observed := map[resource.Name]resource.ObservedComposed{}
	for name, read := range r.Requirements(requirements()) {
		observed[name] = resource.ObservedComposed{Resource: read}
	}
	if _, err := r.Answer(&fnv1.RunFunctionRequest{}, observed); err != nil {
		t.Fatal(err)
	}
	first := stamps(r)
	if want := map[string]string{readPrefix + "pools": "2026-12-06T09:00:00Z"}; !cmp.Equal(first, want) {
		t.Errorf("reads stamped %v, want only the current collection, with its period: %v", first, want)
	}
	if !r.Rereading() {
		t.Error("the reader does not say a collection is read again each period")
	}
	r.Now = start.Add(RereadEvery - time.Second)
	if same := stamps(r); !cmp.Equal(same, first) {
		t.Errorf("within one period the stamp changed from %v to %v: the provider would list the collection again", first, same)
	}
	r.Now = start.Add(RereadEvery)
	if next := stamps(r); next[readPrefix+"pools"] == first[readPrefix+"pools"] || next[readPrefix+"pools"] == "" {
		t.Errorf("the next period stamps %v, the last one %v: the provider would not list the collection again", next, first)
	}
	r.Current = nil
	if none := stamps(r); len(none) != 0 || r.Rereading() {
		t.Errorf("nothing current, yet reads stamped %v (rereading %t)", none, r.Rereading())
	}
}
