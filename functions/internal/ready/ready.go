// Package ready reads the conditions that say whether a composed resource is
// ready.
package ready

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	xpv1 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/kiso-dev/kiso/functions/internal/fnstate"
)

// Condition reads a condition's status straight from the object, without a
// copy: the SDK's GetCondition round-trips the status through JSON, which
// shows in reconciles of XRs that compose many resources.
func Condition(o *unstructured.Unstructured, t xpv1.ConditionType) corev1.ConditionStatus {
	v, _, _ := unstructured.NestedFieldNoCopy(o.Object, "status", "conditions")
	conditions, _ := v.([]any)
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

// Of is a composed resource's readiness from its observed state, by the
// group of the object desired. A managed resource (provider-aws',
// provider-kubernetes' Object, provider-helm's Release) is ready when Managed
// says so. ConfigMaps, admission policies, RBAC, Usages and PrometheusRules
// have no conditions to wait for (a Usage's only says Crossplane's usage
// controller has seen it, which never happens where Crossplane runs without
// webhooks): they are ready once they exist. Anything else (NodePools,
// NodeClasses) is ready when it says Ready. Not yet observed means not
// ready, and so does being deleted, whatever the object says: Karpenter
// keeps a NodeClass, still saying Ready, until its nodes are gone, and no
// new node starts on it.
func Of(desired *composed.Unstructured, oc resource.ObservedComposed, observed bool) resource.Ready {
	group := desired.GetObjectKind().GroupVersionKind().Group
	switch {
	case !observed, oc.Resource.GetDeletionTimestamp() != nil:
		return resource.ReadyFalse
	case readyOnceExists(group):
		return resource.ReadyTrue
	case strings.HasSuffix(group, ".aws.upbound.io"), group == "kubernetes.crossplane.io", group == "helm.crossplane.io":
		if Managed(oc) {
			return resource.ReadyTrue
		}
	case IsTrue(oc, xpv1.TypeReady):
		return resource.ReadyTrue
	}
	return resource.ReadyFalse
}

// OfObserved is Of for the composed resource of the name given, reading what Crossplane observed of it only when
// its readiness depends on more than its existence: an organization renders a thousand Roles and ConfigMaps,
// ready once they exist.
func OfObserved(desired *composed.Unstructured, observed fnstate.Observed, name resource.Name) resource.Ready {
	if readyOnceExists(desired.GetObjectKind().GroupVersionKind().Group) {
		if h, ok := observed.Head(name); ok && !h.Deleting {
			return resource.ReadyTrue
		}
		return resource.ReadyFalse
	}
	oc, ok := observed.Get(name)
	return Of(desired, oc, ok)
}

// readyOnceExists reports whether objects of a group are ready as soon as
// they exist.
func readyOnceExists(group string) bool {
	switch group {
	case "", "admissionregistration.k8s.io", "rbac.authorization.k8s.io", "protection.crossplane.io", "apiextensions.crossplane.io", "monitoring.coreos.com":
		return true
	}
	return false
}
