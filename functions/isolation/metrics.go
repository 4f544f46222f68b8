package main

import (
	"math"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/server"
	"github.com/kiso-dev/kiso/monitoring"
)

// metrics are the series the function exports about each organization, from the XR as Crossplane sent it and the
// status the call wrote: whether it is Ready, its conditions, what Warn mode counted, and which pools and
// namespaces are the organization's, for rules that join Karpenter's per-nodepool and per-namespace series.
var metrics = server.Metrics{Families: monitoring.IsolationFamilies, Report: reportOrganization}

func reportOrganization(c server.Call) server.Samples {
	spec := c.Spec().GetFields()
	org := spec["organization"].GetStringValue()
	cluster := spec["clusterRef"].GetStructValue().GetFields()["name"].GetStringValue()
	stacked := spec["isolation"].GetStringValue() == string(v1alpha1.IsolationStack)
	xr := c.XRName()

	s := server.Samples{}
	s.Add(monitoring.OrganizationReady, server.Bool(c.Ready()), cluster, org, xr)
	for _, cond := range c.Conditions() {
		s.Add(monitoring.OrganizationCondition, 1, cluster, org, xr, cond.Type, cond.Status, cond.Reason)
	}
	st := c.Status().GetFields()
	s.Known(monitoring.OrganizationWarnedPods)
	if n, ok := st["warnedPods"].GetKind().(*structpb.Value_NumberValue); ok {
		s.Add(monitoring.OrganizationWarnedPods, math.Max(n.NumberValue, 0), cluster, org, xr)
	}
	s.Known(monitoring.PoolInfo)
	for _, p := range st["pools"].GetListValue().GetValues() {
		f := p.GetStructValue().GetFields()
		stack := ""
		if stacks := f["stacks"].GetListValue().GetValues(); stacked && len(stacks) == 1 {
			stack = stacks[0].GetStringValue()
		}
		if name := f["name"].GetStringValue(); name != "" {
			s.Add(monitoring.PoolInfo, 1, cluster, org, stack, name)
		}
	}
	s.Known(monitoring.NamespaceInfo)
	for _, sv := range st["stacks"].GetListValue().GetValues() {
		f := sv.GetStructValue().GetFields()
		for _, ns := range f["namespaces"].GetListValue().GetValues() {
			s.Add(monitoring.NamespaceInfo, 1, cluster, org, f["name"].GetStringValue(), ns.GetStringValue())
		}
	}
	return s
}
