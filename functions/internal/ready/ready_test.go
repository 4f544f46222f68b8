package ready

import (
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/structpb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/kiso-dev/kiso/functions/internal/fnstate"
)

// deleting marks an object as being deleted, as the API server does while finalizers hold it.
func deleting(cd *composed.Unstructured) *composed.Unstructured {
	cd.SetDeletionTimestamp(&metav1.Time{Time: time.Unix(1, 0)})
	return cd
}

func TestOf(t *testing.T) {
	object := func(apiVersion, kind string, conditions ...string) *composed.Unstructured {
		cd := &composed.Unstructured{Unstructured: unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind}}}
		var cs []any
		for _, c := range conditions {
			cs = append(cs, map[string]any{"type": c, "status": "True"})
		}
		if cs != nil {
			cd.Object["status"] = map[string]any{"conditions": cs}
		}
		return cd
	}
	cases := map[string]struct {
		reason   string
		desired  *composed.Unstructured
		observed *composed.Unstructured
		want     resource.Ready
	}{
		"NotObservedIsNotReady": {
			reason:  "An object Crossplane has not created yet is not ready.",
			desired: object("karpenter.sh/v1", "NodePool"),
			want:    resource.ReadyFalse,
		},
		"NodePoolReadyWhenItSaysSo": {
			reason:   "Karpenter's Ready condition decides.",
			desired:  object("karpenter.sh/v1", "NodePool"),
			observed: object("karpenter.sh/v1", "NodePool", "Ready"),
			want:     resource.ReadyTrue,
		},
		"NodeClassBeingDeletedIsNotReady": {
			reason:   "Karpenter keeps a NodeClass, still saying Ready, until its nodes are gone; no new node starts on it, so it is not ready.",
			desired:  object("karpenter.k8s.aws/v1", "EC2NodeClass"),
			observed: deleting(object("karpenter.k8s.aws/v1", "EC2NodeClass", "Ready")),
			want:     resource.ReadyFalse,
		},
		"NodePoolWithoutReadyIsNotReady": {
			reason:   "A NodePool Karpenter has not validated is not ready.",
			desired:  object("karpenter.sh/v1", "NodePool"),
			observed: object("karpenter.sh/v1", "NodePool"),
			want:     resource.ReadyFalse,
		},
		"PolicyReadyOnceItExists": {
			reason:   "Admission policies report no status.",
			desired:  object("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy"),
			observed: object("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy"),
			want:     resource.ReadyTrue,
		},
		"UsageReadyOnceItExists": {
			reason:   "A Usage protects from the moment it exists, with or without Crossplane's usage controller.",
			desired:  object("protection.crossplane.io/v1beta1", "ClusterUsage"),
			observed: object("protection.crossplane.io/v1beta1", "ClusterUsage"),
			want:     resource.ReadyTrue,
		},
		"ManagedResourceNeedsSynced": {
			reason:   "A managed resource the provider has not synced is not ready.",
			desired:  object("iam.aws.upbound.io/v1beta1", "Role"),
			observed: object("iam.aws.upbound.io/v1beta1", "Role", "Ready"),
			want:     resource.ReadyFalse,
		},
		"ManagedResourceReadyAndSynced": {
			reason:   "Ready and Synced make a managed resource ready.",
			desired:  object("iam.aws.upbound.io/v1beta1", "Role"),
			observed: object("iam.aws.upbound.io/v1beta1", "Role", "Ready", "Synced"),
			want:     resource.ReadyTrue,
		},
		"ManagedResourceSyncedButNotReady": {
			reason:   "Applied, but AWS has not finished creating it.",
			desired:  object("sqs.aws.upbound.io/v1beta1", "Queue"),
			observed: object("sqs.aws.upbound.io/v1beta1", "Queue", "Synced"),
			want:     resource.ReadyFalse,
		},
		"ManagedResourceWithoutConditions": {
			reason:   "A managed resource the provider has not reconciled yet has no conditions.",
			desired:  object("sqs.aws.upbound.io/v1beta1", "Queue"),
			observed: object("sqs.aws.upbound.io/v1beta1", "Queue"),
			want:     resource.ReadyFalse,
		},
		"PrometheusRuleReadyOnceItExists": {
			reason:   "A PrometheusRule has no conditions; existing is all it does.",
			desired:  object("monitoring.coreos.com/v1", "PrometheusRule"),
			observed: object("monitoring.coreos.com/v1", "PrometheusRule"),
			want:     resource.ReadyTrue,
		},
		"ConfigMapReadyOnceItExists": {
			reason:   "A ConfigMap has no status.",
			desired:  object("v1", "ConfigMap"),
			observed: object("v1", "ConfigMap"),
			want:     resource.ReadyTrue,
		},
		"RoleBeingDeletedIsNotReady": {
			reason:   "An object ready once it exists is not ready while it is being deleted.",
			desired:  object("rbac.authorization.k8s.io/v1", "Role"),
			observed: deleting(object("rbac.authorization.k8s.io/v1", "Role")),
			want:     resource.ReadyFalse,
		},
		"NotObservedRoleIsNotReady": {
			reason:  "An object ready once it exists is not ready before it does.",
			desired: object("rbac.authorization.k8s.io/v1", "Role"),
			want:    resource.ReadyFalse,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			oc := resource.ObservedComposed{Resource: tc.observed}
			if got := Of(tc.desired, oc, tc.observed != nil); got != tc.want {
				t.Errorf("%s\nOf(...): want %s, got %s", tc.reason, tc.want, got)
			}
			// OfObserved reads the same readiness, whether the object is read from a request or was read already.
			objects := map[resource.Name]resource.ObservedComposed{}
			req := &fnv1.RunFunctionRequest{Observed: &fnv1.State{Resources: map[string]*fnv1.Resource{}}}
			if tc.observed != nil {
				objects["object"] = oc
				s, err := structpb.NewStruct(tc.observed.Object)
				if err != nil {
					t.Fatal(err)
				}
				req.Observed.Resources["object"] = &fnv1.Resource{Resource: s}
			}
			st, err := fnstate.Read(req)
			if err != nil {
				t.Fatal(err)
			}
			for what, observed := range map[string]fnstate.Observed{"request": st.Observed, "read": fnstate.ObservedOf(objects)} {
				if got := OfObserved(tc.desired, observed, "object"); got != tc.want {
					t.Errorf("%s\nOfObserved(...) of objects %s: want %s, got %s", tc.reason, what, tc.want, got)
				}
			}
		})
	}
}
