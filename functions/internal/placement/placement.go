// Package placement is kiso's vocabulary (every label, taint, tag and
// annotation key it writes: Keys here, the rest in vocabulary.go) and the
// contract between the two functions about admission-time placement. The cluster function composes, once per cluster,
// the admission policies that every pod meets; the isolation function
// composes, in each namespace an organization holds, the Role that tells
// those policies what the namespace's pods may tolerate and must select.
//
// Identity is the platform's, never a tenant's or a kubelet's:
//   - which organization a namespace belongs to is its label
//     <domain>/organization, which only who holds the verb "label" on
//     placement.kiso.dev namespaces may set, change or remove (the cluster's
//     namespace policy); so is the exemption label;
//   - which nodes are an organization's are the labels
//     node-restriction.kubernetes.io/<domain>.organization (and .stack),
//     which Karpenter sets from the NodePool and NodeRestriction forbids a
//     kubelet to set on its own Node;
//   - which stacks of its organization a namespace's pods may use is the
//     Role kiso-placement: it grants verbs on resources of a virtual API
//     group that no server serves, and RBAC's escalation check makes it
//     something only kiso can write, since creating or changing a Role needs
//     the permissions it grants, which Crossplane holds and tenants do not.
//     A tenant may still delete or empty it: the policies then refuse the
//     namespace's pods (they fail closed) until Crossplane restores it.
package placement

import (
	"strings"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
)

// DefaultKeyDomain prefixes kiso's labels, taints and tags, and so the keys
// the policies read, unless a function's input chooses another domain; both
// functions' inputs must choose the same one.
const DefaultKeyDomain = "kiso.dev"

// Keys are the label, taint and tag keys kiso owns, all in one domain: the
// isolation function puts them on an organization's pools, the cluster's
// policies read them.
type Keys struct {
	Domain string
	// Organization and Stack are the taint keys, the tag and object label
	// keys, and the node labels for reports; Organization is also the
	// namespace label by which the platform gives a namespace to an
	// organization.
	Organization string
	Stack        string
	Customer     string
	// Class is the node label and tag of a pool of a class (spec.classes): a pod may select it to pick the
	// class. It is no identity: a pool of the default class has none, and no policy reads it.
	Class string
	// NodeOrganization and NodeStack are the node labels pods select: in
	// node-restriction.kubernetes.io/, which a kubelet may not set on its
	// own Node, so no node can give itself an organization's identity.
	NodeOrganization string
	NodeStack        string
	// InstanceProfile annotates an organization's dedicated identity objects
	// with their instance profile's name, which an EC2NodeClass that uses them
	// names: the cluster's deletion policies keep them while one does.
	InstanceProfile string
}

// NodeRestrictionDomain is the label domain Kubernetes' NodeRestriction
// admission forbids a kubelet to set on its own Node.
const NodeRestrictionDomain = "node-restriction.kubernetes.io"

// nodeKeySuffixes follow the key domain in the name part of the node
// identity labels; the longest bounds the key domain's length.
const (
	nodeOrganizationSuffix = ".organization"
	nodeStackSuffix        = ".stack"
)

// MaxKeyDomainLength is the longest key domain whose node identity label
// name (<domain>.organization) fits a label name's 63 characters.
const MaxKeyDomainLength = 63 - len(nodeOrganizationSuffix)

// NewKeys returns kiso's keys in the supplied domain.
func NewKeys(domain string) Keys {
	return Keys{
		Domain:           domain,
		Organization:     domain + "/organization",
		Stack:            domain + "/stack",
		Customer:         domain + "/customer",
		Class:            domain + "/class",
		NodeOrganization: NodeRestrictionDomain + "/" + domain + nodeOrganizationSuffix,
		NodeStack:        NodeRestrictionDomain + "/" + domain + nodeStackSuffix,
		InstanceProfile:  domain + "/instance-profile",
	}
}

// DomainOfNodeOrganizationLabel returns the key domain of a node label key that is NewKeys(domain).NodeOrganization
// for some domain, and false for any other key: what an organization's pools say of the domain they were
// composed in.
func DomainOfNodeOrganizationLabel(key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, NodeRestrictionDomain+"/")
	if !ok {
		return "", false
	}
	domain, ok := strings.CutSuffix(rest, nodeOrganizationSuffix)
	return domain, ok && domain != ""
}

// Managed returns every key kiso owns: on a cloned object these are the only
// keys kiso upserts or removes.
func (k Keys) Managed() []string {
	return []string{k.Organization, k.Stack, k.Customer, k.Class, k.NodeOrganization, k.NodeStack}
}

// Group is the virtual API group of the grants.
const Group = "placement.kiso.dev"

// Resources and verbs of the grants.
const (
	// Tolerations, verb use: the namespace's pods may tolerate the taint of
	// organization o (resource name "o") and of its stack s ("o.s"), and
	// select their nodes.
	Tolerations = "tolerations"
	VerbUse     = "use"

	// Pools, verb select: the namespace's pods must select one of these
	// pools ("o" in organization isolation, "o.s" in stack isolation).
	// Verb inject: the pool whose node selector and tolerations are added
	// to pods that lack them.
	// Verb warn (spec.placement.mode Warn): the pools Enforce would hold
	// the namespace's pods to, while select grants AnyPool; a pod selecting
	// none of them is admitted with the refusal Enforce would give as a
	// warning.
	Pools      = "pools"
	VerbSelect = "select"
	VerbInject = "inject"
	VerbWarn   = "warn"

	// AnyPool, granted select, lets the namespace's pods run outside the
	// organization's pools (spec.placement.enforce: false). A Role that
	// grants no select at all has been changed, and its namespace's pods are
	// refused until kiso restores it.
	AnyPool = "*"

	// Namespaces, verb label: who may set, change or remove a namespace's
	// identity labels (<domain>/organization and the exemption label). The
	// platform grants it to itself; cluster-admin holds it already.
	Namespaces = "namespaces"
	VerbLabel  = "label"

	// Bindings, verb create: who, besides the schedulers the cluster's input
	// names, may bind pods to nodes in tenants' namespaces.
	Bindings   = "bindings"
	VerbCreate = "create"
)

// Name is the Role in each namespace an organization holds, which the
// policies read as their parameter.
const Name = "kiso-placement"

// Names of the cluster-wide admission policies and their bindings.
const (
	// PolicyName checks every pod outside platform namespaces: no node named
	// directly, no toleration of every taint, and tolerations and selectors of
	// an organization only where the namespace holds it.
	PolicyName = "kiso-placement"
	// PoolsPolicyName checks, where a namespace holds a Role kiso-placement,
	// that pods select one of the pools it names.
	PoolsPolicyName = "kiso-placement-pools"
	// WarnPolicyName warns, where a namespace's Role grants warn on pools,
	// about pods that select none of them: what PoolsPolicyName refuses in
	// Enforce mode, admitted in Warn mode.
	WarnPolicyName = "kiso-placement-warn"
	// AuditBindingName binds PolicyName, in the cluster's placement mode Audit, to the namespaces neither an
	// organization's nor the platform's, with Warn and Audit instead of Deny.
	AuditBindingName = "kiso-placement-audit"
	// InjectPolicyName adds the node selector and tolerations of the pool the
	// Role names for injection.
	InjectPolicyName = "kiso-placement-inject"
	// BindingPolicyName lets only the platform's schedulers bind pods to
	// nodes outside platform namespaces: a binding skips the taints.
	BindingPolicyName = "kiso-placement-binding"
	// NamespacePolicyName lets only the platform set a namespace's
	// organization and exemption labels.
	NamespacePolicyName = "kiso-namespace-identity"
)

// Annotations on PolicyName: what the cluster's policies enforce, for the
// isolation function to tell a claim.
const (
	AnnotationKeyDomain          = "kiso.dev/key-domain"
	AnnotationPlatformNamespaces = "kiso.dev/platform-namespaces"
	AnnotationInjectAPIVersion   = "kiso.dev/inject-api-version"
	AnnotationCluster            = "kiso.dev/cluster"
	// AnnotationMode is Audit while the policy only warns outside organizations' and the platform's namespaces;
	// absent while it enforces, as on every policy from before the mode.
	AnnotationMode = "kiso.dev/placement-mode"
)

// PoolAnnotation on the Role names the pool its namespace's pods run on, for
// the message a refused pod gets.
const PoolAnnotation = "kiso.dev/pool"

// GrantName is how a grant names a pool, or a toleration: "o" for an
// organization, "o.s" for its stack s. Organization and stack names hold no
// ".". It is not the pool's object name (kiso-o, kiso-o.s, or shortened),
// which names NodePools and NodeClasses: a grant names what a pod carries,
// which the policies compare with the pod's labels and tolerations.
func GrantName(organization, stack string) string {
	if stack == "" {
		return organization
	}
	return organization + "." + stack
}

// ExemptLabel on a namespace, with the value ExemptValue, makes it a
// platform namespace: its pods may tolerate every taint. Only the platform
// may set it (NamespacePolicyName); any other value exempts nothing.
func ExemptLabel(keyDomain string) string { return keyDomain + "/placement-exempt" }

// ExemptValue is the one value of ExemptLabel that exempts a namespace.
const ExemptValue = "true"

// Published is what a placement policy says it enforces, read from its annotations: what an XKarpenterCluster
// publishes in status.placement, and what an organization reads of a policy it finds. Cluster is "" on a policy
// that does not say.
func Published(annotations map[string]string) v1alpha1.PlacementPolicyStatus {
	return v1alpha1.PlacementPolicyStatus{
		Cluster:            annotations[AnnotationCluster],
		KeyDomain:          annotations[AnnotationKeyDomain],
		PlatformNamespaces: SplitList(annotations[AnnotationPlatformNamespaces]),
		InjectAPIVersion:   annotations[AnnotationInjectAPIVersion],
		Mode:               v1alpha1.ClusterPlacementMode(annotations[AnnotationMode]),
	}
}

// SplitList reads a comma-separated annotation value.
func SplitList(v string) []string {
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}
