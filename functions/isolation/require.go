package main

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/clusterview"
	"github.com/kiso-dev/kiso/functions/internal/fnstate"
	"github.com/kiso-dev/kiso/functions/internal/ownership"
	"github.com/kiso-dev/kiso/functions/internal/placement"
	"github.com/kiso-dev/kiso/functions/internal/readlimit"
)

// The require phase: what the function asks Crossplane for, and the plan it derives first (the pools, and every
// object they name in the namespaces the platform gives), since what it asks for depends on it. Nothing here
// decides what to render; resolve.go reads the answers.

// require plans what the organization composes (its pools, and every object it names, in the namespaces the
// platform gives it) and asks Crossplane for what it needs to know: its references, its cluster, its
// namespaces and whatever holds a name it is about to take. An organization of a workload cluster reads what
// the provider observed there as Crossplane's answers, and its composed objects as they are there.
func (r *call) require() bool {
	if err := r.workloadView(); err != nil {
		return r.Fatal(err)
	}
	r.domain = chooseKeyDomain(r.In.KeyDomain, r.Spec.Organization, r.view, r.fetched)
	r.keys = placement.NewKeys(r.domain.Domain)
	r.pools = planPools(r.Spec, r.keys)
	r.given = r.givenNamespaces()
	r.served = servedNamespaces(r.namespaces, r.given.Namespaces)
	r.planned = planObjects(r.Spec, r.pools, r.In, r.served)
	r.ours = ownership.IndexObserved(r.view)
	r.at = siteOf(r.wl, r.claim, r.fetched)
	// Only where Crossplane reads the pods can they be what made a request too large.
	xr := r.Req.GetObserved().GetComposite().GetResource()
	r.wc = lastWarnCount(lastCount(xr), r.Spec, r.Now, !r.at.Workload && readlimit.Refused(xr))
	r.at.PodsPaused = r.wc.Paused
	r.Rsp.Requirements = r.requirements()
	r.reads = r.wl.Requirements(r.Rsp.GetRequirements().GetResources())
	// Asked once the workload cluster's reads are split off: Crossplane answers it where the claim is, whatever
	// the workload cluster holds under the same name (a stack's namespace is often the claim's, by default).
	if r.at.Workload && r.at.ClaimNamespace != "" {
		r.Rsp.Requirements.Resources[requireClaimNamespace] = ownership.ByName(namespaceGVK, "", r.at.ClaimNamespace)
	}
	return true
}

// Names of the required resources this function asks Crossplane for: the default class's reference pair;
// a class's are these names, "-" and the class's name.
const (
	requireReferenceNodeClass = "reference-nodeclass"
	requireReferenceNodePool  = "reference-nodepool"
)

// referenceRequirements names the required resources of a class's reference NodeClass and NodePool.
func referenceRequirements(c capacityClass) (nodeClass, nodePool string) {
	if c.Name == "" {
		return requireReferenceNodeClass, requireReferenceNodePool
	}
	return requireReferenceNodeClass + "-" + c.Name, requireReferenceNodePool + "-" + c.Name
}

var nodePoolGVK = schema.FromAPIVersionAndKind(nodePoolAPIVersion, nodePoolKind)

// requirements asks Crossplane for the two reference objects (unless the cluster read them for its
// organizations: publishedPair), the cluster if
// the spec names one, the cluster's placement policy, the namespaces the
// platform gives the organization (and in Warn mode their pods, where they
// are readable: not in a workload cluster, where each would take an Object)
// and, for every object kiso is about to create, for whatever already holds
// its name.
func (r *call) requirements() *fnv1.Requirements {
	spec, at := r.Spec, r.at
	rs := map[string]*fnv1.ResourceSelector{}
	for _, c := range classesOf(spec) {
		if r.fetched.publishedPair(c) != nil {
			continue
		}
		nc, np := referenceRequirements(c)
		rs[nc] = ownership.ByName(nodeClassGVK(c.NodeClassRef), "", c.NodeClassRef.Name)
		rs[np] = ownership.ByName(nodePoolGVK, "", c.NodePoolRef.Name)
	}
	if spec.ClusterRef != nil {
		rs[requireCluster] = ownership.ByName(clusterview.GVK, "", clusterview.Name(spec.ClusterRef.Name))
	}
	if at.Placement == nil {
		rs[requireClusterPolicy] = ownership.ByName(validatingPolicyGVK, "", placement.PolicyName)
	}
	r.requireNamespaces(rs)
	r.unlaunched = nodeClassesNoObservedPoolUses(r.view)
	requireNodeClassUsers(rs, r.unlaunched)
	if !at.Workload {
		r.requireWarnedPods(rs)
	}
	ownership.Require(rs, r.planned, r.ours)
	return &fnv1.Requirements{Resources: rs}
}

// requireOrganizationNamespaces is the required resource under which
// Crossplane returns every namespace the platform gives the organization.
const requireOrganizationNamespaces = "organization-namespaces"

// requireListedNamespace prefixes the required resource under which an organization of a workload cluster reads
// one namespace its spec lists (requireNamespaces).
const requireListedNamespace = "namespace-"

// requireNamespaces asks Crossplane for the namespaces the platform labels
// <keyDomain>/organization=<organization>: the platform's statement of which
// namespaces are the organization's, which no claim can make for itself (the
// cluster's namespace policy lets only the platform set the label). One
// selector, whatever the number of namespaces.
//
// An organization of a workload cluster asks instead for each namespace its spec lists, by name: each becomes a
// watched observe-only Object there, so a namespace labelled, unlabelled or created reaches the organization at
// once. A selector would become an ObservedObjectCollection, which the provider lists only at its poll and whose
// members it rewrites at every poll (see docs/capacity.md), waking the organization each time; and it would cost
// a member per namespace besides. A namespace labelled for the organization that its spec does not list is not
// read there, so not reported.
func (r *call) requireNamespaces(rs map[string]*fnv1.ResourceSelector) {
	if r.at.Workload {
		for _, ns := range r.namespaces {
			rs[requireListedNamespace+ns.Name] = ownership.ByName(namespaceGVK, "", ns.Name)
		}
		return
	}
	rs[requireOrganizationNamespaces] = &fnv1.ResourceSelector{
		ApiVersion: namespaceGVK.GroupVersion().String(),
		Kind:       namespaceGVK.Kind,
		Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{
			Labels: map[string]string{r.keys.Organization: r.Spec.Organization},
		}},
	}
}

// requireNodeClassUser prefixes the required resource under which Crossplane returns the NodePool of a composed
// NodeClass's name while Crossplane no longer observes that NodePool (requireNodeClassUsers).
const requireNodeClassUser = "nodeclass-user-"

// requireNodeClassUsers asks, for each composed NodeClass no observed NodePool launches from, for the NodePool of
// its name: a pool's NodePool and NodeClass share its name. Crossplane deletes a retired NodePool in the foreground
// and stops observing it at once, while it still exists until the garbage collector (and, with nodes, Karpenter)
// lets it go; the cluster's policy refuses the NodeClass's deletion meanwhile, and a refused deletion fails the
// XR's whole reconcile. Crossplane returns a NodePool being deleted, so keepGuarded keeps the NodeClass until it is
// gone. A settled organization observes every NodePool of its NodeClasses and asks for nothing.
func requireNodeClassUsers(rs map[string]*fnv1.ResourceSelector, unlaunched []string) {
	for _, name := range unlaunched {
		rs[requireNodeClassUser+name] = ownership.ByName(nodePoolGVK, "", name)
	}
}

// nodeClassesNoObservedPoolUses are the names of the composed NodeClasses no observed NodePool launches from.
func nodeClassesNoObservedPoolUses(observed fnstate.Observed) []string {
	launching := launchingNodeClasses(observed)
	var names []string
	for _, oc := range observed.All() {
		kind := oc.Resource.GetKind()
		if isNodeClass(kind) && launching[kind+"/"+oc.Resource.GetName()] == "" {
			names = append(names, oc.Resource.GetName())
		}
	}
	return names
}

// givenSet is what the platform gives the organization: its namespaces
// (labelled <keyDomain>/organization=<organization>) and which of those it
// also labels exempt. Resolved is false until Crossplane has answered.
type givenSet struct {
	Namespaces, Exempt map[string]bool
	Resolved           bool
}

// givenNamespaces reads the namespaces the platform gives the organization
// from Crossplane's answer to requireNamespaces. The objects kiso plans in
// them depend on it, so it is read once, before the plan, and handed to
// resolve.
func (r *call) givenNamespaces() givenSet {
	g := givenSet{Namespaces: map[string]bool{}, Exempt: map[string]bool{}}
	var found []fnstate.Labeled
	if r.wl != nil {
		g.Resolved = true
		for _, ns := range r.namespaces {
			one, resolved := fnstate.RequiredLabeled(r.Req, requireListedNamespace+ns.Name)
			g.Resolved = g.Resolved && resolved
			found = append(found, one...)
		}
	} else {
		found, g.Resolved = fnstate.RequiredLabeled(r.Req, requireOrganizationNamespaces)
	}
	for _, ns := range found {
		if ns.Labels[r.keys.Organization] != r.Spec.Organization {
			continue
		}
		g.Namespaces[ns.Name] = true
		if ns.Labels[placement.ExemptLabel(r.keys.Domain)] == placement.ExemptValue {
			g.Exempt[ns.Name] = true
		}
	}
	return g
}

// requireClusterPolicy is the required resource under which Crossplane
// returns the cluster's placement policy, if one exists.
const requireClusterPolicy = "placement-policy"

// site is where an organization runs, as its requirements and their answers differ.
type site struct {
	// Workload is true for an organization of a workload cluster: what it reads there is read through
	// provider-kubernetes, and its pods are not read (an Object per pod).
	Workload bool
	// ClaimNamespace is the claim's namespace, which for an organization of a workload cluster is read in the
	// cluster that runs Crossplane, where the claim is.
	ClaimNamespace string
	// PodsPaused is true while Warn mode's count is paused (warnCount): its
	// pods are not read.
	PodsPaused bool
	// Placement is what the cluster's placement policy enforces, as the workload cluster's XKarpenterCluster
	// publishes it in its view once the policy is there: read there instead of through an observe-only Object
	// per organization. Nil for an organization beside Crossplane (its own read costs nothing and sees a policy
	// any cluster of that apiserver composed) and while the cluster has not published it (an earlier release,
	// or the policy not there yet), when the organization reads the policy itself.
	Placement *v1alpha1.PlacementPolicyStatus
}

// requireClaimNamespace is the required resource under which Crossplane returns the claim's namespace, for an
// organization of a workload cluster.
const requireClaimNamespace = "claim-namespace"

// servedNamespaces are the namespaces of the spec the platform gives the organization, in spec order: each
// holds the organization's placement Role and ConfigMap. A namespace not given gets nothing, so whatever it
// holds is none of this organization's business (another's grant, in a namespace the platform gave another).
func servedNamespaces(namespaces []specNamespace, given map[string]bool) []specNamespace {
	out := make([]specNamespace, 0, len(given))
	for _, ns := range namespaces {
		if given[ns.Name] {
			out = append(out, ns)
		}
	}
	return out
}
