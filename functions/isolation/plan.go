package main

import (
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/names"
	"github.com/kiso-dev/kiso/functions/internal/placement"
)

// poolNamePrefix makes kiso's pool names unlikely to collide with a
// platform's own NodePools; the ownership check refuses the rest.
const poolNamePrefix = "kiso"

// A pool is one NodePool and its NodeClass of the same name, and the stacks
// whose pods it serves. It is derived from the organization's spec alone:
// a shared pool never depends on which stack was reconciled last.
type pool struct {
	Name string

	// Stack is the stack the pool belongs to in stack isolation, else empty.
	Stack string

	// Class is the class of capacity the pool is of, and the reference pair it clones.
	Class capacityClass

	// Stacks whose pods land on this pool.
	Stacks []string

	// Settings are spec.pool with the stack's own overrides applied (the default class), or the class's own.
	Settings v1alpha1.PoolSettings

	// Labels are the identity labels of its objects, its EC2 resources'
	// tags and, for reports, its nodes.
	Labels map[string]string

	// Selector is what a pod selects to land on its nodes: node labels in
	// node-restriction.kubernetes.io/, which Karpenter sets from the
	// NodePool and no kubelet may set on itself.
	Selector map[string]string

	// Taints are kiso's taints on its nodes, in order.
	Taints []taint

	// Tags are the cost tags of its EC2 resources (EC2NodeClass only).
	Tags map[string]string
}

// A taint as Karpenter's NodePool spells it.
type taint struct {
	Key    string
	Value  string
	Effect string
}

// taintEffect keeps other pods off a tenant's nodes without evicting pods
// already there, so adding a taint never disrupts running workloads.
const taintEffect = "NoSchedule"

// planPools returns the organization's pools in spec order: in organization isolation one per class, in
// stack isolation per stack its pool of the default class, then one per class it uses.
func planPools(spec v1alpha1.XKarpenterIsolationSpec, keys placement.Keys) []pool {
	classes := classesOf(spec)
	if spec.Isolation == v1alpha1.IsolationStack {
		pools := make([]pool, 0, len(spec.Stacks))
		for _, s := range spec.Stacks {
			settings := mergeSettings(spec.Pool, s.Pool)
			pools = append(pools, newPool(spec, keys, pool{Stack: s.Name, Stacks: []string{s.Name}, Class: classes[0], Settings: settings}))
			for _, c := range stackClasses(spec, s) {
				pools = append(pools, newPool(spec, keys, pool{Stack: s.Name, Stacks: []string{s.Name}, Class: c, Settings: mergeSettings(c.Pool, nil)}))
			}
		}
		return pools
	}
	stacks := make([]string, 0, len(spec.Stacks))
	for _, s := range spec.Stacks {
		stacks = append(stacks, s.Name)
	}
	pools := make([]pool, 0, len(classes))
	for _, c := range classes {
		pools = append(pools, newPool(spec, keys, pool{Stacks: stacks, Class: c, Settings: mergeSettings(c.Pool, nil)}))
	}
	return pools
}

// newPool completes a pool of its stack (none in organization isolation), stacks, class and settings: its name,
// labels, selector, taints and tags.
func newPool(spec v1alpha1.XKarpenterIsolationSpec, keys placement.Keys, p pool) pool {
	stack, class := p.Stack, p.Class
	p.Name = poolName(spec.Organization, stack, class.Name)
	p.Labels = map[string]string{keys.Organization: spec.Organization}
	p.Selector = map[string]string{keys.NodeOrganization: spec.Organization}
	p.Taints = []taint{{Key: keys.Organization, Value: spec.Organization, Effect: taintEffect}}
	if stack != "" {
		p.Labels[keys.Stack] = stack
		p.Selector[keys.NodeStack] = stack
		p.Taints = append(p.Taints, taint{Key: keys.Stack, Value: stack, Effect: taintEffect})
	}
	// Customer is for cost reports only: a label and a tag, never a taint,
	// so a shared pool never splits on it.
	if spec.Customer != "" {
		p.Labels[keys.Customer] = spec.Customer
	}
	// A class's label is for pods to pick the class by and for cost reports; no policy reads it.
	if class.Name != "" {
		p.Labels[keys.Class] = class.Name
	}
	if isEC2NodeClass(class.NodeClassRef) {
		p.Tags = make(map[string]string, len(spec.Tags)+len(p.Labels))
		for k, v := range spec.Tags {
			p.Tags[k] = v
		}
		for k, v := range p.Labels {
			p.Tags[k] = v
		}
	}
	return p
}

// nodeLabels are the labels the pool's nodes carry: its identity, for
// reports, and its selector, for placement.
func (p pool) nodeLabels() map[string]string {
	out := make(map[string]string, len(p.Labels)+len(p.Selector))
	for k, v := range p.Labels {
		out[k] = v
	}
	for k, v := range p.Selector {
		out[k] = v
	}
	return out
}

// shortenedPoolPrefix starts every shortened pool name. A full name starts
// with kiso- and then an organization, a DNS label, which never starts with
// "-": no shortened name is ever another pair's full name.
const shortenedPoolPrefix = poolNamePrefix + "--"

// poolHashLen is how many hex digits of the full name's SHA-256 a shortened
// pool name ends in: 64 bits, so that no tenant can search out an
// organization name whose shortened pool name is another's.
const poolHashLen = 16

// poolName is kiso-<organization> for an organization's pool and
// kiso-<organization>.<stack> for a stack's, of the default class; a pool of
// a class is kiso.<organization>.<class> or kiso.<organization>.<stack>.<class>.
// Organization, stack and class are DNS-1123 labels, which hold no ".", so
// two different organization/stack/class triples never share a name: with
// "-" organization acme's stack web-x and organization acme-web's stack x
// would. A default class's name starts with kiso- and a class's with kiso.,
// and a class's name has one "." more than a default class's of the same
// isolation. A name longer than a label value may be (it is also the
// karpenter.sh/nodepool label's value) is cut and becomes
// kiso--<cut>-<hash>, which no full name can be.
func poolName(organization, stack, class string) string {
	sep := "-"
	if class != "" {
		sep = "."
	}
	name := poolNamePrefix + sep + organization
	if stack != "" {
		name += "." + stack
	}
	if class != "" {
		name += "." + class
	}
	if len(name) <= names.MaxLabelValue {
		return name
	}
	return names.Cut{MaxLen: names.MaxLabelValue, Prefix: shortenedPoolPrefix, HashLen: poolHashLen}.Shorten(name[len(poolNamePrefix)+1:], name)
}

// mergeSettings returns base with every field override sets replacing it;
// limits merge key by key.
func mergeSettings(base, override *v1alpha1.PoolSettings) v1alpha1.PoolSettings {
	out := v1alpha1.PoolSettings{}
	for _, s := range []*v1alpha1.PoolSettings{base, override} {
		if s == nil {
			continue
		}
		for k, v := range s.Limits {
			if out.Limits == nil {
				out.Limits = map[string]intstr.IntOrString{}
			}
			out.Limits[k] = v
		}
		if s.ExpireAfter != "" {
			out.ExpireAfter = s.ExpireAfter
		}
		if s.TerminationGracePeriod != "" {
			out.TerminationGracePeriod = s.TerminationGracePeriod
		}
		if s.Weight != nil {
			out.Weight = s.Weight
		}
		if d := s.Disruption; d != nil {
			if out.Disruption == nil {
				out.Disruption = &v1alpha1.Disruption{}
			}
			if d.ConsolidationPolicy != "" {
				out.Disruption.ConsolidationPolicy = d.ConsolidationPolicy
			}
			if d.ConsolidateAfter != "" {
				out.Disruption.ConsolidateAfter = d.ConsolidateAfter
			}
			if d.Budgets != nil {
				out.Disruption.Budgets = d.Budgets
			}
		}
	}
	return out
}
