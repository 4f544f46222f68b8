package main

import (
	"strings"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/kiso-dev/kiso/functions/internal/nodeidentity"
	"github.com/kiso-dev/kiso/functions/internal/ready"
)

// readiness is a composed resource's readiness from its observed state. A
// managed resource is ready when its provider says Ready and Synced. The
// PrometheusRule, the placement policies and the Usages have no conditions to
// wait for: they are ready once they exist. Not yet observed means not ready.
func readiness(name resource.Name, oc resource.ObservedComposed, ok bool) resource.Ready {
	switch {
	case !ok:
		return resource.ReadyFalse
	case name == crPrometheusRule, isPlacement(name), strings.HasPrefix(string(name), crUsage), strings.HasPrefix(string(name), nodeidentity.ResourceUsagePrefix):
		return resource.ReadyTrue
	case ready.Managed(oc):
		return resource.ReadyTrue
	default:
		return resource.ReadyFalse
	}
}
