package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kiso-dev/kiso/functions/internal/placement"
)

func TestMergeTaints(t *testing.T) {
	keys := placement.NewKeys("kiso.dev")
	org := taint{Key: keys.Organization, Value: "acme", Effect: "NoSchedule"}
	stack := taint{Key: keys.Stack, Value: "web", Effect: "NoSchedule"}
	arch := map[string]any{"key": "arch", "value": "arm64", "effect": "NoSchedule"}
	gpu := map[string]any{"key": "nvidia.com/gpu", "effect": "NoExecute"}

	cases := map[string]struct {
		reason   string
		existing []any
		want     []taint
		result   []any
	}{
		"AppendsToEmpty": {
			reason: "With no reference taints, kiso's taints are the whole list, in order.",
			want:   []taint{org, stack},
			result: []any{org.object(), stack.object()},
		},
		"KeepsForeignTaintsInOrder": {
			reason:   "Taints kiso does not manage keep their order and content; kiso's are appended.",
			existing: []any{arch, gpu},
			want:     []taint{org},
			result:   []any{arch, gpu, org.object()},
		},
		"UpsertsManagedKeyInPlace": {
			reason:   "A managed key already present is replaced where it stands, not moved.",
			existing: []any{arch, map[string]any{"key": keys.Organization, "value": "old", "effect": "NoExecute"}, gpu},
			want:     []taint{org},
			result:   []any{arch, org.object(), gpu},
		},
		"RemovesUnwantedManagedKeys": {
			reason:   "In organization isolation a stack taint (and any customer taint) is removed.",
			existing: []any{map[string]any{"key": keys.Stack, "value": "web", "effect": "NoSchedule"}, arch, map[string]any{"key": keys.Customer, "value": "c", "effect": "NoSchedule"}},
			want:     []taint{org},
			result:   []any{arch, org.object()},
		},
		"DropsDuplicatesOfManagedKey": {
			reason:   "Several taints with one managed key collapse into kiso's one taint.",
			existing: []any{map[string]any{"key": keys.Organization, "value": "a", "effect": "NoSchedule"}, arch, map[string]any{"key": keys.Organization, "value": "a", "effect": "NoExecute"}},
			want:     []taint{org},
			result:   []any{org.object(), arch},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := mergeTaints(tc.existing, keys.Managed(), tc.want)
			if diff := cmp.Diff(tc.result, got); diff != "" {
				t.Errorf("%s\nmergeTaints(...): -want, +got:\n%s", tc.reason, diff)
			}
			again := mergeTaints(got, keys.Managed(), tc.want)
			if diff := cmp.Diff(got, again); diff != "" {
				t.Errorf("merging twice changed the taints: -once, +twice:\n%s", diff)
			}
		})
	}
}

func TestMergeStringMap(t *testing.T) {
	keys := placement.NewKeys("kiso.dev")
	existing := map[string]string{"team": "platform", keys.Stack: "old", keys.Organization: "old"}
	want := map[string]string{keys.Organization: "acme"}
	got := mergeStringMap(existing, keys.Managed(), want)
	if diff := cmp.Diff(map[string]string{"team": "platform", keys.Organization: "acme"}, got); diff != "" {
		t.Errorf("mergeStringMap(...): -want, +got:\n%s", diff)
	}
	if diff := cmp.Diff(got, mergeStringMap(got, keys.Managed(), want)); diff != "" {
		t.Errorf("merging twice changed the map: -once, +twice:\n%s", diff)
	}
}
