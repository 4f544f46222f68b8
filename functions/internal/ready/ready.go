// Package ready reads the conditions that say whether a composed resource is
// ready.
package ready

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	xpv1 "github.com/crossplane/crossplane-runtime/v2/apis/common/v1"
	"github.com/crossplane/function-sdk-go/resource"
)

// Condition reads a condition's status straight from the object: the SDK's
// GetCondition round-trips the status through JSON, which shows in
// reconciles of XRs that compose many resources.
func Condition(o *unstructured.Unstructured, t xpv1.ConditionType) corev1.ConditionStatus {
	conditions, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
	for _, c := range conditions {
		if m, ok := c.(map[string]any); ok && m["type"] == string(t) {
			s, _ := m["status"].(string)
			return corev1.ConditionStatus(s)
		}
	}
	return corev1.ConditionUnknown
}

// IsTrue reports whether an observed object's condition is True.
func IsTrue(oc resource.ObservedComposed, t xpv1.ConditionType) bool {
	return Condition(&oc.Resource.Unstructured, t) == corev1.ConditionTrue
}

// Managed reports whether a managed resource is ready: its provider says
// both Ready=True (it exists in AWS) and Synced=True (its last apply
// succeeded), so an XR is not ready while a change is failing.
func Managed(oc resource.ObservedComposed) bool {
	return IsTrue(oc, xpv1.TypeReady) && IsTrue(oc, xpv1.TypeSynced)
}
