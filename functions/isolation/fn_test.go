package main

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/protobuf/testing/protocmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/kiso-dev/kiso/functions/internal/fncall"
	"github.com/kiso-dev/kiso/functions/internal/fntest"
)

const stackSpec = `{"organization":"acme","customer":"acme-corp","isolation":"stack",
	"stacks":[{"name":"web"},{"name":"jobs","namespaces":["acme-batch"]}],
	"nodeClassRef":{"name":"default"},"nodePoolRef":{"name":"default"},
	"pool":{"limits":{"cpu":"64"}},"tags":{"cost-center":"42"}}`

const orgSpec = `{"organization":"acme","customer":"acme-corp",
	"stacks":[{"name":"web"},{"name":"jobs"}],
	"nodeClassRef":{"name":"default"},"nodePoolRef":{"name":"default"}}`

// The NodePool and EC2NodeClass kiso renders for stack web of stackSpec.
const (
	wantWebNodePool = `{"apiVersion":"karpenter.sh/v1","kind":"NodePool",
		"metadata":{"name":"kiso-acme.web","annotations":{"kiso.dev/cloned-from":"EC2NodeClass.v1.karpenter.k8s.aws/default,NodePool/default","kiso.dev/revision":"REVISION"},"labels":{"app.kubernetes.io/managed-by":"kiso","kiso.dev/organization":"acme","kiso.dev/stack":"web","kiso.dev/customer":"acme-corp"}},
		"spec":{"template":{"metadata":{"annotations":{"kiso.dev/nodeclass":"NODECLASS"},"labels":{"tier":"general","kiso.dev/organization":"acme","kiso.dev/stack":"web","kiso.dev/customer":"acme-corp",
			"node-restriction.kubernetes.io/kiso.dev.organization":"acme","node-restriction.kubernetes.io/kiso.dev.stack":"web"}},
		"spec":{"nodeClassRef":{"group":"karpenter.k8s.aws","kind":"EC2NodeClass","name":"kiso-acme.web"},
		"requirements":[{"key":"karpenter.sh/capacity-type","operator":"In","values":["spot","on-demand"]}],
		"taints":[{"key":"arch","value":"arm64","effect":"NoSchedule"},{"key":"kiso.dev/organization","value":"acme","effect":"NoSchedule"},{"key":"kiso.dev/stack","value":"web","effect":"NoSchedule"}],
		"startupTaints":[{"key":"node.cilium.io/agent-not-ready","value":"true","effect":"NoExecute"}],
		"expireAfter":"720h"}},
		"limits":{"cpu":"64","memory":"4000Gi"},
		"disruption":{"consolidationPolicy":"WhenEmptyOrUnderutilized","consolidateAfter":"30s"}}}`
	wantWebNodeClass = `{"apiVersion":"karpenter.k8s.aws/v1","kind":"EC2NodeClass",
		"metadata":{"name":"kiso-acme.web","annotations":{"kiso.dev/cloned-from":"EC2NodeClass.v1.karpenter.k8s.aws/default,NodePool/default","kiso.dev/revision":"REVISION","kiso.dev/nodeclass":"NODECLASS"},"labels":{"app.kubernetes.io/managed-by":"kiso","kiso.dev/organization":"acme","kiso.dev/stack":"web","kiso.dev/customer":"acme-corp"}},
		"spec":{"role":"KarpenterNodeRole-prod","amiSelectorTerms":[{"alias":"al2023@latest"}],
		"subnetSelectorTerms":[{"tags":{"karpenter.sh/discovery":"prod"}}],
		"securityGroupSelectorTerms":[{"tags":{"karpenter.sh/discovery":"prod"}}],
		"tags":{"team":"platform","cost-center":"42","kiso.dev/organization":"acme","kiso.dev/stack":"web","kiso.dev/customer":"acme-corp"},
		"futureField":{"x":1}}}`
)

func TestStackIsolationRendersOnePoolPerStack(t *testing.T) {
	rsp := run(t, newRequest(t, input, xr(stackSpec), nil), cluster{refNodeClass, refNodePool})
	fntest.AssertNoFatal(t, rsp)

	got := fntest.Desired(t, rsp)
	if diff := cmp.Diff([]string{"nodeclass-kiso-acme.jobs", "nodeclass-kiso-acme.web", "nodepool-kiso-acme.jobs", "nodepool-kiso-acme.web", "organization"}, slices.Sorted(maps.Keys(got))); diff != "" {
		t.Errorf("desired resource names: -want, +got:\n%s", diff)
	}
	// The clones say which revision of the reference pair they are rendered from (bound to no cluster, they
	// inherit nothing).
	rev := revisionInheriting(t, refNodePool, "{}").ID
	// The node template carries the mark of the pool's NodeClass spec, and so does the NodeClass.
	mark, err := nodeClassHash(&unstructured.Unstructured{Object: fntest.JSONMap(t, wantWebNodeClass)})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fntest.JSONMap(t, strings.NewReplacer("REVISION", rev, "NODECLASS", mark).Replace(wantWebNodePool)), got["nodepool-kiso-acme.web"]); diff != "" {
		t.Errorf("NodePool kiso-acme.web: -want, +got:\n%s", diff)
	}
	if diff := cmp.Diff(fntest.JSONMap(t, strings.NewReplacer("REVISION", rev, "NODECLASS", mark).Replace(wantWebNodeClass)), got["nodeclass-kiso-acme.web"]); diff != "" {
		t.Errorf("EC2NodeClass kiso-acme.web: -want, +got:\n%s", diff)
	}

	wantStatus := fntest.JSONMap(t, strings.ReplaceAll(`{
		"pools":[
			{"name":"kiso-acme.web","nodeClass":"kiso-acme.web","stacks":["web"],"ready":false,"reference":"REVISION"},
			{"name":"kiso-acme.jobs","nodeClass":"kiso-acme.jobs","stacks":["jobs"],"ready":false,"reference":"REVISION"}],
		"poolNames":"kiso-acme.web,kiso-acme.jobs",
		"revisions":"REVISION",
		"stacks":[
			{"name":"web","pool":"kiso-acme.web","namespaces":["acme-web"],
			 "nodeSelector":{"node-restriction.kubernetes.io/kiso.dev.organization":"acme","node-restriction.kubernetes.io/kiso.dev.stack":"web"},
			 "tolerations":[{"key":"kiso.dev/organization","operator":"Equal","value":"acme","effect":"NoSchedule"},
			                {"key":"kiso.dev/stack","operator":"Equal","value":"web","effect":"NoSchedule"}]},
			{"name":"jobs","pool":"kiso-acme.jobs","namespaces":["acme-batch"],
			 "nodeSelector":{"node-restriction.kubernetes.io/kiso.dev.organization":"acme","node-restriction.kubernetes.io/kiso.dev.stack":"jobs"},
			 "tolerations":[{"key":"kiso.dev/organization","operator":"Equal","value":"acme","effect":"NoSchedule"},
			                {"key":"kiso.dev/stack","operator":"Equal","value":"jobs","effect":"NoSchedule"}]}]}`, "REVISION", rev))
	if diff := cmp.Diff(wantStatus, fntest.AsMap(t, rsp.GetDesired().GetComposite().GetResource())["status"]); diff != "" {
		t.Errorf("XR status: -want, +got:\n%s", diff)
	}
	assertConditions(t, rsp, map[string]fnv1.Status{
		fncall.TypeSpecValid: fnv1.Status_STATUS_CONDITION_TRUE, fncall.TypeNamesAvailable: fnv1.Status_STATUS_CONDITION_TRUE, TypeReferencesResolved: fnv1.Status_STATUS_CONDITION_TRUE,
		TypePoolsSettled: fnv1.Status_STATUS_CONDITION_TRUE, TypePlacementEnforced: fnv1.Status_STATUS_CONDITION_FALSE, TypeReferenceCurrent: fnv1.Status_STATUS_CONDITION_TRUE,
		TypeNamespacesAssigned: fnv1.Status_STATUS_CONDITION_FALSE, TypeNamespacesListed: fnv1.Status_STATUS_CONDITION_TRUE,
		TypeReplacementHeadroom: fnv1.Status_STATUS_CONDITION_TRUE, TypeKeyDomainCurrent: fnv1.Status_STATUS_CONDITION_TRUE,
	})
}

func TestSharedPoolIsRenderedFromTheOrganizationOnly(t *testing.T) {
	rsp := run(t, newRequest(t, input, xr(orgSpec), nil), cluster{refNodeClass, refNodePool})
	fntest.AssertNoFatal(t, rsp)
	got := fntest.Desired(t, rsp)
	if diff := cmp.Diff([]string{"nodeclass-kiso-acme", "nodepool-kiso-acme", "organization"}, slices.Sorted(maps.Keys(got))); diff != "" {
		t.Fatalf("one shared pool: -want, +got:\n%s", diff)
	}
	np := got["nodepool-kiso-acme"]
	wantTaints := []any{
		map[string]any{"key": "arch", "value": "arm64", "effect": "NoSchedule"},
		map[string]any{"key": "kiso.dev/organization", "value": "acme", "effect": "NoSchedule"},
	}
	if diff := cmp.Diff(wantTaints, fntest.Dig(np, "spec", "template", "spec", "taints")); diff != "" {
		t.Errorf("shared pool taints (organization only, never stack or customer): -want, +got:\n%s", diff)
	}
	wantLabels := map[string]any{"tier": "general", "kiso.dev/organization": "acme", "kiso.dev/customer": "acme-corp", "node-restriction.kubernetes.io/kiso.dev.organization": "acme"}
	if diff := cmp.Diff(wantLabels, fntest.Dig(np, "spec", "template", "metadata", "labels")); diff != "" {
		t.Errorf("shared pool node labels: -want, +got:\n%s", diff)
	}
	st := fntest.AsMap(t, rsp.GetDesired().GetComposite().GetResource())["status"].(map[string]any)
	if diff := cmp.Diff([]any{"web", "jobs"}, st["pools"].([]any)[0].(map[string]any)["stacks"]); diff != "" {
		t.Errorf("the shared pool serves every stack: -want, +got:\n%s", diff)
	}

	// Reordering the stacks, as a second writer might, renders the same pool.
	reordered := strings.Replace(orgSpec, `[{"name":"web"},{"name":"jobs"}]`, `[{"name":"jobs"},{"name":"web"}]`, 1)
	again := fntest.Desired(t, run(t, newRequest(t, input, xr(reordered), nil), cluster{refNodeClass, refNodePool}))
	if diff := cmp.Diff(got, again); diff != "" {
		t.Errorf("the shared pool depends on stack order: -first, +reordered:\n%s", diff)
	}
}

func TestCloneOfCloneIsUnchanged(t *testing.T) {
	first := fntest.Desired(t, run(t, newRequest(t, input, xr(stackSpec), nil), cluster{refNodeClass, refNodePool}))

	// Use kiso's own output as the reference: rendering it again must change
	// nothing but the name it points at, which is the same name here.
	np, nc := fntest.ToJSON(t, first["nodepool-kiso-acme.web"]), fntest.ToJSON(t, first["nodeclass-kiso-acme.web"])
	np = strings.Replace(np, `"name":"kiso-acme.web"`, `"name":"default"`, 1)
	nc = strings.Replace(nc, `"name":"kiso-acme.web"`, `"name":"default"`, 1)
	// The platform marks it a reference.
	np = strings.Replace(np, `"labels":{`, `"labels":{"kiso.dev/reference":"true",`, 1)
	nc = strings.Replace(nc, `"labels":{`, `"labels":{"kiso.dev/reference":"true",`, 1)
	second := fntest.Desired(t, run(t, newRequest(t, input, xr(stackSpec), nil), cluster{nc, np}))
	for _, name := range []string{"nodepool-kiso-acme.web", "nodeclass-kiso-acme.web"} {
		// The revision is the reference's, and this reference's specs are
		// the clone's, not the platform's: only the revision differs.
		for _, o := range []map[string]any{first[name], second[name]} {
			delete(o["metadata"].(map[string]any)["annotations"].(map[string]any), "kiso.dev/revision")
		}
		if diff := cmp.Diff(first[name], second[name]); diff != "" {
			t.Errorf("%s changed when rendered from its own output: -first, +second:\n%s", name, diff)
		}
	}
}

func TestRenderIsDeterministic(t *testing.T) {
	a := run(t, newRequest(t, input, xr(stackSpec), nil), cluster{refNodeClass, refNodePool})
	b := run(t, newRequest(t, input, xr(stackSpec), nil), cluster{refNodeClass, refNodePool})
	if diff := cmp.Diff(a, b, protocmp.Transform()); diff != "" {
		t.Errorf("two renders of the same request differ: -a, +b:\n%s", diff)
	}
}

func TestKeyDomainComesFromInput(t *testing.T) {
	// The references carry kiso.dev/reference, not formance.com/reference: the input lists them.
	in := `{"apiVersion":"isolation.fn.kiso.dev/v1alpha1","kind":"Input","keyDomain":"formance.com","references":{"nodeClasses":["default"],"nodePools":["default"]}}`
	got := fntest.Desired(t, run(t, newRequest(t, in, xr(orgSpec), nil), cluster{refNodeClass, refNodePool}))
	taints := fntest.Dig(got["nodepool-kiso-acme"], "spec", "template", "spec", "taints").([]any)
	if key := taints[len(taints)-1].(map[string]any)["key"]; key != "formance.com/organization" {
		t.Errorf("organization taint key: want formance.com/organization, got %v", key)
	}
}

func TestPoolNamesAreShortenedToFitALabel(t *testing.T) {
	org := strings.Repeat("o", 40)
	spec := `{"organization":"` + org + `","isolation":"stack","stacks":[{"name":"` + strings.Repeat("s", 40) + `"}],
		"nodeClassRef":{"name":"default"},"nodePoolRef":{"name":"default"}}`
	got := fntest.Desired(t, run(t, newRequest(t, input, xr(spec), nil), cluster{refNodeClass, refNodePool}))
	for name, o := range got {
		n := fntest.Dig(o, "metadata", "name").(string)
		if len(n) > 63 {
			t.Errorf("%s: name %q has %d characters, more than 63", name, n, len(n))
		}
		if !strings.HasPrefix(n, "kiso-"+org+"-sssss") {
			t.Errorf("%s: name %q does not keep a readable prefix", name, n)
		}
	}
}

func TestRackspaceNodeClassIsClonedWithoutTags(t *testing.T) {
	ref := `{"apiVersion":"karpenter.rackspace.com/v1","kind":"RackspaceSpotNodeClass","metadata":{"name":"spot","labels":{"kiso.dev/reference":"true"}},"spec":{"bidPercentile":"P80"}}`
	spec := `{"organization":"acme","nodeClassRef":{"apiVersion":"karpenter.rackspace.com/v1","kind":"RackspaceSpotNodeClass","name":"spot"},"nodePoolRef":{"name":"default"}}`
	rsp := run(t, newRequest(t, input, xr(spec), nil), cluster{ref, refNodePool})
	fntest.AssertNoFatal(t, rsp)
	got := fntest.Desired(t, rsp)
	if diff := cmp.Diff(map[string]any{"bidPercentile": "P80"}, got["nodeclass-kiso-acme"]["spec"]); diff != "" {
		t.Errorf("RackspaceSpotNodeClass spec: -want, +got:\n%s", diff)
	}
	wantRef := map[string]any{"group": "karpenter.rackspace.com", "kind": "RackspaceSpotNodeClass", "name": "kiso-acme"}
	if diff := cmp.Diff(wantRef, fntest.Dig(got["nodepool-kiso-acme"], "spec", "template", "spec", "nodeClassRef")); diff != "" {
		t.Errorf("NodePool nodeClassRef: -want, +got:\n%s", diff)
	}
}

func TestPoolIsReadyWhenKarpenterSaysSo(t *testing.T) {
	rsp := run(t, newRequest(t, input, xr(orgSpec), composedOrg(t, true)), cluster{refNodeClass, refNodePool})
	for name, r := range rsp.GetDesired().GetResources() {
		if r.GetReady() != fnv1.Ready_READY_TRUE {
			t.Errorf("%s: want READY_TRUE, got %s", name, r.GetReady())
		}
	}
	st := fntest.AsMap(t, rsp.GetDesired().GetComposite().GetResource())["status"].(map[string]any)
	if r := st["pools"].([]any)[0].(map[string]any)["ready"]; r != true {
		t.Errorf("status.pools[0].ready: want true, got %v", r)
	}
}

func TestNewPoolIsNotReady(t *testing.T) {
	rsp := run(t, newRequest(t, input, xr(orgSpec), nil), cluster{refNodeClass, refNodePool})
	for name, r := range rsp.GetDesired().GetResources() {
		// The lock was composed alone first, and is observed by now (see run).
		if name == string(organizationLockResource) {
			continue
		}
		if r.GetReady() != fnv1.Ready_READY_FALSE {
			t.Errorf("%s: want READY_FALSE before Karpenter reports, got %s", name, r.GetReady())
		}
	}
}

// composedOrg returns everything orgSpec composes, as Crossplane would
// observe it: NodePools and NodeClasses report Ready when ready is true.
func composedOrg(t *testing.T, ready bool) map[string]string {
	t.Helper()
	return composedIn(t, orgSpec, cluster{refNodeClass, refNodePool, namespace("acme-web"), namespace("acme-jobs")}, ready)
}

// composedIn returns everything spec composes in world, as Crossplane would
// observe it (see observedAfter).
func composedIn(t *testing.T, spec string, world cluster, ready bool) map[string]string {
	t.Helper()
	return composedOf(t, xr(spec), world, ready)
}

// composedOf is composedIn for a whole XR, as JSON.
func composedOf(t testing.TB, xrJSON string, world cluster, ready bool) map[string]string {
	t.Helper()
	// A namespace's Role follows its ConfigMap: render again with that composed.
	first := observedAfter(t, run(t, newRequest(t, input, xrJSON, nil), world), false)
	return observedAfter(t, run(t, newRequest(t, input, xrJSON, first), world), ready)
}

// observedAfter is what Crossplane observes once rsp's desired objects exist:
// each reports Ready when ready is true, except the placement policies, which
// report no status.
func observedAfter(t testing.TB, rsp *fnv1.RunFunctionResponse, ready bool) map[string]string {
	t.Helper()
	out := map[string]string{}
	for name, o := range fntest.Desired(t, rsp) {
		if ready && !strings.HasPrefix(name, "placement-") {
			o["status"] = readyStatus()
		}
		out[name] = fntest.ToJSON(t, o)
	}
	return out
}

func assertConditions(t *testing.T, rsp *fnv1.RunFunctionResponse, want map[string]fnv1.Status) {
	t.Helper()
	got := map[string]fnv1.Status{}
	for _, c := range rsp.GetConditions() {
		got[c.GetType()] = c.GetStatus()
		if c.GetTarget() != fnv1.Target_TARGET_COMPOSITE_AND_CLAIM {
			t.Errorf("condition %s: want it on the claim too, target %s", c.GetType(), c.GetTarget())
		}
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("conditions: -want, +got:\n%s", diff)
	}
}

// readyStatus is the status of a composed object its provider or Karpenter reports Ready.
func readyStatus() map[string]any {
	return map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}}
}
