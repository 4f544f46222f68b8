// Package placement is the contract between the two functions about
// admission-time placement. The cluster function composes, once per cluster,
// the admission policies that every pod meets; the isolation function
// composes, in each namespace an organization holds, the Role that tells
// those policies what the namespace's pods may tolerate and must select.
//
// The Role grants verbs on resources of a virtual API group that no server
// serves. Nothing uses the grants but the policies, which ask the authorizer
// whether the namespace's ServiceAccount kiso-placement holds them. RBAC's
// escalation check makes them something only kiso can give: creating or
// changing a Role (or binding one) needs the permissions it grants, which
// Crossplane holds and tenants do not.
package placement

import "strings"

// DefaultKeyDomain prefixes kiso's labels, taints and tags, and so the keys
// the policies read, unless a function's input chooses another domain; both
// functions' inputs must choose the same one.
const DefaultKeyDomain = "kiso.dev"

// Keys are the label, taint and tag keys kiso owns, all in one domain: the
// isolation function puts them on an organization's pools, the cluster's
// policies read them.
type Keys struct {
	Domain       string
	Organization string
	Stack        string
	Customer     string
}

// NewKeys returns kiso's keys in the supplied domain.
func NewKeys(domain string) Keys {
	return Keys{
		Domain:       domain,
		Organization: domain + "/organization",
		Stack:        domain + "/stack",
		Customer:     domain + "/customer",
	}
}

// Managed returns every key kiso owns: on a cloned object these are the only
// keys kiso upserts or removes.
func (k Keys) Managed() []string {
	return []string{k.Organization, k.Stack, k.Customer}
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
	Pools      = "pools"
	VerbSelect = "select"
	VerbInject = "inject"
)

// Name is the Role, RoleBinding and ServiceAccount subject in each namespace
// an organization holds. The fixed name makes the namespace one
// organization's: a second one finds it held.
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
	// InjectPolicyName adds the node selector and tolerations of the pool the
	// Role names for injection.
	InjectPolicyName = "kiso-placement-inject"
)

// Annotations on PolicyName: what the cluster's policies enforce, for the
// isolation function to tell a claim.
const (
	AnnotationKeyDomain          = "kiso.dev/key-domain"
	AnnotationPlatformNamespaces = "kiso.dev/platform-namespaces"
	AnnotationInjectAPIVersion   = "kiso.dev/inject-api-version"
	AnnotationCluster            = "kiso.dev/cluster"
)

// PoolAnnotation on the Role names the pool its namespace's pods run on, for
// the message a refused pod gets.
const PoolAnnotation = "kiso.dev/pool"

// Pool names a pool in a grant: "o" in organization isolation, "o.s" in stack
// isolation. Organization and stack names hold no ".".
func Pool(organization, stack string) string {
	if stack == "" {
		return organization
	}
	return organization + "." + stack
}

// ExemptLabel on a namespace makes it a platform namespace: its pods may
// tolerate every taint. Tenants cannot label namespaces; platforms can.
func ExemptLabel(keyDomain string) string { return keyDomain + "/placement-exempt" }

// SplitList reads a comma-separated annotation value.
func SplitList(v string) []string {
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}
