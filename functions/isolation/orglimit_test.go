package main

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	k8sresource "k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/kiso-dev/kiso/functions/internal/fntest"
)

func TestEachPoolMayGrowToWhatTheOrganizationHasLeft(t *testing.T) {
	q := k8sresource.MustParse
	this := pool{Name: "kiso-acme"}
	cases := map[string]struct {
		reason string
		limits map[string]k8sresource.Quantity
		// used is what the organization's NodePools hold, this one's included.
		used map[resource.Name]map[string]k8sresource.Quantity
		spec string
		want map[string]any
	}{
		"OwnLimitBelowWhatIsLeftIsKept": {
			reason: "a pool's own limit is kept, as written, where the organization has more left",
			limits: map[string]k8sresource.Quantity{"cpu": q("64")},
			used:   map[resource.Name]map[string]k8sresource.Quantity{"nodepool-kiso.acme.gpu": {"cpu": q("10")}},
			spec:   `{"limits":{"cpu":16}}`,
			want:   map[string]any{"cpu": float64(16)},
		},
		"WhatIsLeftBelowTheOwnLimit": {
			reason: "a pool may grow only to what the organization's other pools leave",
			limits: map[string]k8sresource.Quantity{"cpu": q("64"), "memory": q("256Gi")},
			used:   map[resource.Name]map[string]k8sresource.Quantity{"nodepool-kiso.acme.gpu": {"cpu": q("40"), "memory": q("64Gi")}, "nodepool-kiso.acme.arm": {"cpu": q("3500m")}},
			spec:   `{"limits":{"cpu":64,"memory":"4000Gi"}}`,
			want:   map[string]any{"cpu": "20500m", "memory": "192Gi"},
		},
		"NoOwnLimit": {
			reason: "a resource the pool does not cap is capped at what the organization has left",
			limits: map[string]k8sresource.Quantity{"nodes": q("10")},
			used:   map[resource.Name]map[string]k8sresource.Quantity{"nodepool-kiso.acme.gpu": {"nodes": q("4")}},
			spec:   `{}`,
			want:   map[string]any{"nodes": "6"},
		},
		"ItsOwnUsageIsNotCountedAgainstIt": {
			reason: "a pool's limit bounds what it holds, its own nodes included: only the others' usage is taken off",
			limits: map[string]k8sresource.Quantity{"cpu": q("64")},
			used:   map[resource.Name]map[string]k8sresource.Quantity{"nodepool-kiso-acme": {"cpu": q("60")}, "nodepool-kiso.acme.gpu": {"cpu": q("4")}},
			spec:   `{"limits":{"cpu":64}}`,
			want:   map[string]any{"cpu": "60"},
		},
		"OthersOverTheLimitLeaveNothing": {
			reason: "once the other pools hold more than the limit (they grew at once), this one may not grow at all",
			limits: map[string]k8sresource.Quantity{"cpu": q("64")},
			used:   map[resource.Name]map[string]k8sresource.Quantity{"nodepool-kiso.acme.gpu": {"cpu": q("70")}},
			spec:   `{"limits":{"cpu":64}}`,
			want:   map[string]any{"cpu": "0"},
		},
		"ResourcesNotLimitedAreLeftAlone": {
			reason: "spec.limits caps the resources it names; the pool's other limits stay",
			limits: map[string]k8sresource.Quantity{"cpu": q("64")},
			spec:   `{"limits":{"memory":"4000Gi"}}`,
			want:   map[string]any{"memory": "4000Gi", "cpu": "64"},
		},
		"AStaticPoolTakesOnlyANodeLimit": {
			reason: "Karpenter allows only limits.nodes on a static NodePool (spec.replicas)",
			limits: map[string]k8sresource.Quantity{"cpu": q("64"), "nodes": q("5")},
			used:   map[resource.Name]map[string]k8sresource.Quantity{"nodepool-kiso.acme.gpu": {"cpu": q("8"), "nodes": q("2")}},
			spec:   `{"replicas":2}`,
			want:   map[string]any{"nodes": "3"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			np := &unstructured.Unstructured{Object: map[string]any{"spec": fntest.JSONMap(t, tc.spec)}}
			reference := fntest.JSONMap(t, tc.spec)
			np.Object["spec"] = reference
			shared, _ := reference["limits"].(map[string]any)
			before := fntest.ToJSON(t, shared)
			organizationLimit{Limits: tc.limits, Used: tc.used}.limit(np, this)
			if diff := cmp.Diff(tc.want, fntest.Dig(np.Object, "spec", "limits")); diff != "" {
				t.Errorf("%s: limits -want, +got:\n%s", tc.reason, diff)
			}
			if after := fntest.ToJSON(t, shared); after != before {
				t.Errorf("limit changed the limits its spec shares with the reference: before %s, after %s", before, after)
			}
		})
	}
}

// usedBy sets a NodePool's status to what Karpenter would count its nodes hold.
func usedBy(t *testing.T, observed map[string]string, name, cpu string, nodes int) {
	t.Helper()
	o := fntest.JSONMap(t, observed[name])
	o["status"] = map[string]any{"conditions": readyStatus()["conditions"], "nodes": nodes, "resources": map[string]any{"cpu": cpu, "nodes": strconv.Itoa(nodes)}}
	observed[name] = fntest.ToJSON(t, o)
}

// classLimitSpec is organization acme with a gpu class, bounded to 64 CPUs and 10 nodes in all.
var classLimitSpec = orgSpecWith(gpuClass + `,"limits":{"cpu":64,"nodes":10}`)

func TestLimitsFollowWhatTheOtherClassHoldsAndSettle(t *testing.T) {
	world := cluster{refNodeClass, refNodePool, gpuNodeClass, gpuNodePool, namespace("acme-web"), namespace("acme-jobs")}
	observed := composedIn(t, classLimitSpec, world, true)
	limitsOf := func(observed map[string]string) map[string]any {
		got := fntest.Desired(t, run(t, newRequest(t, input, xr(classLimitSpec), observed), world))
		return map[string]any{"default": fntest.Dig(got["nodepool-kiso-acme"], "spec", "limits"), "gpu": fntest.Dig(got["nodepool-kiso.acme.gpu"], "spec", "limits")}
	}

	usedBy(t, observed, "nodepool-kiso-acme", "0", 0)
	usedBy(t, observed, "nodepool-kiso.acme.gpu", "60", 3)
	full := limitsOf(observed)
	want := map[string]any{
		"default": map[string]any{"cpu": "4", "memory": "4000Gi", "nodes": "7"},
		"gpu":     map[string]any{"cpu": "64", "nodes": "10"},
	}
	if diff := cmp.Diff(want, full); diff != "" {
		t.Errorf("gpu holds 60 of the organization's 64 CPUs and 3 of its 10 nodes: -want, +got:\n%s", diff)
	}

	// The limits depend only on what the other pools hold: applying them changes nothing more.
	again := map[string]string{}
	for name, o := range observed {
		again[name] = o
	}
	for name, o := range fntest.Desired(t, run(t, newRequest(t, input, xr(classLimitSpec), observed), world)) {
		if prev, ok := observed[name]; ok {
			o["status"] = fntest.JSONMap(t, prev)["status"]
		}
		again[name] = fntest.ToJSON(t, o)
	}
	if diff := cmp.Diff(full, limitsOf(again)); diff != "" {
		t.Errorf("a second reconcile with the limits applied and usage unchanged changed them: -first, +second:\n%s", diff)
	}

	// Capacity freed in one class is the other's to use.
	usedBy(t, observed, "nodepool-kiso.acme.gpu", "0", 0)
	usedBy(t, observed, "nodepool-kiso-acme", "8", 2)
	freed := limitsOf(observed)
	want = map[string]any{
		"default": map[string]any{"cpu": "64", "memory": "4000Gi", "nodes": "10"},
		"gpu":     map[string]any{"cpu": "56", "nodes": "8"},
	}
	if diff := cmp.Diff(want, freed); diff != "" {
		t.Errorf("gpu's nodes gone, the default class holds 8 CPUs on 2 nodes: -want, +got:\n%s", diff)
	}
}

// withRetiredGPUPool is an organization whose gpu class, composed with its pool holding 24 CPUs on 2 nodes, the
// spec (no classes, limits of 64 CPUs and 10 nodes) drops: the world, what is observed, and the spec.
func withRetiredGPUPool(t *testing.T) (cluster, map[string]string, string) {
	t.Helper()
	world := cluster{refNodeClass, refNodePool, gpuNodeClass, gpuNodePool, namespace("acme-web"), namespace("acme-jobs")}
	observed := composedIn(t, classLimitSpec, world, true)
	usedBy(t, observed, "nodepool-kiso.acme.gpu", "24", 2)
	return world, observed, orgSpecWith(`"limits":{"cpu":64,"nodes":10}`)
}

func TestARetiredPoolsNodesCountAgainstTheLimit(t *testing.T) {
	// The gpu class is dropped while its pool still holds nodes: it is kept until its nodes are gone, and
	// they are the organization's.
	world, observed, spec := withRetiredGPUPool(t)
	got := fntest.Desired(t, run(t, newRequest(t, input, xr(spec), observed), world))
	if diff := cmp.Diff(map[string]any{"cpu": "40", "memory": "4000Gi", "nodes": "8"}, fntest.Dig(got["nodepool-kiso-acme"], "spec", "limits")); diff != "" {
		t.Errorf("limits of the default class beside a retired gpu pool of 24 CPUs on 2 nodes: -want, +got:\n%s", diff)
	}
}

// TestAPoolBeingDeletedStillCountsAgainstTheLimit: once Crossplane deletes a retired NodePool it no longer observes
// it, though the NodePool and its nodes stay until they drain (PDBs, do-not-disrupt pods). kiso reads it by name
// meanwhile (it keeps the pool's NodeClass for it), and its nodes count against the organization's limit until
// they are gone.
func TestAPoolBeingDeletedStillCountsAgainstTheLimit(t *testing.T) {
	world, observed, spec := withRetiredGPUPool(t)
	deleting := fntest.JSONMap(t, observed["nodepool-kiso.acme.gpu"])
	deleting["metadata"].(map[string]any)["deletionTimestamp"] = "2026-12-07T10:00:00Z"
	deleting["metadata"].(map[string]any)["finalizers"] = []any{"foregroundDeletion"}
	delete(observed, "nodepool-kiso.acme.gpu")
	rsp := run(t, newRequest(t, input, xr(spec), observed), append(world, fntest.ToJSON(t, deleting)))
	fntest.AssertNoFatal(t, rsp)
	got := fntest.Desired(t, rsp)
	if diff := cmp.Diff(map[string]any{"cpu": "40", "memory": "4000Gi", "nodes": "8"}, fntest.Dig(got["nodepool-kiso-acme"], "spec", "limits")); diff != "" {
		t.Errorf("limits of the default class beside a gpu pool being deleted with 24 CPUs on 2 nodes: -want, +got:\n%s", diff)
	}
	// Once it is gone, its nodes no longer count.
	gone := fntest.Desired(t, run(t, newRequest(t, input, xr(spec), observed), world))
	if diff := cmp.Diff(map[string]any{"cpu": "64", "memory": "4000Gi", "nodes": "10"}, fntest.Dig(gone["nodepool-kiso-acme"], "spec", "limits")); diff != "" {
		t.Errorf("limits of the default class once the gpu pool is gone: -want, +got:\n%s", diff)
	}
}

// TestTheClaimNamesThePoolsWithNoRoomForAReplacement: an organization at its spec.limits.nodes leaves its pool
// limits.nodes equal to the nodes it runs, and Karpenter launches a replacement (for a drift, a rollout wave) only
// within it: the claim names the pool and why, and says nothing once there is room.
func TestTheClaimNamesThePoolsWithNoRoomForAReplacement(t *testing.T) {
	world := cluster{refNodeClass, refNodePool, gpuNodeClass, gpuNodePool, namespace("acme-web"), namespace("acme-jobs")}
	observed := composedIn(t, classLimitSpec, world, true)
	usedBy(t, observed, "nodepool-kiso-acme", "8", 4)
	usedBy(t, observed, "nodepool-kiso.acme.gpu", "24", 2)
	for limits, want := range map[string]struct {
		status fnv1.Status
		reason string
		names  string
	}{
		`"limits":{"nodes":6}`: {fnv1.Status_STATUS_CONDITION_FALSE, ReasonAtNodeLimit, "pools kiso-acme (4 nodes, limits.nodes 4), kiso.acme.gpu (2 nodes, limits.nodes 2) cannot launch a replacement node"},
		`"limits":{"nodes":7}`: {fnv1.Status_STATUS_CONDITION_TRUE, ReasonRoom, "every pool can launch a replacement node"},
		`"limits":{"cpu":64}`:  {fnv1.Status_STATUS_CONDITION_TRUE, ReasonRoom, "every pool can launch a replacement node"},
	} {
		t.Run(limits, func(t *testing.T) {
			rsp := run(t, newRequest(t, input, xr(strings.Replace(classLimitSpec, `"limits":{"cpu":64,"nodes":10}`, limits, 1)), observed), world)
			fntest.AssertNoFatal(t, rsp)
			c := fntest.Condition(t, rsp, TypeReplacementHeadroom)
			if c.GetStatus() != want.status || c.GetReason() != want.reason || !strings.HasPrefix(c.GetMessage(), want.names) {
				t.Errorf("%s: %s %s %q; want %s %s beginning %q", TypeReplacementHeadroom, c.GetStatus(), c.GetReason(), c.GetMessage(), want.status, want.reason, want.names)
			}
		})
	}
}
