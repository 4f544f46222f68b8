package usage

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A Usage renders its user when it has one, and its reason when it has none: ClusterUsage's schema requires
// one of the two (has(self.by) || has(self.reason)), and a user that is the zero Ref would name nothing.
func TestRenderNamesAUserOrAReason(t *testing.T) {
	role := Ref{APIVersion: "iam.aws.upbound.io/v1beta1", Kind: "Role", Name: "prod-karpenter-controller"}
	nodeClass := Ref{APIVersion: "karpenter.k8s.aws/v1", Kind: "EC2NodeClass", Name: "kiso-acme"}
	ref := func(r Ref) map[string]any {
		return map[string]any{"apiVersion": r.APIVersion, "kind": r.Kind, "resourceRef": map[string]any{"name": r.Name}}
	}
	cases := map[string]struct {
		usage Usage
		want  map[string]any
	}{
		"ByAUser": {
			usage: Usage{Name: "u", Of: role, By: nodeClass},
			want:  map[string]any{"of": ref(role), "by": ref(nodeClass), "replayDeletion": true},
		},
		"ForAReason": {
			usage: Usage{Name: "u", Of: role, Reason: "kept with the cluster"},
			want:  map[string]any{"of": ref(role), "reason": "kept with the cluster", "replayDeletion": true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := tc.usage.Render(map[string]string{"app.kubernetes.io/managed-by": "kiso"})
			if diff := cmp.Diff(tc.want, got.Object["spec"]); diff != "" {
				t.Errorf("spec: -want, +got:\n%s", diff)
			}
			if got.GetName() != "u" || got.GetKind() != Kind || got.GetLabels()["app.kubernetes.io/managed-by"] != "kiso" {
				t.Errorf("metadata: %v %v", got.GetKind(), got.Object["metadata"])
			}
		})
	}
}
