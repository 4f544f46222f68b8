package main

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/fntest"
)

// A platform's reference pair for GPU capacity: its own labels, a taint only pods asking for a GPU tolerate,
// and a limit of its own.
const (
	gpuNodeClass = `{"apiVersion":"karpenter.k8s.aws/v1","kind":"EC2NodeClass","metadata":{"name":"gpu","uid":"ref-gpu-nc","labels":{"kiso.dev/reference":"true"}},
		"spec":{"role":"KarpenterNodeRole-prod","amiSelectorTerms":[{"alias":"bottlerocket@latest"}],
		"subnetSelectorTerms":[{"tags":{"karpenter.sh/discovery":"prod"}}],
		"securityGroupSelectorTerms":[{"tags":{"karpenter.sh/discovery":"prod"}}],
		"tags":{"team":"ml-platform"}}}`
	gpuNodePool = `{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"gpu","uid":"ref-gpu-np","labels":{"kiso.dev/reference":"true"}},
		"spec":{"template":{"metadata":{"labels":{"tier":"gpu"}},"spec":{
		"nodeClassRef":{"group":"karpenter.k8s.aws","kind":"EC2NodeClass","name":"gpu"},
		"requirements":[{"key":"karpenter.k8s.aws/instance-category","operator":"In","values":["g"]}],
		"taints":[{"key":"nvidia.com/gpu","value":"true","effect":"NoSchedule"}]}},
		"limits":{"cpu":200}}}`
	// armNodePool clones the default NodeClass with other requirements.
	armNodePool = `{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"arm","uid":"ref-arm-np","labels":{"kiso.dev/reference":"true"}},
		"spec":{"template":{"spec":{"nodeClassRef":{"group":"karpenter.k8s.aws","kind":"EC2NodeClass","name":"default"},
		"requirements":[{"key":"kubernetes.io/arch","operator":"In","values":["arm64"]}]}}}}`
)

// gpuClass is spec.classes with a gpu class of the gpu reference pair.
const gpuClass = `"classes":[{"name":"gpu","nodeClassRef":{"name":"gpu"},"nodePoolRef":{"name":"gpu"},"pool":{"weight":10}}]`

// orgSpecWith is orgSpec with more fields.
func orgSpecWith(fields string) string {
	return strings.TrimSuffix(strings.TrimSpace(orgSpec), "}") + "," + fields + "}"
}

func TestAClassGetsAPoolClonedFromItsOwnReference(t *testing.T) {
	spec := orgSpecWith(gpuClass)
	rsp := run(t, newRequest(t, input, xr(spec), nil), cluster{refNodeClass, refNodePool, gpuNodeClass, gpuNodePool})
	fntest.AssertNoFatal(t, rsp)
	got := fntest.Desired(t, rsp)
	if diff := cmp.Diff([]string{"nodeclass-kiso-acme", "nodeclass-kiso.acme.gpu", "nodepool-kiso-acme", "nodepool-kiso.acme.gpu", "organization"}, slices.Sorted(maps.Keys(got))); diff != "" {
		t.Fatalf("a pool per class: -want, +got:\n%s", diff)
	}
	np, nc := got["nodepool-kiso.acme.gpu"], got["nodeclass-kiso.acme.gpu"]
	for _, c := range []struct {
		what string
		want any
		path []string
		of   map[string]any
	}{
		{"the class's reference pair, in the rollout annotation", "EC2NodeClass.v1.karpenter.k8s.aws/gpu,NodePool/gpu", []string{"metadata", "annotations", "kiso.dev/cloned-from"}, np},
		{"its own NodeClass", map[string]any{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "kiso.acme.gpu"}, []string{"spec", "template", "spec", "nodeClassRef"}, np},
		{"the reference's taint kept, the organization's added", []any{
			map[string]any{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"},
			map[string]any{"key": "kiso.dev/organization", "value": "acme", "effect": "NoSchedule"},
		}, []string{"spec", "template", "spec", "taints"}, np},
		{"the reference's labels kept, the organization's identity and the class added", map[string]any{
			"tier": "gpu", "kiso.dev/organization": "acme", "kiso.dev/customer": "acme-corp", "kiso.dev/class": "gpu",
			"node-restriction.kubernetes.io/kiso.dev.organization": "acme",
		}, []string{"spec", "template", "metadata", "labels"}, np},
		{"the class's settings", float64(10), []string{"spec", "weight"}, np},
		{"the class reference's limits, not the default class's", map[string]any{"cpu": float64(200)}, []string{"spec", "limits"}, np},
		{"the cost tags, the class's too", map[string]any{"team": "ml-platform", "kiso.dev/organization": "acme", "kiso.dev/customer": "acme-corp", "kiso.dev/class": "gpu"}, []string{"spec", "tags"}, nc},
		{"the class reference's NodeClass", []any{map[string]any{"alias": "bottlerocket@latest"}}, []string{"spec", "amiSelectorTerms"}, nc},
	} {
		if diff := cmp.Diff(c.want, fntest.Dig(c.of, c.path...)); diff != "" {
			t.Errorf("the gpu pool has %s: -want, +got:\n%s", c.what, diff)
		}
	}

	// Adding a class changes nothing of the default class's pool: its nodes stay.
	without := fntest.Desired(t, run(t, newRequest(t, input, xr(orgSpec), nil), cluster{refNodeClass, refNodePool}))
	for _, name := range []string{"nodepool-kiso-acme", "nodeclass-kiso-acme"} {
		if diff := cmp.Diff(without[name], got[name]); diff != "" {
			t.Errorf("%s changed when the organization added a class: -without, +with:\n%s", name, diff)
		}
	}
}

func TestStackIsolationGivesEachStackAPoolPerClassItUses(t *testing.T) {
	spec := `{"organization":"acme","isolation":"stack",
		"stacks":[{"name":"web"},{"name":"jobs","classes":["arm"]},{"name":"batch","classes":[]}],
		"nodeClassRef":{"name":"default"},"nodePoolRef":{"name":"default"},
		"classes":[{"name":"gpu","nodeClassRef":{"name":"gpu"},"nodePoolRef":{"name":"gpu"}},{"name":"arm","nodeClassRef":{"name":"default"},"nodePoolRef":{"name":"arm"}}]}`
	rsp := run(t, newRequest(t, input, xr(spec), nil), cluster{refNodeClass, refNodePool, gpuNodeClass, gpuNodePool, armNodePool})
	fntest.AssertNoFatal(t, rsp)
	st := fntest.AsMap(t, rsp.GetDesired().GetComposite().GetResource())["status"].(map[string]any)
	want := "kiso-acme.web,kiso.acme.web.gpu,kiso.acme.web.arm,kiso-acme.jobs,kiso.acme.jobs.arm,kiso-acme.batch"
	if got := st["poolNames"]; got != want {
		t.Errorf("pools: want %s (web every class, jobs arm, batch none), got %v", want, got)
	}
	np := fntest.Desired(t, rsp)["nodepool-kiso.acme.web.gpu"]
	wantTaints := []any{
		map[string]any{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"},
		map[string]any{"key": "kiso.dev/organization", "value": "acme", "effect": "NoSchedule"},
		map[string]any{"key": "kiso.dev/stack", "value": "web", "effect": "NoSchedule"},
	}
	if diff := cmp.Diff(wantTaints, fntest.Dig(np, "spec", "template", "spec", "taints")); diff != "" {
		t.Errorf("a stack's class pool is tainted for its organization and stack, as its pool of the default class: -want, +got:\n%s", diff)
	}
	// Each stack's status says what its pods select to run on each class it uses.
	wantClasses := []any{map[string]any{"name": "arm", "pool": "kiso.acme.jobs.arm", "nodeSelector": map[string]any{
		"kiso.dev/class": "arm", "node-restriction.kubernetes.io/kiso.dev.organization": "acme", "node-restriction.kubernetes.io/kiso.dev.stack": "jobs",
	}}}
	if diff := cmp.Diff(wantClasses, st["stacks"].([]any)[1].(map[string]any)["classes"]); diff != "" {
		t.Errorf("stack jobs's classes in status: -want, +got:\n%s", diff)
	}
	if _, ok := st["stacks"].([]any)[2].(map[string]any)["classes"]; ok {
		t.Errorf("stack batch uses no class, but its status lists some")
	}
}

func TestAStackChoosesItsClasses(t *testing.T) {
	spec := v1alpha1.XKarpenterIsolationSpec{Classes: []v1alpha1.CapacityClass{{Name: "gpu"}, {Name: "arm"}, {Name: "spot"}}}
	for name, tc := range map[string]struct {
		reason string
		listed []string
		want   []string
	}{
		"UnsetIsEveryClass": {reason: "a stack that lists no class gets a pool of every class", listed: nil, want: []string{"gpu", "arm", "spot"}},
		"EmptyIsNone":       {reason: "classes: [] is no class but the default", listed: []string{}, want: []string{}},
		"ListedInSpecOrder": {reason: "a stack's classes come in the order of spec.classes, whatever order it lists them in", listed: []string{"spot", "gpu"}, want: []string{"gpu", "spot"}},
	} {
		t.Run(name, func(t *testing.T) {
			got := []string{}
			for _, c := range stackClasses(spec, v1alpha1.Stack{Name: "web", Classes: tc.listed}) {
				got = append(got, c.Name)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestAClassOfAnotherProviderIsClonedWithoutTags(t *testing.T) {
	kwokNodeClass := `{"apiVersion":"karpenter.kwok.sh/v1alpha1","kind":"KWOKNodeClass","metadata":{"name":"kwok","labels":{"kiso.dev/reference":"true"}},"spec":{}}`
	spec := orgSpecWith(`"classes":[{"name":"sim","nodeClassRef":{"apiVersion":"karpenter.kwok.sh/v1alpha1","kind":"KWOKNodeClass","name":"kwok"},"nodePoolRef":{"name":"gpu"}}],"tags":{"cost-center":"42"}`)
	rsp := run(t, newRequest(t, input, xr(spec), nil), cluster{refNodeClass, refNodePool, kwokNodeClass, gpuNodePool})
	fntest.AssertNoFatal(t, rsp)
	got := fntest.Desired(t, rsp)
	if diff := cmp.Diff(map[string]any{}, got["nodeclass-kiso.acme.sim"]["spec"]); diff != "" {
		t.Errorf("a KWOKNodeClass has no tags: -want, +got:\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"group": "karpenter.kwok.sh", "kind": "KWOKNodeClass", "name": "kiso.acme.sim"}, fntest.Dig(got["nodepool-kiso.acme.sim"], "spec", "template", "spec", "nodeClassRef")); diff != "" {
		t.Errorf("the class's NodePool points at its own kind of NodeClass: -want, +got:\n%s", diff)
	}
	if tags := fntest.Dig(got["nodeclass-kiso-acme"], "spec", "tags", "cost-center"); tags != "42" {
		t.Errorf("the default class's EC2NodeClass keeps the organization's tags, got cost-center %v", tags)
	}
}
