package main

import (
	"fmt"
	"maps"
	"strings"

	k8sresource "k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/fnstate"
	"github.com/kiso-dev/kiso/functions/internal/placement"
)

// tolerationOperator matches the taint's value exactly, so a stack's pods
// tolerate their own organization's taint and no other.
const tolerationOperator = "Equal"

// buildStatus tells a tenant which pools the organization has and whether each is Ready, and, per stack
// (stackStatuses), which pool its pods land on and the node selector and tolerations they must carry (or that
// admission adds).
func buildStatus(pools []pool, ready map[string]bool, stacks []v1alpha1.StackStatus) v1alpha1.XKarpenterIsolationStatus {
	st := v1alpha1.XKarpenterIsolationStatus{
		Pools:  make([]v1alpha1.PoolStatus, 0, len(pools)),
		Stacks: stacks,
	}
	names := make([]string, 0, len(pools))
	for _, p := range pools {
		st.Pools = append(st.Pools, v1alpha1.PoolStatus{Name: p.Name, NodeClass: p.Name, Stacks: p.Stacks, Ready: ready[p.Name], Class: p.Class.Name})
		names = append(names, p.Name)
	}
	st.PoolNames = strings.Join(names, ",")
	return st
}

// stackStatuses tells, per stack, which pool its pods land on and the node selector and tolerations they must
// carry (or that admission adds): the status says it, and so does each namespace's placement ConfigMap.
func stackStatuses(spec v1alpha1.XKarpenterIsolationSpec, pools []pool, keys placement.Keys) []v1alpha1.StackStatus {
	stacks := make([]v1alpha1.StackStatus, 0, len(spec.Stacks))
	poolOf := make(map[string]pool, len(spec.Stacks))
	classesOfStack := map[string][]v1alpha1.StackClassStatus{}
	for _, p := range pools {
		for _, s := range p.Stacks {
			switch {
			case p.Class.Name == "":
				poolOf[s] = p
			case p.Stack != "":
				// A pod picks the class by its label, besides what it selects for its stack. Only in stack
				// isolation, where a stack has pools of the classes it uses: in organization isolation every
				// stack has every class, and a thousand stacks times ten classes would not fit the response.
				selector := maps.Clone(p.Selector)
				selector[keys.Class] = p.Class.Name
				classesOfStack[s] = append(classesOfStack[s], v1alpha1.StackClassStatus{Name: p.Class.Name, Pool: p.Name, NodeSelector: selector})
			}
		}
	}
	for _, s := range spec.Stacks {
		p := poolOf[s.Name]
		ss := v1alpha1.StackStatus{
			Name:       s.Name,
			Pool:       p.Name,
			Namespaces: namespacesOf(spec.Organization, s),
			// Identity keys only, in node-restriction.kubernetes.io/: the
			// customer label is on the nodes for cost reports, but a pod
			// never needs it to land.
			NodeSelector: make(map[string]string, len(p.Selector)),
			Tolerations:  make([]v1alpha1.Toleration, 0, len(p.Taints)),
		}
		for k, v := range p.Selector {
			ss.NodeSelector[k] = v
		}
		for _, t := range p.Taints {
			ss.Tolerations = append(ss.Tolerations, v1alpha1.Toleration{Key: t.Key, Operator: tolerationOperator, Value: t.Value, Effect: t.Effect})
		}
		ss.Classes = classesOfStack[s.Name]
		stacks = append(stacks, ss)
	}
	return stacks
}

// usageResources are the resources of a NodePool's status.resources a pool
// reports: what an organization pays for and is capped at.
var usageResources = []string{"cpu", "memory"}

// reportUsage adds to each pool's status what Karpenter counts its nodes
// hold, from the observed NodePool's status.nodes and status.resources, and
// the limits the NodePool caps them at. A pool whose NodePool is not observed
// yet, or that Karpenter has not counted yet, reports nothing.
func reportUsage(st *v1alpha1.XKarpenterIsolationStatus, spec v1alpha1.XKarpenterIsolationSpec, observed fnstate.Observed, pools []pool) {
	for i, p := range pools {
		oc, ok := observed.Get(nodePoolResourceName(p))
		if !ok || i >= len(st.Pools) || st.Pools[i].Name != p.Name {
			continue
		}
		np := oc.Resource.Object
		if nodes, found, _ := unstructured.NestedFieldNoCopy(np, "status", "nodes"); found {
			switch n := nodes.(type) {
			case int64:
				st.Pools[i].Nodes = &n
			case float64:
				count := int64(n)
				st.Pools[i].Nodes = &count
			}
		}
		for _, r := range usageResources {
			if v, found, _ := unstructured.NestedFieldNoCopy(np, "status", "resources", r); found {
				if st.Pools[i].Resources == nil {
					st.Pools[i].Resources = map[string]string{}
				}
				st.Pools[i].Resources[r] = quantityText(v)
			}
		}
		limits, _, _ := unstructured.NestedMap(np, "spec", "limits")
		for r, v := range limits {
			if st.Pools[i].Limits == nil {
				st.Pools[i].Limits = make(map[string]string, len(limits))
			}
			st.Pools[i].Limits[r] = quantityText(v)
		}
	}
	st.Usage = totalUsage(st.Pools)
	newOrganizationLimit(spec, observed).reportLimits(st.Usage)
	if len(spec.Classes) > 0 {
		st.Classes = classUsage(spec, st)
	}
}

// classUsage sums, per class, its pools' nodes and CPUs against the most they may hold now (the sum of their
// limits, at most spec.limits), for the CLASSES column: default(2n,cpu=3/4),gpu(1n,cpu=1/4). A class whose
// pools Karpenter has not counted yet shows what it has counted; one whose pools do not all cap cpu shows no
// limit.
func classUsage(spec v1alpha1.XKarpenterIsolationSpec, st *v1alpha1.XKarpenterIsolationStatus) string {
	parts := make([]string, 0, 1+len(spec.Classes))
	for _, c := range classesOf(spec) {
		var nodes int64
		var used, limit k8sresource.Quantity
		pools, capped := 0, 0
		for _, p := range st.Pools {
			if p.Class != c.Name {
				continue
			}
			pools++
			if p.Nodes != nil {
				nodes += *p.Nodes
			}
			if q, err := k8sresource.ParseQuantity(p.Resources["cpu"]); err == nil {
				used.Add(q)
			}
			if q, err := k8sresource.ParseQuantity(p.Limits["cpu"]); err == nil {
				limit.Add(q)
				capped++
			}
		}
		if pools == 0 {
			continue
		}
		cpu := used.String()
		if capped == pools {
			if v, ok := spec.Limits["cpu"]; ok {
				if org, err := k8sresource.ParseQuantity(v.String()); err == nil && org.Cmp(limit) < 0 {
					limit = org
				}
			}
			cpu += "/" + limit.String()
		}
		parts = append(parts, fmt.Sprintf("%s(%dn,cpu=%s)", c.display(), nodes, cpu))
	}
	return strings.Join(parts, ",")
}

// totalUsage sums the pools' usage, so that one column can show an
// organization's nodes, CPU and memory. A limit is summed only if every pool
// has one: a pool without it is uncapped. Nothing is summed until Karpenter
// has counted every pool.
func totalUsage(pools []v1alpha1.PoolStatus) *v1alpha1.Usage {
	if len(pools) == 0 {
		return nil
	}
	u := &v1alpha1.Usage{}
	for _, p := range pools {
		if p.Nodes == nil {
			return nil
		}
		u.Nodes += *p.Nodes
	}
	u.Resources = sumQuantities(pools, func(p v1alpha1.PoolStatus) map[string]string { return p.Resources })
	u.Limits = sumQuantities(pools, func(p v1alpha1.PoolStatus) map[string]string { return p.Limits })
	return u
}

// sumQuantities sums, per resource of usageResources, the quantities every
// pool has; a resource any pool lacks (or holds unparsed) is left out.
func sumQuantities(pools []v1alpha1.PoolStatus, of func(v1alpha1.PoolStatus) map[string]string) map[string]string {
	out := map[string]string{}
	for _, r := range usageResources {
		var sum k8sresource.Quantity
		complete := true
		for _, p := range pools {
			q, err := k8sresource.ParseQuantity(of(p)[r])
			if err != nil {
				complete = false
				break
			}
			sum.Add(q)
		}
		if complete {
			out[r] = sum.String()
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// quantityText is a quantity as the NodePool holds it: a string, or a whole
// number the apiserver stored as JSON.
func quantityText(v any) string {
	if f, ok := v.(float64); ok && f == float64(int64(f)) {
		return fmt.Sprintf("%d", int64(f))
	}
	return fmt.Sprint(v)
}
