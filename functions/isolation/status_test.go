package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
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
			reportUsage(&st, fnstate.ObservedOf(observed), pools)
			if diff := cmp.Diff(tc.want, st.Pools); diff != "" {
				t.Errorf("%s\nreportUsage() pools: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.usage, st.Usage); diff != "" {
				t.Errorf("%s\nreportUsage() usage: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
