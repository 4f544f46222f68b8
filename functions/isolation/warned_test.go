package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/fntest"
)

// pod is a pod of a namespace, with the placement fields given as JSON (""
// for none) and a phase.
func pod(namespace, name, placementFields, phase string) string {
	spec := `{"containers":[{"name":"app","image":"app"}]`
	if placementFields != "" {
		spec += "," + placementFields
	}
	return fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":%q,"namespace":%q},"spec":%s},"status":{"phase":%q}}`, name, namespace, spec, phase)
}

// TestWarnModeCountsWhatEnforceWouldRefuse: in Warn mode the claim counts the
// pods of the organization's namespaces that select none of its pools, as
// the pools policy reads a pod, so the platform knows when Enforce refuses
// nothing.
func TestWarnModeCountsWhatEnforceWouldRefuse(t *testing.T) {
	const webSelector = `"nodeSelector":{"node-restriction.kubernetes.io/kiso.dev.organization":"acme","node-restriction.kubernetes.io/kiso.dev.stack":"web"}`
	affinity := func(org, stack string) string {
		return `"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[` +
			`{"key":"node-restriction.kubernetes.io/kiso.dev.organization","operator":"In","values":["` + org + `"]},` +
			`{"key":"node-restriction.kubernetes.io/kiso.dev.stack","operator":"In","values":["` + stack + `"]}]}]}}}`
	}
	world := cluster{refNodeClass, refNodePool, clusterPolicy, namespace("acme-web"), namespace("batch"),
		pod("acme-web", "placed", webSelector, "Running"),
		pod("acme-web", "by-affinity", affinity("acme", "web"), "Running"),
		pod("acme-web", "bare", "", "Pending"),
		pod("acme-web", "done", "", "Succeeded"),
		pod("acme-web", "other-stack", affinity("acme", "jobs"), "Running"),
		pod("batch", "web-selector-in-jobs", webSelector, "Running"),
		pod("elsewhere", "not-the-organizations", "", "Running"),
		// Given by the platform, listed by no stack: no Role grants its pods anything, so every pod still running counts.
		namespace("acme-tools"),
		pod("acme-tools", "tool", webSelector, "Running"),
		pod("acme-tools", "finished", "", "Succeeded"),
		// Given and exempt: its pods are admitted without a grant, and not counted.
		`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"acme-agents","labels":{"kiso.dev/organization":"acme","kiso.dev/placement-exempt":"true"}}}`,
		pod("acme-agents", "agent", "", "Running"),
	}
	warnSpec := xr(placementSpec(v1alpha1.IsolationStack, &v1alpha1.Placement{Mode: v1alpha1.PlacementWarn}))
	first := run(t, newRequest(t, input, warnSpec, nil), world)
	fntest.AssertNoFatal(t, first)
	// Crossplane has composed the namespaces' Roles: the policies are in force.
	observed := map[string]string{}
	for name, o := range fntest.Desired(t, first) {
		observed[name] = fntest.ToJSON(t, o)
	}
	rsp := run(t, newRequest(t, input, warnSpec, observed), world)
	fntest.AssertNoFatal(t, rsp)
	st := fntest.AsMap(t, rsp.GetDesired().GetComposite().GetResource())["status"].(map[string]any)
	if diff := cmp.Diff(float64(4), st["warnedPods"]); diff != "" {
		t.Errorf("status.warnedPods: -want, +got:\n%s", diff)
	}
	c := conditionOf(t, rsp, TypePlacementEnforced)
	if want := "4 pods in its namespaces select no pool of the organization, so Enforce would refuse them: acme-tools/tool, acme-web/bare, acme-web/other-stack, batch/web-selector-in-jobs"; !strings.HasSuffix(c.GetMessage(), want) {
		t.Errorf("PlacementEnforced message %q, want it to end %q", c.GetMessage(), want)
	}

	// Enforce reads no pod.
	rsp = run(t, newRequest(t, input, xr(placementSpec(v1alpha1.IsolationStack, nil)), nil), world)
	for name := range rsp.GetRequirements().GetResources() {
		if strings.HasPrefix(name, requireWarnedPodsPrefix) {
			t.Errorf("Enforce mode asks for pods: %s", name)
		}
	}
	if st := fntest.AsMap(t, rsp.GetDesired().GetComposite().GetResource())["status"].(map[string]any); st["warnedPods"] != nil {
		t.Errorf("Enforce mode reports warnedPods %v", st["warnedPods"])
	}
}
