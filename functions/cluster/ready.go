package main

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	xpv1 "github.com/crossplane/crossplane-runtime/v2/apis/common/v1"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/kiso-dev/kiso/functions/internal/nodeidentity"
)

// readiness is a composed resource's readiness from its observed state. A
// managed resource is ready only when its provider says both Ready=True (it
// exists in AWS) and Synced=True (its last apply succeeded), so an XR is not
// ready while a policy change is failing. The PrometheusRule and the Usages
// have no conditions to wait for: they are ready once they exist. Not yet observed means not ready.
func readiness(name resource.Name, oc resource.ObservedComposed, ok bool) resource.Ready {
	switch {
	case !ok:
		return resource.ReadyFalse
	case name == crPrometheusRule, isPlacement(name), strings.HasPrefix(string(name), crUsage), strings.HasPrefix(string(name), nodeidentity.ResourceUsagePrefix):
		// No conditions to wait for: ready once it exists.
		return resource.ReadyTrue
	case isTrue(oc, xpv1.TypeReady) && isTrue(oc, xpv1.TypeSynced):
		return resource.ReadyTrue
	default:
		return resource.ReadyFalse
	}
}

func isTrue(oc resource.ObservedComposed, t xpv1.ConditionType) bool {
	return oc.Resource.GetCondition(t).Status == corev1.ConditionTrue
}
