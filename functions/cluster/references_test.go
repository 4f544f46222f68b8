package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crossplane/function-sdk-go/logging"

	"github.com/kiso-dev/kiso/functions/internal/fntest"
)

// listingReferences is spec with one reference pair listed.
func listingReferences(spec string) string {
	return strings.Replace(spec, `"clusterName":"prod",`, `"clusterName":"prod","references":[{"nodeClassRef":{"kind":"EC2NodeClass","name":"default"},"nodePoolRef":{"name":"default"}}],`, 1)
}

// The reference pair as the platform keeps it: with what the apiserver and Karpenter add, none of which an
// organization clones.
const (
	referenceNodeClass = `{"apiVersion":"karpenter.k8s.aws/v1","kind":"EC2NodeClass","metadata":{"name":"default","labels":{"kiso.dev/reference":"true"},` +
		`"resourceVersion":"7","uid":"u1","annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}"}},` +
		`"spec":{"role":"KarpenterNodeRole","amiSelectorTerms":[{"alias":"al2023@latest"}]},"status":{"conditions":[{"type":"Ready","status":"True"}]}}`
	referenceNodePool = `{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"default","labels":{"kiso.dev/reference":"true"},"resourceVersion":"8"},` +
		`"spec":{"template":{"spec":{"nodeClassRef":{"group":"karpenter.k8s.aws","kind":"EC2NodeClass","name":"default"}}}},"status":{"resources":{"cpu":"4"}}}`
	publishedReference = "EC2NodeClass.v1.karpenter.k8s.aws/default,NodePool/default"
)

// TestTheClusterReadsTheReferencesItListsForItsOrganizations: each pair of spec.references is read once, by
// the cluster, and shown in its status and in the view its organizations read: kind, name, labels and spec,
// which is all an organization clones or checks, and nothing that changes without the reference changing
// (resourceVersion, status). A pair that does not exist is shown as read, empty, so that organizations say it is
// missing instead of each reading it.
func TestTheClusterReadsTheReferencesItListsForItsOrganizations(t *testing.T) {
	spec := listingReferences(localClusterSpec)
	want := map[string]any{
		"reference": publishedReference,
		"nodeClass": `{"apiVersion":"karpenter.k8s.aws/v1","kind":"EC2NodeClass","metadata":{"labels":{"kiso.dev/reference":"true"},"name":"default"},"spec":{"amiSelectorTerms":[{"alias":"al2023@latest"}],"role":"KarpenterNodeRole"}}`,
		"nodePool":  `{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"labels":{"kiso.dev/reference":"true"},"name":"default"},"spec":{"template":{"spec":{"nodeClassRef":{"group":"karpenter.k8s.aws","kind":"EC2NodeClass","name":"default"}}}}}`,
	}
	for name, tc := range map[string]struct {
		world fntest.Cluster
		want  map[string]any
	}{
		"There":   {world: fntest.Cluster{referenceNodeClass, referenceNodePool}, want: want},
		"Missing": {world: fntest.Cluster{referenceNodePool}, want: map[string]any{"reference": publishedReference, "nodePool": want["nodePool"]}},
	} {
		t.Run(name, func(t *testing.T) {
			rsp := fntest.Run(t, &Function{log: logging.NewNopLogger()}, newRequest(t, xr(spec), nil), withPrometheusOperator(tc.world))
			fntest.AssertNoFatal(t, rsp)
			st := fntest.AsMap(t, rsp.GetDesired().GetComposite().GetResource())
			if diff := cmp.Diff([]any{tc.want}, fntest.Dig(st, "status", "references")); diff != "" {
				t.Errorf("status.references (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]any{tc.want}, fntest.Dig(fntest.Desired(t, rsp)[string(crClusterView)], "data", "status", "references")); diff != "" {
				t.Errorf("the view's status.references (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAWorkloadClusterReadsEachListedReferenceThroughOneWatchedObject: in a workload cluster each reference
// object is read there through one observe-only Object, watched so that an edited reference reaches the
// organizations at once; until the provider has observed it, nothing is published, and once published, a
// moment the provider cannot answer keeps what was published.
func TestAWorkloadClusterReadsEachListedReferenceThroughOneWatchedObject(t *testing.T) {
	spec := listingReferences(workloadClusterSpec)
	first := run(t, newRequest(t, xr(spec), nil))
	fntest.AssertNoFatal(t, first)
	reads := map[string]map[string]any{}
	for name, r := range fntest.Desired(t, first) {
		if kind := fntest.Dig(r, "spec", "forProvider", "manifest", "kind"); strings.HasPrefix(name, "read:") && (kind == "EC2NodeClass" || kind == "NodePool") {
			reads[name] = r
			if fntest.Dig(r, "spec", "watch") != true || fntest.Dig(r, "spec", "managementPolicies") == nil {
				t.Errorf("%s is not a watched observe-only Object: %v", name, r["spec"])
			}
		}
	}
	if len(reads) != 2 {
		t.Fatalf("reads of the listed reference pair: %d, want 2 (one per object): %v", len(reads), reads)
	}
	if got := fntest.Dig(fntest.AsMap(t, first.GetDesired().GetComposite().GetResource()), "status", "references"); got != nil {
		t.Errorf("status.references %v before the workload cluster answered", got)
	}

	observed := map[string]string{}
	for name, r := range reads {
		manifest := referenceNodePool
		if fntest.Dig(r, "spec", "forProvider", "manifest", "kind") == "EC2NodeClass" {
			manifest = referenceNodeClass
		}
		r["status"] = map[string]any{
			"atProvider": map[string]any{"manifest": fntest.JSONMap(t, manifest)},
			"conditions": []any{map[string]any{"type": "Ready", "status": "True"}, map[string]any{"type": "Synced", "status": "True"}},
		}
		observed[name] = fntest.ToJSON(t, r)
	}
	rsp := run(t, newRequest(t, xr(spec), observed))
	fntest.AssertNoFatal(t, rsp)
	published := fntest.Dig(fntest.AsMap(t, rsp.GetDesired().GetComposite().GetResource()), "status", "references")
	if refs, _ := published.([]any); len(refs) != 1 || fntest.Dig(refs[0].(map[string]any), "nodeClass") == nil || fntest.Dig(refs[0].(map[string]any), "nodePool") == nil {
		t.Fatalf("status.references once the workload cluster answered: %v", published)
	}

	// The provider cannot answer a moment: what was published stays.
	status, err := json.Marshal(map[string]any{"references": published})
	if err != nil {
		t.Fatal(err)
	}
	withStatus := fntest.JSONMap(t, xr(spec))
	withStatus["status"] = fntest.JSONMap(t, string(status))
	rsp = run(t, newRequest(t, fntest.ToJSON(t, withStatus), nil))
	fntest.AssertNoFatal(t, rsp)
	if diff := cmp.Diff(published, fntest.Dig(fntest.AsMap(t, rsp.GetDesired().GetComposite().GetResource()), "status", "references")); diff != "" {
		t.Errorf("status.references while the workload cluster does not answer (-published +got):\n%s", diff)
	}
}
