package main

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/response"

	"github.com/kiso-dev/kiso/functions/internal/fnstate"
	"github.com/kiso-dev/kiso/functions/internal/ownership"
	"github.com/kiso-dev/kiso/functions/internal/placement"
)

// Placement exempts a platform namespace by its name, and a name is
// anyone's who creates it first: crossplane-system, say, exists where
// Crossplane runs and not in a workload cluster. The namespace policy lets
// only the platform create one (namespacePolicy); the cluster also says
// which do not exist, so that a platform listing one it never meant to run
// there finds out, rather than trusting a name silently.

// Condition of the cluster's platform namespaces.
const (
	TypePlatformNamespaces = "PlatformNamespacesExist"
	ReasonAllExist         = "AllExist"
	ReasonSomeMissing      = "SomeMissing"
)

// requirePlatformNamespacePrefix prefixes the required resource under which
// Crossplane returns each platform namespace a user could create.
const requirePlatformNamespacePrefix = "platform-namespace/"

var namespaceGVK = corev1.SchemeGroupVersion.WithKind("Namespace")

// requirePlatformNamespaces asks for each platform namespace a user could
// create (in the workload cluster, for a remote one: the reads go there).
func requirePlatformNamespaces(rs map[string]*fnv1.ResourceSelector, pp placementPlan) {
	for _, ns := range pp.namesExemptByName() {
		rs[requirePlatformNamespacePrefix+ns] = ownership.ByName(namespaceGVK, "", ns)
	}
}

// platformNamespaces is which platform namespaces a user could create do not exist, once Crossplane has
// answered for every one: a concern that asks for each (require), reads the answers (resolve) and says which are
// missing (report), the namespaces being the placement plan's.
type platformNamespaces struct {
	answered bool
	missing  []string
}

// require asks for each platform namespace a user could create.
func (ns *platformNamespaces) require(r *state) {
	requirePlatformNamespaces(r.required, r.placement)
}

// resolve reads which of them exist.
func (ns *platformNamespaces) resolve(r *state) {
	*ns = resolvePlatformNamespaces(r.Req, r.placement)
}

// resolvePlatformNamespaces reads Crossplane's answers for the platform namespaces a user could create.
func resolvePlatformNamespaces(req *fnv1.RunFunctionRequest, pp placementPlan) platformNamespaces {
	var ns platformNamespaces
	for _, name := range pp.namesExemptByName() {
		found, resolved := fnstate.Required(req, requirePlatformNamespacePrefix+name)
		if !resolved {
			return platformNamespaces{}
		}
		if len(found) == 0 {
			ns.missing = append(ns.missing, name)
		}
	}
	ns.answered = true
	return ns
}

// report says which platform namespaces do not exist, once Crossplane has answered for every one.
func (ns *platformNamespaces) report(r *state) {
	rsp := r.Rsp
	if !ns.answered {
		return
	}
	if len(ns.missing) == 0 {
		response.ConditionTrue(rsp, TypePlatformNamespaces, ReasonAllExist).TargetComposite()
		return
	}
	response.ConditionFalse(rsp, TypePlatformNamespaces, ReasonSomeMissing).
		WithMessage("platform namespaces " + strings.Join(ns.missing, ", ") + " do not exist in the cluster: placement exempts them by name, so policy " +
			placement.NamespacePolicyName + " lets only the platform create them (who holds " + placement.VerbLabel + " on " + placement.Namespaces + "." + placement.Group +
			"); drop them from the function input's platformNamespaces if the platform runs nothing there").
		TargetComposite()
}
