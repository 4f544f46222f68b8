package main

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/kiso-dev/kiso/functions/internal/fncall"
	"github.com/kiso-dev/kiso/functions/internal/fntest"
	"github.com/kiso-dev/kiso/functions/internal/remote"
)

// A cluster served from a management cluster, and an organization bound to it.
const (
	workloadClusterXR = `{"apiVersion":"kiso.dev/v1alpha1","kind":"XKarpenterCluster","metadata":{"name":"prod"},
	"spec":{"clusterName":"prod-eu","region":"eu-west-3","accountId":"123456789012","workloadCluster":{"providerConfigName":"eu"}},
	"status":{"controllerRoleResource":"prod-eu-karpenter-controller","nodeRolePath":"/kiso/prod-eu/organizations/",
	          "nodeRoleName":"kiso-prod-eu-karpenter-node","namePrefix":"kiso-prod-eu","karpenterReleaseResource":"prod-eu-karpenter-release"}}`
	workloadSpec = `{"organization":"acme","clusterRef":{"name":"prod"},"stacks":[{"name":"web","namespaces":["acme-web"]}],
	"nodeClassRef":{"name":"default"},"nodePoolRef":{"name":"default"}}`
)

// provider plays provider-kubernetes for the function's desired state: each observe-only Object observes its
// object among the workload cluster's (or says it does not exist), each collection lists its matches as member
// Objects in the management cluster, and every other Object has created its object. It returns what Crossplane
// then observes, and the management cluster with the collections' members.
func provider(t *testing.T, rsp *fnv1.RunFunctionResponse, workload []string, management cluster) (map[string]string, cluster) {
	t.Helper()
	objects := make([]map[string]any, 0, len(workload))
	for _, o := range workload {
		objects = append(objects, fntest.JSONMap(t, o))
	}
	synced := func(status, message string) []any {
		return []any{map[string]any{"type": "Ready", "status": status}, map[string]any{"type": "Synced", "status": status, "message": message}}
	}
	observed := map[string]string{}
	for name, o := range fntest.Desired(t, rsp) {
		u := &unstructured.Unstructured{Object: o}
		manifest, _, _ := unstructured.NestedMap(o, "spec", "forProvider", "manifest")
		switch {
		case u.GetKind() == "ObservedObjectCollection":
			_ = unstructured.SetNestedSlice(o, synced("True", ""), "status", "conditions")
			labels, _, _ := unstructured.NestedStringMap(o, "spec", "observeObjects", "selector", "matchLabels")
			kind, _, _ := unstructured.NestedString(o, "spec", "observeObjects", "kind")
			for _, w := range objects {
				m := &unstructured.Unstructured{Object: w}
				if m.GetKind() != kind || !hasLabels(m.GetLabels(), labels) {
					continue
				}
				member := map[string]any{"apiVersion": remote.ObjectAPIVersion, "kind": remote.ObjectKind,
					"metadata": map[string]any{"name": u.GetName() + "-" + m.GetName(), "labels": map[string]any{"kubernetes.crossplane.io/owned-by-collection": u.GetName()}},
					"status":   map[string]any{"atProvider": map[string]any{"manifest": w}}}
				management = append(management, mustJSON(t, member))
			}
		case u.GetKind() == remote.ObjectKind && len(must(unstructured.NestedStringSlice(o, "spec", "managementPolicies"))) > 0:
			_ = unstructured.SetNestedSlice(o, synced("False", "cannot observe external resource: external resource does not exist"), "status", "conditions")
			for _, w := range objects {
				m := &unstructured.Unstructured{Object: w}
				if m.GetKind() == manifest["kind"] && m.GetName() == (&unstructured.Unstructured{Object: manifest}).GetName() {
					_ = unstructured.SetNestedSlice(o, synced("True", ""), "status", "conditions")
					_ = unstructured.SetNestedField(o, w, "status", "atProvider", "manifest")
				}
			}
		case u.GetKind() == remote.ObjectKind:
			created := map[string]any{}
			for k, v := range manifest {
				created[k] = v
			}
			created["status"] = readyStatus()
			_ = unstructured.SetNestedField(o, created, "status", "atProvider", "manifest")
			_ = unstructured.SetNestedSlice(o, synced("True", ""), "status", "conditions")
		}
		observed[name] = mustJSON(t, o)
	}
	return observed, management
}

func hasLabels(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

func must[T any](v T, _ bool, _ error) T { return v }

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestWorkloadClusterOrganization follows an organization bound to a workload cluster from its first reconcile:
// it reads the references, namespaces and names from the workload cluster through observe-only Objects and a
// collection, composes its pools, Roles and ConfigMaps there as Objects (its organization's ConfigMap stays
// beside it), orders their deletion through their Objects and Karpenter's Release, and keeps every Object
// unchanged once the workload cluster stops answering.
func TestWorkloadClusterOrganization(t *testing.T) {
	workload := []string{refNodeClass, refNodePool, namespace("acme-web")}

	// First reconcile: nothing read yet, nothing composed but the reads.
	rsp := run(t, newRequest(t, input, xr(workloadSpec), nil), cluster{workloadClusterXR})
	fntest.AssertNoFatal(t, rsp)
	for name, o := range fntest.Desired(t, rsp) {
		if !strings.HasPrefix(name, "read:") && name != string(organizationLockResource) {
			t.Errorf("first reconcile composed %s (%v) before reading the workload cluster", name, o["kind"])
		}
	}
	if c := fntest.Condition(t, rsp, TypeReferencesResolved); c.GetStatus() != fnv1.Status_STATUS_CONDITION_FALSE {
		t.Errorf("first reconcile: ReferencesResolved %v, want False while the reads are not answered", c)
	}

	rsp = settleReads(t, rsp, xr(workloadSpec), workload, cluster{workloadClusterXR})
	fntest.AssertNoFatal(t, rsp)
	// Nothing of Karpenter's is read from the management cluster, so it needs none of Karpenter's CRDs.
	for key, sel := range rsp.GetRequirements().GetResources() {
		if strings.Contains(sel.GetApiVersion(), "karpenter") || sel.GetKind() == "Namespace" && key != requireClaimNamespace {
			t.Errorf("requirement %s asks the management cluster for %s %s", key, sel.GetApiVersion(), sel.GetKind())
		}
	}
	desired := fntest.Desired(t, rsp)
	assertNamespacesReadByName(t, desired, "acme-web")
	assertComposedInWorkload(t, desired)
	assertKeptOnGap(t, rsp, workload, desired)
}

// settleReads plays the provider and Crossplane until the organization's reads settle: each answer may plan
// more (the namespaces given bring their Roles and ConfigMaps, whose names are read in turn).
func settleReads(t *testing.T, rsp *fnv1.RunFunctionResponse, xrJSON string, workload []string, management cluster) *fnv1.RunFunctionResponse {
	t.Helper()
	for round := 0; ; round++ {
		before := len(fntest.Desired(t, rsp))
		observed, withMembers := provider(t, rsp, workload, management)
		rsp = run(t, newRequest(t, input, xrJSON, observed), withMembers)
		if slices.ContainsFunc(rsp.GetResults(), func(r *fnv1.Result) bool { return r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL }) {
			return rsp // refused: the caller says whether it should have been
		}
		if len(fntest.Desired(t, rsp)) == before && fntest.Condition(t, rsp, TypeReferencesResolved).GetStatus() == fnv1.Status_STATUS_CONDITION_TRUE {
			return rsp
		}
		if round == 4 {
			t.Fatalf("the reads did not settle after %d rounds: %v", round, fntest.Condition(t, rsp, TypeReferencesResolved))
		}
	}
}

// assertComposedInWorkload checks that the pools, Roles and ConfigMaps are Objects of the workload cluster's
// ProviderConfig, the organization's ConfigMap is not, and the pool's NodeClass's Object keeps its cluster (which
// keeps Karpenter's Release) with a Usage of its own, and no Usage of the Release.
func assertComposedInWorkload(t *testing.T, desired map[string]map[string]any) {
	t.Helper()
	for name, objectName := range map[string]string{"nodepool-kiso-acme": "eu.nodepool.kiso-acme", "nodeclass-kiso-acme": "eu.ec2nodeclass.kiso-acme"} {
		o, ok := desired[name]
		if !ok {
			t.Fatalf("%s not composed; desired %v", name, keys(desired))
		}
		if o["kind"] != remote.ObjectKind || fntest.Dig(o, "metadata", "name") != objectName || fntest.Dig(o, "spec", "providerConfigRef", "name") != "eu" {
			t.Errorf("%s: %v %v with ProviderConfig %v, want Object %s of eu", name, o["kind"], fntest.Dig(o, "metadata", "name"), fntest.Dig(o, "spec", "providerConfigRef", "name"), objectName)
		}
	}
	if lock := desired[string(organizationLockResource)]; lock["kind"] != "ConfigMap" {
		t.Errorf("the organization's ConfigMap is %v, want a ConfigMap beside the XR", lock["kind"])
	}
	wrapped := 0
	for name, o := range desired {
		kind, _ := o["kind"].(string)
		switch {
		case kind == remote.ObjectKind:
			wrapped++
		case kind == "Role" || (kind == "ConfigMap" && name != string(organizationLockResource)) || kind == "NodePool":
			t.Errorf("%s: %s composed into the management cluster", name, kind)
		case kind == "ClusterUsage":
			t.Errorf("%s: a ClusterUsage composed", name)
		}
	}
	if wrapped < 4 {
		t.Errorf("%d Objects, want at least the NodePool, NodeClass, placement Role and ConfigMap", wrapped)
	}
	// The cluster's deletion policy keeps the XKarpenterCluster while an Object of kiso's (by its label) puts a
	// pool bound to it (by its annotation) into the workload cluster.
	for _, name := range []string{"nodepool-kiso-acme", "nodeclass-kiso-acme"} {
		o := desired[name]
		if fntest.Dig(o, "metadata", "labels", "app.kubernetes.io/managed-by") != "kiso" || fntest.Dig(o, "spec", "forProvider", "manifest", "metadata", "annotations", "kiso.dev/cluster") != "prod" {
			t.Errorf("%s: the cluster's policy cannot tell the Object puts a pool bound to cluster prod there: %v", name, o)
		}
	}
}

// assertKeptOnGap makes the workload cluster unreachable (the reads lose their observations, the provider says it
// cannot connect) and checks every Object is kept as is, and the claim says why.
func assertKeptOnGap(t *testing.T, rsp *fnv1.RunFunctionResponse, workload []string, desired map[string]map[string]any) {
	t.Helper()
	observed, management := provider(t, rsp, workload, cluster{workloadClusterXR})
	for name := range observed {
		if strings.HasPrefix(name, "read:") {
			o := fntest.JSONMap(t, observed[name])
			o["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Synced", "status": "False",
				"message": "observe failed: cannot get object: dial tcp 10.0.0.1:443: connect: connection refused"}}}
			observed[name] = mustJSON(t, o)
		}
	}
	gap := run(t, newRequest(t, input, xr(workloadSpec), observed), management)
	fntest.AssertNoFatal(t, gap)
	c := fntest.Condition(t, gap, TypeReferencesResolved)
	for _, want := range []string{"waiting for workload cluster eu to answer", "NodePool default: observe failed: cannot get object: dial tcp 10.0.0.1:443: connect: connection refused", "keeping the pools already composed unchanged meanwhile"} {
		if !strings.Contains(c.GetMessage(), want) {
			t.Errorf("gap: ReferencesResolved %s %q does not say %q", c.GetStatus(), c.GetMessage(), want)
		}
	}
	kept := fntest.Desired(t, gap)
	for name, o := range desired {
		if strings.HasPrefix(name, "read:") {
			continue
		}
		got, ok := kept[name]
		if !ok {
			t.Errorf("gap: %s dropped", name)
			continue
		}
		if diff := cmp.Diff(o["spec"], got["spec"]); diff != "" {
			t.Errorf("gap: %s changed: -before, +after:\n%s", name, diff)
		}
	}
}

func keys(m map[string]map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestWorkloadClusterClaimIsAuthorizedWhereItIs: the claim is in the cluster that runs Crossplane, so whether the
// platform gives the organization the claim's namespace is read there, never in the workload cluster, where any
// namespace of that name says nothing about who may claim.
func TestWorkloadClusterClaimIsAuthorizedWhereItIs(t *testing.T) {
	cases := map[string]struct {
		management, workload string // the claim's namespace acme, in each cluster
		valid                bool
	}{
		"GivenWhereTheClaimIs":       {management: namespace("acme"), workload: namespaceOf("acme", ""), valid: true},
		"GivenOnlyInWorkloadCluster": {management: namespaceOf("acme", ""), workload: namespace("acme"), valid: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			xrJSON := claimedXR(workloadSpec, "acme")
			workload := []string{refNodeClass, refNodePool, namespace("acme-web"), tc.workload}
			management := cluster{workloadClusterXR, tc.management}
			rsp := run(t, newRequest(t, input, xrJSON, nil), management)
			if _, ok := fntest.Desired(t, rsp)["read:"+requireClaimNamespace]; ok {
				t.Fatal("the claim's namespace is read in the workload cluster")
			}
			rsp = settleReads(t, rsp, xrJSON, workload, management)
			valid := fntest.Condition(t, rsp, "SpecValid")
			if got := valid.GetStatus() == fnv1.Status_STATUS_CONDITION_TRUE; got != tc.valid {
				t.Errorf("SpecValid %v (%s), want valid %v", valid.GetStatus(), valid.GetMessage(), tc.valid)
			}
			if !tc.valid && !strings.Contains(valid.GetMessage(), "spec.organization") {
				t.Errorf("refusal %q does not name spec.organization", valid.GetMessage())
			}
		})
	}
}

// TestWorkloadClusterOrganizationReadsThePlacementItsClusterPublishes: an organization of a workload cluster reads
// what the cluster's placement policy enforces from the cluster's view once the cluster publishes it, instead of
// reading the policy there through an observe-only Object of its own (one managed resource per organization); it
// reads the policy itself while the cluster has not published it, and drops that read, and nothing else, once it
// has.
func TestWorkloadClusterOrganizationReadsThePlacementItsClusterPublishes(t *testing.T) {
	const read = "read:" + requireClusterPolicy
	published := strings.Replace(workloadClusterXR, `"namePrefix":"kiso-prod-eu"`,
		`"namePrefix":"kiso-prod-eu","placement":{"cluster":"prod","keyDomain":"kiso.dev","platformNamespaces":["kube-system","karpenter"]}`, 1)
	if published == workloadClusterXR {
		t.Fatal("the fixture's cluster no longer has the status this test extends")
	}
	workload := []string{refNodeClass, refNodePool, namespace("acme-web")}

	// Unpublished (a cluster of an earlier release, or its policy not there yet): the organization reads the policy.
	before := settleReads(t, run(t, newRequest(t, input, xr(workloadSpec), nil), cluster{workloadClusterXR}), xr(workloadSpec), workload, cluster{workloadClusterXR})
	fntest.AssertNoFatal(t, before)
	if _, ok := fntest.Desired(t, before)[read]; !ok {
		t.Fatalf("an organization whose cluster publishes no placement does not read the policy (%v)", keys(fntest.Desired(t, before)))
	}
	if c := fntest.Condition(t, before, TypePlacementEnforced); c.GetReason() != ReasonNoPlacementPolicy {
		t.Errorf("without a policy or a published placement: PlacementEnforced %s (%s), want %s", c.GetReason(), c.GetMessage(), ReasonNoPlacementPolicy)
	}

	// The cluster publishes it: the next call drops the read and keeps everything else as it was.
	observed, withMembers := provider(t, before, workload, cluster{published})
	after := run(t, newRequest(t, input, xr(workloadSpec), observed), withMembers)
	fntest.AssertNoFatal(t, after)
	if _, ok := after.GetRequirements().GetResources()[requireClusterPolicy]; ok {
		t.Error("the organization still requires the placement policy its cluster publishes")
	}
	want := fntest.Desired(t, before)
	delete(want, read)
	if diff := cmp.Diff(slices.Sorted(maps.Keys(want)), slices.Sorted(maps.Keys(fntest.Desired(t, after)))); diff != "" {
		t.Errorf("composed resources once the cluster publishes its placement (-want +got):\n%s", diff)
	}
	c := fntest.Condition(t, after, TypePlacementEnforced)
	if c.GetReason() == ReasonNoPlacementPolicy || !strings.Contains(c.GetMessage(), `XKarpenterCluster "prod"`) {
		t.Errorf("with the placement published: PlacementEnforced %s (%s), want it read from cluster prod's view", c.GetReason(), c.GetMessage())
	}
}

// assertNamespacesReadByName checks that the organization reads each namespace its spec lists through a watched
// observe-only Object of its own, and lists none through a collection, which the provider would list only at its
// poll and whose members it rewrites at every poll.
func assertNamespacesReadByName(t *testing.T, desired map[string]map[string]any, namespaces ...string) {
	t.Helper()
	for name, o := range desired {
		if o["kind"] == "ObservedObjectCollection" {
			t.Errorf("%s is a collection of %v: the organization lists objects in the workload cluster", name, fntest.Dig(o, "spec", "observeObjects", "kind"))
		}
	}
	for _, ns := range namespaces {
		read := desired["read:"+requireListedNamespace+ns]
		if read == nil {
			t.Errorf("namespace %s is not read by name (%v)", ns, keys(desired))
			continue
		}
		if fntest.Dig(read, "spec", "forProvider", "manifest", "metadata", "name") != ns || fntest.Dig(read, "spec", "watch") != true {
			t.Errorf("namespace %s's read is not a watched read of it: %v", ns, read["spec"])
		}
	}
}

// TestWorkloadClusterReadsAStackNamespaceNamedAsTheClaimsThere: a stack's namespace is the claim's by default, but
// the one its pods run in is the workload cluster's: the organization reads that one there (whether the platform
// gives it there), and the claim's own namespace where the claim is, each under its own requirement.
func TestWorkloadClusterReadsAStackNamespaceNamedAsTheClaimsThere(t *testing.T) {
	spec := strings.Replace(workloadSpec, `"namespaces":["acme-web"]`, `"namespaces":["acme"]`, 1)
	if spec == workloadSpec {
		t.Fatal("the fixture's spec no longer lists the namespace this test replaces")
	}
	xrJSON := claimedXR(spec, "acme")
	management := cluster{workloadClusterXR, namespace("acme")}
	cases := map[string]struct {
		workload string // namespace acme in the workload cluster
		given    bool
	}{
		"GivenThere":    {workload: namespace("acme"), given: true},
		"NotGivenThere": {workload: namespaceOf("acme", ""), given: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := settleReads(t, run(t, newRequest(t, input, xrJSON, nil), management), xrJSON, []string{refNodeClass, refNodePool, tc.workload}, management)
			fntest.AssertNoFatal(t, rsp)
			if _, ok := rsp.GetRequirements().GetResources()[requireClaimNamespace]; !ok {
				t.Error("the claim's namespace is not asked of Crossplane where the claim is")
			}
			desired := fntest.Desired(t, rsp)
			if desired["read:"+requireListedNamespace+"acme"] == nil {
				t.Fatalf("the stack's namespace acme is not read in the workload cluster (%v)", keys(desired))
			}
			_, role := desired["placement-role-acme"]
			if role != tc.given {
				t.Errorf("placement Role in acme composed %v, want %v: given there %v", role, tc.given, tc.given)
			}
		})
	}
}

// withPublishedReferences is the cluster XR with the reference pair of workloadSpec in status.references, as
// the cluster function shows it (kind, name, labels, spec); nodeClass "" says the cluster found none.
func withPublishedReferences(t *testing.T, clusterJSON, nodeClass, nodePool string) string {
	t.Helper()
	shown := func(object string) string {
		if object == "" {
			return ""
		}
		o := fntest.JSONMap(t, object)
		meta := o["metadata"].(map[string]any)
		return fntest.ToJSON(t, map[string]any{"apiVersion": o["apiVersion"], "kind": o["kind"], "spec": o["spec"],
			"metadata": map[string]any{"name": meta["name"], "labels": meta["labels"]}})
	}
	c := fntest.JSONMap(t, clusterJSON)
	c["status"].(map[string]any)["references"] = []any{map[string]any{
		"reference": "EC2NodeClass.v1.karpenter.k8s.aws/default,NodePool/default",
		"nodeClass": shown(nodeClass), "nodePool": shown(nodePool),
	}}
	return fntest.ToJSON(t, c)
}

// TestAnOrganizationReadsTheReferencesItsClusterPublishes: once its cluster shows the reference pair the
// organization names (spec.references), the organization reads it there, drops its two observe-only reads of it
// in the workload cluster and renders exactly what it rendered from them. A pair its cluster shows as not found
// is reported missing, as its own read would.
func TestAnOrganizationReadsTheReferencesItsClusterPublishes(t *testing.T) {
	workload := []string{refNodeClass, refNodePool, namespace("acme-web")}
	before := settleReads(t, run(t, newRequest(t, input, xr(workloadSpec), nil), cluster{workloadClusterXR}), xr(workloadSpec), workload, cluster{workloadClusterXR})
	fntest.AssertNoFatal(t, before)
	reads := []string{"read:" + requireReferenceNodeClass, "read:" + requireReferenceNodePool}
	for _, read := range reads {
		if _, ok := fntest.Desired(t, before)[read]; !ok {
			t.Fatalf("an organization whose cluster shows no references does not read them itself: no %s (%v)", read, keys(fntest.Desired(t, before)))
		}
	}

	published := withPublishedReferences(t, workloadClusterXR, refNodeClass, refNodePool)
	observed, withMembers := provider(t, before, workload, cluster{published})
	after := run(t, newRequest(t, input, xr(workloadSpec), observed), withMembers)
	fntest.AssertNoFatal(t, after)
	for _, name := range []string{requireReferenceNodeClass, requireReferenceNodePool} {
		if _, ok := after.GetRequirements().GetResources()[name]; ok {
			t.Errorf("the organization still requires %s, which its cluster shows", name)
		}
	}
	want := fntest.Desired(t, before)
	for _, read := range reads {
		delete(want, read)
	}
	if diff := cmp.Diff(want, fntest.Desired(t, after)); diff != "" {
		t.Errorf("composed resources once the cluster shows the references (-read itself +read from the cluster):\n%s", diff)
	}
	if c := fntest.Condition(t, after, TypeReferencesResolved); c.GetStatus() != fnv1.Status_STATUS_CONDITION_TRUE {
		t.Errorf("ReferencesResolved %s %s (%s) with the references read from the cluster", c.GetStatus(), c.GetReason(), c.GetMessage())
	}

	// The cluster found no such NodeClass: the organization says so, and keeps what it composed.
	missing := withPublishedReferences(t, workloadClusterXR, "", refNodePool)
	rsp := run(t, newRequest(t, input, xr(workloadSpec), observed), cluster{missing})
	fntest.AssertNoFatal(t, rsp)
	c := fntest.Condition(t, rsp, TypeReferencesResolved)
	if c.GetReason() != ReasonNotFound || !strings.Contains(c.GetMessage(), "spec.nodeClassRef: reference") {
		t.Errorf("ReferencesResolved %s (%s) with the reference NodeClass shown as not found, want %s naming spec.nodeClassRef", c.GetReason(), c.GetMessage(), ReasonNotFound)
	}
	if _, ok := fntest.Desired(t, rsp)["nodepool-kiso-acme"]; !ok {
		t.Error("the pool's NodePool is dropped while the reference NodeClass is shown as not found")
	}
}

// TestAnUnmarkedReferenceItsClusterShowsIsRefused: the cluster shows each pair it lists as it found it, labels
// included, and an organization checks the platform's mark on what it is shown as it does on what it reads itself:
// a platform that lists a pair it never marked for tenants gets the same refusal, and nothing is rendered from it.
func TestAnUnmarkedReferenceItsClusterShowsIsRefused(t *testing.T) {
	workload := []string{refNodeClass, refNodePool, namespace("acme-web")}
	before := settleReads(t, run(t, newRequest(t, input, xr(workloadSpec), nil), cluster{workloadClusterXR}), xr(workloadSpec), workload, cluster{workloadClusterXR})
	fntest.AssertNoFatal(t, before)

	privileged := strings.Replace(refNodePool, `"labels":{"kiso.dev/reference":"true"}`, `"labels":{"team":"platform"}`, 1)
	published := withPublishedReferences(t, workloadClusterXR, refNodeClass, privileged)
	observed, withMembers := provider(t, before, workload, cluster{published})
	rsp := run(t, newRequest(t, input, xr(workloadSpec), observed), withMembers)
	for _, name := range []string{requireReferenceNodeClass, requireReferenceNodePool} {
		if _, ok := rsp.GetRequirements().GetResources()[name]; ok {
			t.Errorf("the organization requires %s itself, which its cluster shows: the mark would be checked on its own read", name)
		}
	}
	want := `spec.nodePoolRef.name: Forbidden: NodePool "default" is not a reference: a platform marks the NodePools tenants may clone with the label kiso.dev/reference: "true" (or lists them in the function input)`
	assertFatal(t, rsp, want)
	assertCondition(t, rsp, fncall.TypeSpecValid, fnv1.Status_STATUS_CONDITION_FALSE, fncall.ReasonInvalidSpec, want)
	if n := len(rsp.GetDesired().GetResources()); n != 0 {
		t.Errorf("returned %d desired resources with a fatal result: nothing may be rendered from an unmarked reference", n)
	}
}
