package main

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/fnstate"
)

func TestReportUsage(t *testing.T) {
	pools := []pool{{Name: "kiso-acme.api"}, {Name: "kiso-acme.web"}}
	cases := map[string]struct {
		reason   string
		observed map[string]map[string]any // pool name -> observed NodePool
		want     []v1alpha1.PoolStatus
		usage    *v1alpha1.Usage
	}{
		"CountedByKarpenter": {
			reason: "A pool reports its NodePool's node count, CPU and memory in use, and its limits, as the NodePool holds them; no total until every pool is counted.",
			observed: map[string]map[string]any{"kiso-acme.api": {
				"spec":   map[string]any{"limits": map[string]any{"cpu": float64(16), "memory": "64Gi"}},
				"status": map[string]any{"nodes": float64(2), "resources": map[string]any{"cpu": "4", "memory": "8Gi", "pods": "64", "nodes": "2"}},
			}},
			want: []v1alpha1.PoolStatus{
				{Name: "kiso-acme.api", Nodes: ptr.To[int64](2), Resources: map[string]string{"cpu": "4", "memory": "8Gi"}, Limits: map[string]string{"cpu": "16", "memory": "64Gi"}},
				{Name: "kiso-acme.web"},
			},
		},
		"EveryPoolCounted": {
			reason: "With every pool counted, the organization's usage sums them; a limit only one pool has is not summed (the other pool is uncapped).",
			observed: map[string]map[string]any{
				"kiso-acme.api": {
					"spec":   map[string]any{"limits": map[string]any{"cpu": float64(16), "memory": "64Gi"}},
					"status": map[string]any{"nodes": int64(2), "resources": map[string]any{"cpu": "4", "memory": "8Gi"}},
				},
				"kiso-acme.web": {
					"spec":   map[string]any{"limits": map[string]any{"cpu": "8"}},
					"status": map[string]any{"nodes": int64(1), "resources": map[string]any{"cpu": "500m", "memory": "512Mi"}},
				},
			},
			want: []v1alpha1.PoolStatus{
				{Name: "kiso-acme.api", Nodes: ptr.To[int64](2), Resources: map[string]string{"cpu": "4", "memory": "8Gi"}, Limits: map[string]string{"cpu": "16", "memory": "64Gi"}},
				{Name: "kiso-acme.web", Nodes: ptr.To[int64](1), Resources: map[string]string{"cpu": "500m", "memory": "512Mi"}, Limits: map[string]string{"cpu": "8"}},
			},
			usage: &v1alpha1.Usage{Nodes: 3, Resources: map[string]string{"cpu": "4500m", "memory": "8704Mi"}, Limits: map[string]string{"cpu": "24"}},
		},
		"NotCountedYet": {
			reason: "A NodePool Karpenter has not counted reports its limits only; an unobserved pool reports nothing.",
			observed: map[string]map[string]any{"kiso-acme.api": {
				"spec": map[string]any{"limits": map[string]any{"cpu": "8"}},
			}},
			want: []v1alpha1.PoolStatus{
				{Name: "kiso-acme.api", Limits: map[string]string{"cpu": "8"}},
				{Name: "kiso-acme.web"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			observed := map[resource.Name]resource.ObservedComposed{}
			for _, p := range pools {
				if obj, ok := tc.observed[p.Name]; ok {
					observed[nodePoolResourceName(p)] = resource.ObservedComposed{Resource: &composed.Unstructured{}}
					observed[nodePoolResourceName(p)].Resource.Object = obj
				}
			}
			st := v1alpha1.XKarpenterIsolationStatus{Pools: []v1alpha1.PoolStatus{{Name: "kiso-acme.api"}, {Name: "kiso-acme.web"}}}
			reportUsage(&st, v1alpha1.XKarpenterIsolationSpec{}, fnstate.ObservedOf(observed), pools)
			if diff := cmp.Diff(tc.want, st.Pools); diff != "" {
				t.Errorf("%s\nreportUsage() pools: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.usage, st.Usage); diff != "" {
				t.Errorf("%s\nreportUsage() usage: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestClassesAndTheOrganizationsLimitAreReported(t *testing.T) {
	spec := v1alpha1.XKarpenterIsolationSpec{
		Classes: []v1alpha1.CapacityClass{{Name: "gpu"}, {Name: "arm"}},
		Limits:  map[string]intstr.IntOrString{"cpu": intstr.FromInt32(16), "nodes": intstr.FromInt32(6)},
	}
	pools := []pool{{Name: "kiso-acme"}, {Name: "kiso.acme.gpu", Class: capacityClass{Name: "gpu"}}}
	nodePool := func(limitCPU string, nodes int64, cpu string) *composed.Unstructured {
		u := composed.New()
		u.Object = map[string]any{"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
			"spec":   map[string]any{"limits": map[string]any{"cpu": limitCPU, "memory": "64Gi"}},
			"status": map[string]any{"nodes": nodes, "resources": map[string]any{"cpu": cpu, "memory": "8Gi", "nodes": fmt.Sprint(nodes)}}}
		return u
	}
	observed := fnstate.ObservedOf(map[resource.Name]resource.ObservedComposed{
		nodePoolResourceName(pools[0]): {Resource: nodePool("14", 2, "4")},
		nodePoolResourceName(pools[1]): {Resource: nodePool("12", 1, "2")},
	})
	st := v1alpha1.XKarpenterIsolationStatus{Pools: []v1alpha1.PoolStatus{{Name: "kiso-acme"}, {Name: "kiso.acme.gpu", Class: "gpu"}}}
	reportUsage(&st, spec, observed, pools)
	// The organization's total against its limit: spec.limits, not the sum of the pools' limits, which each
	// count what the organization has left.
	want := &v1alpha1.Usage{Nodes: 3, Resources: map[string]string{"cpu": "6", "memory": "16Gi"}, Limits: map[string]string{"cpu": "16", "memory": "128Gi", "nodes": "6"}}
	if diff := cmp.Diff(want, st.Usage); diff != "" {
		t.Errorf("status.usage: -want, +got:\n%s", diff)
	}
	// Each class's nodes and CPUs, against the most its pools may hold now; a class without pools is left out.
	if want := "default(2n,cpu=4/14),gpu(1n,cpu=2/12)"; st.Classes != want {
		t.Errorf("status.classes = %q, want %q", st.Classes, want)
	}
}
