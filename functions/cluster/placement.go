package main

import (
	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	xpv1 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/fnstate"
	"github.com/kiso-dev/kiso/functions/internal/placement"
	"github.com/kiso-dev/kiso/functions/internal/ready"
	"github.com/kiso-dev/kiso/functions/internal/remote"
	"github.com/kiso-dev/kiso/functions/internal/typed"
)

// Placement is enforced at admission, for every pod of the cluster, by
// policies whose cost does not grow with the number of organizations: none
// of them lists an organization. Which organization a namespace is comes
// from its label, which only the platform may set (the namespace policy);
// which stacks and pool its pods may use is in the namespace itself, in the
// Role kiso-placement that the isolation function composes there, which the
// policies read as their parameter. Pod policies make no authorizer call: a
// pod's admission costs the same with one organization or a thousand.

// placementPolicies is the cluster's admission policies, one concern through every phase it takes part in: it
// plans them from the spec and the keys, and asks which MutatingAdmissionPolicy API the apiserver serves and, in
// Audit, which pods the policy would refuse (require); reads the answers (resolve); renders the policies and
// publishes in the XR's status what they enforce (render); and says what an auditing cluster would refuse
// (report). Which platform namespaces exist is a concern of its own (platformNamespaces), read from the plan.
type placementPolicies struct {
	audit placementAudit
}

// require asks for what the policies depend on; begin planned them, with the keys (the platform namespaces read
// the plan too).
func (p *placementPolicies) require(r *state) {
	r.schemas = requireInjectAPI(r.required, r.Req, r.In, r.workload != nil)
	p.audit = placementAudit{on: r.placement.audits()}
	p.audit.require(r.required)
}

// resolve reads the MutatingAdmissionPolicy API served and what the audit found.
func (p *placementPolicies) resolve(r *state) {
	r.placement.InjectAPIVersion = injectAPIVersion(r.Req, r.In, r.Observed, r.workload)
	p.audit.resolve(r.Req, r.placement)
}

// render publishes in the XR's status what the policies enforce and what the audit found, and composes the
// policies and their bindings.
func (p *placementPolicies) render(r *state) error {
	r.status.Placement = publishedPlacement(r.Observed)
	r.status.PlacementAudit = p.audit.status()
	policies, err := renderPlacement(r.placement)
	if err != nil {
		return err
	}
	for name, cd := range policies {
		r.objects[name] = cd
	}
	return nil
}

// report says what an auditing cluster would refuse.
func (p *placementPolicies) report(r *state) {
	p.audit.report(r.Rsp, r.placement)
}

// Composed resource names of the placement policies.
const (
	crPlacementPolicy        resource.Name = "placement-policy"
	crPlacementBinding       resource.Name = "placement-binding"
	crPlacementAuditBinding  resource.Name = "placement-audit-binding"
	crPlacementPoolsPolicy   resource.Name = "placement-pools-policy"
	crPlacementPoolsBinding  resource.Name = "placement-pools-binding"
	crPlacementWarnPolicy    resource.Name = "placement-warn-policy"
	crPlacementWarnBinding   resource.Name = "placement-warn-binding"
	crPlacementInjectPolicy  resource.Name = "placement-inject-policy"
	crPlacementInjectBinding resource.Name = "placement-inject-binding"
	// The policy on pod bindings, and its binding.
	crPlacementBindingPolicy  resource.Name = "placement-pod-binding-policy"
	crPlacementBindingBinding resource.Name = "placement-pod-binding-binding"
	crNamespacePolicy         resource.Name = "namespace-identity-policy"
	crNamespaceBinding        resource.Name = "namespace-identity-binding"
)

// validatingPolicyType is the kind of the placement policies.
var validatingPolicyType = metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "ValidatingAdmissionPolicy"}

// publishedPlacement is what the cluster's placement policy says it enforces, as observed where it is composed:
// its annotations once it is there. In a workload cluster that is the policy as provider-kubernetes last observed
// it there, once it reports its Object Ready: an update it could not apply leaves the Object Ready and the old
// policy in force, so the manifest the Object asks for is not what is published. Organizations of a workload
// cluster read it from the cluster's view rather than each reading the policy there; nil until then, and they
// read the policy themselves meanwhile.
func publishedPlacement(observed fnstate.Observed) *v1alpha1.PlacementPolicyStatus {
	oc, ok := observed.Get(crPlacementPolicy)
	if !ok {
		return nil
	}
	policy := oc.Resource
	if policy.GroupVersionKind().GroupKind() == remote.ObjectGVK.GroupKind() {
		inForce, observed := remote.InForce(policy)
		if !ready.IsTrue(oc, xpv1.TypeReady) || !observed {
			return nil
		}
		policy = inForce
	}
	published := placement.Published(policy.GetAnnotations())
	if published.Cluster == "" {
		return nil
	}
	return &published
}

// renderPlacement returns the cluster's placement policies and bindings.
func renderPlacement(pp placementPlan) (map[resource.Name]*composed.Unstructured, error) {
	objects := map[resource.Name]runtime.Object{}
	objects[crPlacementPolicy], objects[crPlacementBinding] = pp.policy()
	if pp.audits() {
		objects[crPlacementAuditBinding] = pp.auditBinding()
	}
	objects[crPlacementPoolsPolicy], objects[crPlacementPoolsBinding] = pp.poolsPolicy()
	objects[crPlacementWarnPolicy], objects[crPlacementWarnBinding] = pp.warnPolicy()
	objects[crPlacementBindingPolicy], objects[crPlacementBindingBinding] = pp.bindingPolicy()
	objects[crNamespacePolicy], objects[crNamespaceBinding] = pp.namespacePolicy()
	out := make(map[resource.Name]*composed.Unstructured, len(objects)+2)
	if pp.InjectAPIVersion != "" {
		objects[crPlacementInjectPolicy], objects[crPlacementInjectBinding] = pp.injectPolicy()
	}
	for name, o := range objects {
		cd, err := typed.Composed(o)
		if err != nil {
			return nil, errors.Wrapf(err, "cannot convert %s", name)
		}
		cd.SetLabels(map[string]string{placement.ManagedByLabel: placement.ManagedByValue})
		if name == crPlacementInjectPolicy || name == crPlacementInjectBinding {
			cd.SetAPIVersion(pp.InjectAPIVersion)
		}
		out[name] = cd
	}
	return out, nil
}
