package ownership

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kiso-dev/kiso/functions/internal/placement"
)

func TestObjectMeta(t *testing.T) {
	cases := map[string]struct {
		reason    string
		name, aws string
		labels    map[string]string
		want      metav1.ObjectMeta
	}{
		"ManagedByAndExternalName": {
			reason: "Every object is labelled kiso's; an AWS name kiso chooses is the external name.",
			name:   "prod-karpenter-node", aws: "kiso-prod-karpenter-node",
			want: metav1.ObjectMeta{Name: "prod-karpenter-node", Labels: map[string]string{placement.ManagedByLabel: placement.ManagedByValue},
				Annotations: map[string]string{"crossplane.io/external-name": "kiso-prod-karpenter-node"}},
		},
		"NoExternalNameNoAnnotations": {
			reason: "A kind whose AWS identifier AWS chooses gets no external name.",
			name:   "attachment", labels: map[string]string{"kiso.dev/organization": "acme"},
			want: metav1.ObjectMeta{Name: "attachment", Labels: map[string]string{placement.ManagedByLabel: placement.ManagedByValue, "kiso.dev/organization": "acme"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ObjectMeta(tc.name, tc.aws, tc.labels)); diff != "" {
				t.Errorf("%s\nObjectMeta(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
