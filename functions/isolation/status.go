package main

import (
	"github.com/kiso-dev/kiso/apis/v1alpha1"
)

// tolerationOperator matches the taint's value exactly, so a stack's pods
// tolerate their own organization's taint and no other.
const tolerationOperator = "Equal"

// buildStatus tells a tenant, per stack, which pool its pods land on and the
// node selector and tolerations they must carry (or that admission adds).
func buildStatus(spec v1alpha1.XKarpenterIsolationSpec, pools []pool, ready map[string]bool) v1alpha1.XKarpenterIsolationStatus {
	st := v1alpha1.XKarpenterIsolationStatus{
		Pools:  make([]v1alpha1.PoolStatus, 0, len(pools)),
		Stacks: make([]v1alpha1.StackStatus, 0, len(spec.Stacks)),
	}
	poolOf := make(map[string]pool, len(spec.Stacks))
	for _, p := range pools {
		st.Pools = append(st.Pools, v1alpha1.PoolStatus{Name: p.Name, NodeClass: p.Name, Stacks: p.Stacks, Ready: ready[p.Name]})
		for _, s := range p.Stacks {
			poolOf[s] = p
		}
	}
	for _, s := range spec.Stacks {
		p := poolOf[s.Name]
		ss := v1alpha1.StackStatus{
			Name:       s.Name,
			Pool:       p.Name,
			Namespaces: namespacesOf(spec.Organization, s),
			// Identity keys only: the customer label is on the nodes for
			// cost reports, but a pod never needs it to land.
			NodeSelector: make(map[string]string, len(p.Taints)),
			Tolerations:  make([]v1alpha1.Toleration, 0, len(p.Taints)),
		}
		for _, t := range p.Taints {
			ss.NodeSelector[t.Key] = t.Value
			ss.Tolerations = append(ss.Tolerations, v1alpha1.Toleration{Key: t.Key, Operator: tolerationOperator, Value: t.Value, Effect: t.Effect})
		}
		st.Stacks = append(st.Stacks, ss)
	}
	return st
}
