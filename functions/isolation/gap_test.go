package main

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kiso-dev/kiso/functions/internal/fntest"
)

// everyKindSpec composes every kind kiso renders: a Dedicated identity (Role,
// InstanceProfile, AccessEntry, policy attachments), pools in stack isolation,
// and a ConfigMap, Role and RoleBinding per namespace.
var everyKindSpec = strings.Replace(orgSpec, `"nodeClassRef"`, `"clusterRef":{"name":"prod"},"nodeRole":"Dedicated","isolation":"stack","placement":{"inject":true},"nodeClassRef"`, 1)

// asObserved is what Crossplane sends back for an object it applied: the
// object as rendered plus what the API server, Crossplane and the provider
// write (identity, owner, their own labels and annotations, status).
func asObserved(t *testing.T, name string, rendered map[string]any) string {
	t.Helper()
	o := fntest.JSONMap(t, fntest.ToJSON(t, rendered))
	m := o["metadata"].(map[string]any)
	m["uid"], m["resourceVersion"], m["generation"] = "uid-"+name, "4242", 3
	m["finalizers"] = []any{"finalizer.managedresource.crossplane.io"}
	m["ownerReferences"] = []any{map[string]any{"apiVersion": "kiso.dev/v1alpha1", "kind": "XKarpenterIsolation", "name": "acme-x1", "uid": "xr-uid", "controller": true}}
	labels, _ := m["labels"].(map[string]any)
	if labels == nil {
		labels = map[string]any{}
	}
	labels["crossplane.io/composite"], labels["crossplane.io/claim-name"] = "acme-x1", "acme"
	m["labels"] = labels
	annotations, _ := m["annotations"].(map[string]any)
	if annotations == nil {
		annotations = map[string]any{}
	}
	annotations["crossplane.io/composition-resource-name"] = name
	annotations["crossplane.io/external-create-succeeded"] = "2026-12-01T00:00:00Z"
	m["annotations"] = annotations
	o["status"] = map[string]any{"conditions": []any{
		map[string]any{"type": "Ready", "status": "True"}, map[string]any{"type": "Synced", "status": "True"},
	}}
	return fntest.ToJSON(t, o)
}

// TestAGapKeepsExactlyWhatWasRendered renders an organization, feeds the
// result back as Crossplane observes it, then opens each gap kiso must ride
// out: every kept object must be the rendered one, field for field, for every
// kind kiso composes.
func TestAGapKeepsExactlyWhatWasRendered(t *testing.T) {
	world := cluster{refNodeClass, refNodePool, clusterXR, namespace("acme-web"), namespace("acme-jobs")}
	first := run(t, newRequest(t, input, xr(everyKindSpec), nil), world)
	fntest.AssertNoFatal(t, first)
	// A namespace's Role and RoleBinding follow its composed ConfigMap.
	composedOnce := map[string]string{}
	for name, o := range fntest.Desired(t, first) {
		composedOnce[name] = asObserved(t, name, o)
	}
	second := run(t, newRequest(t, input, xr(everyKindSpec), composedOnce), world)
	fntest.AssertNoFatal(t, second)
	rendered := fntest.Desired(t, first)
	for name, o := range fntest.Desired(t, second) {
		if strings.HasPrefix(name, "placement-role") {
			rendered[name] = o
		}
	}

	kinds := map[string]bool{}
	observed := make(map[string]string, len(rendered))
	for name, o := range rendered {
		kinds[o["kind"].(string)] = true
		observed[name] = asObserved(t, name, o)
	}
	for _, kind := range []string{"NodePool", "EC2NodeClass", "Role", "InstanceProfile", "AccessEntry", "RolePolicyAttachment", "ConfigMap"} {
		if !kinds[kind] {
			t.Fatalf("the fixture composes no %s; the test would not cover it (composed: %v)", kind, slices.Sorted(maps.Keys(kinds)))
		}
	}

	noStatus := `{"apiVersion":"kiso.dev/v1alpha1","kind":"XKarpenterCluster","metadata":{"name":"prod"},"spec":{"clusterName":"prod-eu"}}`
	gaps := map[string]struct {
		spec  string
		world cluster
	}{
		"ReferenceNodePoolDeleted":  {everyKindSpec, cluster{refNodeClass, clusterXR, namespace("acme-web"), namespace("acme-jobs")}},
		"ReferenceNodeClassDeleted": {everyKindSpec, cluster{refNodePool, clusterXR, namespace("acme-web"), namespace("acme-jobs")}},
		"ClusterDeleted":            {everyKindSpec, cluster{refNodeClass, refNodePool, namespace("acme-web"), namespace("acme-jobs")}},
		"ClusterStatusRemoved":      {everyKindSpec, cluster{refNodeClass, refNodePool, noStatus, namespace("acme-web"), namespace("acme-jobs")}},
		"ClusterRefBroken":          {strings.Replace(everyKindSpec, `"clusterRef":{"name":"prod"}`, `"clusterRef":{"name":"gone"}`, 1), world},
	}
	for name, gap := range gaps {
		t.Run(name, func(t *testing.T) {
			rsp := run(t, newRequest(t, input, xr(gap.spec), observed), gap.world)
			fntest.AssertNoFatal(t, rsp)
			kept := fntest.Desired(t, rsp)
			if diff := cmp.Diff(slices.Sorted(maps.Keys(rendered)), slices.Sorted(maps.Keys(kept))); diff != "" {
				t.Errorf("kept objects: -rendered, +kept:\n%s", diff)
			}
			for name, o := range rendered {
				if diff := cmp.Diff(o, kept[name]); diff != "" {
					t.Errorf("kept %s (%s) is not what was rendered: -rendered, +kept:\n%s", name, o["kind"], diff)
				}
			}
		})
	}
}

// TestRetiredPoolsAreKeptAsRendered switches isolation mode: the retired
// pools, held until the new ones are Ready, must stay exactly as rendered.
func TestRetiredPoolsAreKeptAsRendered(t *testing.T) {
	world := cluster{refNodeClass, refNodePool, clusterXR, namespace("acme-web"), namespace("acme-jobs")}
	first := run(t, newRequest(t, input, xr(everyKindSpec), nil), world)
	rendered := fntest.Desired(t, first)
	observed := make(map[string]string, len(rendered))
	for name, o := range rendered {
		observed[name] = asObserved(t, name, o)
	}

	switched := strings.Replace(everyKindSpec, `"isolation":"stack",`, ``, 1)
	rsp := run(t, newRequest(t, input, xr(switched), observed), world)
	fntest.AssertNoFatal(t, rsp)
	got := fntest.Desired(t, rsp)
	for _, name := range []string{"nodepool-kiso-acme.web", "nodeclass-kiso-acme.web", "nodepool-kiso-acme.jobs", "nodeclass-kiso-acme.jobs"} {
		if diff := cmp.Diff(rendered[name], got[name]); diff != "" {
			t.Errorf("retired %s is not kept as rendered: -rendered, +kept:\n%s", name, diff)
		}
	}
}
