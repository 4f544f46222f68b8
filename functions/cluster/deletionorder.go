package main

import (
	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/kiso-dev/kiso/functions/internal/names"
	"github.com/kiso-dev/kiso/functions/internal/placement"
	"github.com/kiso-dev/kiso/functions/internal/remote"
	"github.com/kiso-dev/kiso/functions/internal/typed"
)

// Deletion order costs nothing while nothing is deleted. Admission policies
// evaluated on DELETE only refuse to delete what tenant nodes still need,
// each reading as params the objects that must go first:
//   - a tenant NodeClass, while a NodePool launches nodes from it (in the
//     cluster the pools live in: this one, or the workload cluster);
//   - the XKarpenterCluster, while a tenant NodePool or NodeClass is bound
//     to it, so Karpenter, its permissions and the placement policies stay
//     until the last tenant node is gone: Karpenter keeps an EC2NodeClass
//     (its termination finalizer) until no NodeClaim refers to it;
//   - an organization's dedicated role, instance profile, access entry and
//     policy attachments, while an EC2NodeClass names the instance profile.
//
// Releases before this one ordered the same deletions with a ClusterUsage per
// pool and per dedicated identity, which Crossplane polls every minute with
// three requests each: at a thousand organizations most of what an idle
// fleet cost. A refused deletion is not replayed as a Usage replays it: the
// garbage collector retries it (backing off), and an operator who deleted
// the XKarpenterCluster too early deletes it again. The cluster's own objects
// are still kept by its few Usages (renderUsages), a constant per cluster.
const (
	crNodeClassGuardPolicy  resource.Name = "deletion-order-nodeclass-policy"
	crNodeClassGuardBinding resource.Name = "deletion-order-nodeclass-binding"
	crClusterGuardPolicy    resource.Name = "deletion-order-policy"
	crClusterGuardBinding   resource.Name = "deletion-order-binding"
	crPoolsGuardPolicy      resource.Name = "deletion-order-pools-policy"
	crPoolsGuardBinding     resource.Name = "deletion-order-pools-binding"
)

// nodeClassGuardName is the policy that keeps tenant NodeClasses. One per
// cluster the pools live in, so its name is fixed, as the placement
// policies' are.
const nodeClassGuardName = "kiso-nodeclass-in-use"

// deletionOrder is what the cluster's deletion policies need to know.
type deletionOrder struct {
	// Cluster is the XKarpenterCluster's name.
	Cluster string
	// ProviderConfig names the workload cluster's ProviderConfig, "" for
	// this cluster.
	ProviderConfig string
	// ClusterAnnotation is where a tenant pool's NodePool and NodeClass say
	// which cluster they are bound to; InstanceProfileAnnotation is where an
	// organization's dedicated identity objects say their instance profile.
	ClusterAnnotation         string
	InstanceProfileAnnotation string
}

// deletionOrdering is the order of the cluster's deletion, one concern: the Usages that keep each AWS object
// while what uses it is there, and the policy that keeps a tenant NodeClass while a NodePool launches from it,
// composed where the pools are (render); and the policies that keep the XKarpenterCluster and the organizations'
// dedicated identities while a tenant pool is bound to it, beside the XR (renderBeside).
type deletionOrdering struct{}

// render composes the Usages of what the concerns before it rendered, and the NodeClass guard.
func (deletionOrdering) render(r *state) error {
	for name, cd := range renderUsages(r.plan, r.name(), r.objects) {
		r.objects[name] = cd
	}
	guards, err := renderNodeClassGuard()
	if err != nil {
		return err
	}
	for name, cd := range guards {
		r.objects[name] = cd
	}
	return nil
}

// renderBeside composes the guards of the cluster and of the organizations' dedicated identities beside the XR.
func (deletionOrdering) renderBeside(r *state) error {
	providerConfig, _ := r.Spec.Remote()
	guards, err := newDeletionOrder(r.name(), providerConfig, r.placement.KeyDomain).renderClusterGuards()
	if err != nil {
		return err
	}
	for name, cd := range guards {
		r.objects[name] = cd
	}
	return nil
}

func newDeletionOrder(cluster string, remoteProviderConfig string, domain string) deletionOrder {
	return deletionOrder{
		Cluster:                   cluster,
		ProviderConfig:            remoteProviderConfig,
		ClusterAnnotation:         placement.NewRolloutAnnotations(domain).Cluster,
		InstanceProfileAnnotation: placement.NewKeys(domain).InstanceProfile,
	}
}

// Karpenter's kinds the policies read as params.
var (
	nodePoolParam     = &admissionv1.ParamKind{APIVersion: "karpenter.sh/v1", Kind: "NodePool"}
	ec2NodeClassParam = &admissionv1.ParamKind{APIVersion: "karpenter.k8s.aws/v1", Kind: "EC2NodeClass"}
	objectParam       = &admissionv1.ParamKind{APIVersion: remote.ObjectAPIVersion, Kind: remote.ObjectKind}
)

// renderNodeClassGuard returns the policy that keeps a tenant NodeClass
// while a NodePool launches from it, with its binding, in the cluster the
// pools live in (the caller wraps them for a workload cluster). Karpenter
// keeps an EC2NodeClass while NodeClaims refer to it; nothing keeps it from
// being deleted under a NodePool that will launch more, which would leave the
// pool unable to launch until the organization's claim is deleted.
func renderNodeClassGuard() (map[resource.Name]*composed.Unstructured, error) {
	ref := "params.spec.template.spec.nodeClassRef"
	policy := &admissionv1.ValidatingAdmissionPolicy{
		TypeMeta:   validatingPolicyType,
		ObjectMeta: metav1.ObjectMeta{Name: nodeClassGuardName},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionv1.Fail),
			ParamKind:     nodePoolParam,
			MatchConstraints: &admissionv1.MatchResources{
				// The NodeClass kind is the platform's reference's: any kind, of kiso's objects.
				ResourceRules:  deleteOf([]string{"*"}, "*"),
				ObjectSelector: managedByKiso(),
			},
			MatchConditions: []admissionv1.MatchCondition{{Name: "nodeclass", Expression: "request.kind.kind.endsWith('NodeClass')"}},
			Validations: []admissionv1.Validation{{
				Expression: "!(has(" + ref + ") && " + ref + ".name == oldObject.metadata.name && " + ref + ".kind == request.kind.kind && " +
					"(has(" + ref + ".group) ? " + ref + ".group : '') == request.kind.group)",
				MessageExpression: "request.kind.kind + ' ' + oldObject.metadata.name + ' is in use: NodePool ' + params.metadata.name + ' launches its nodes from it. " +
					"Delete the NodePool first; deleting the organization\\'s claim deletes both, in this order'",
			}},
		},
	}
	return composedPolicies(map[resource.Name]runtime.Object{
		crNodeClassGuardPolicy:  policy,
		crNodeClassGuardBinding: paramsBinding(nodeClassGuardName),
	})
}

// clusterGuardName names the policy, and its binding, that keeps the XKarpenterCluster of that name. An XR name
// may be as long as any object name, so a long one is shortened with a hash of the whole.
func clusterGuardName(cluster string) string {
	return names.Shorten(validation.DNS1123SubdomainMaxLength, "kiso-deletion-order."+cluster)
}

// poolsGuardName names the policy, and its binding, that keeps the XKarpenterCluster of that name while its
// tenant NodePools are there; shortened like clusterGuardName.
func poolsGuardName(cluster string) string {
	return names.Shorten(validation.DNS1123SubdomainMaxLength, "kiso-deletion-order-pools."+cluster)
}

// renderClusterGuards returns the policies that keep the XKarpenterCluster
// and organizations' dedicated identities, in the management cluster, where
// both are: for a workload cluster, with the provider-kubernetes Objects of
// its tenant pools as params; here, with the pools themselves (an
// EC2NodeClass outlives its NodePool while its nodes drain).
func (d deletionOrder) renderClusterGuards() (map[resource.Name]*composed.Unstructured, error) {
	name := clusterGuardName(d.Cluster)
	objects := map[resource.Name]runtime.Object{crClusterGuardBinding: paramsBinding(name)}
	if d.ProviderConfig != "" {
		objects[crClusterGuardPolicy] = d.clusterGuard(name, objectParam, admissionv1.Fail, []admissionv1.Variable{
			{Name: "manifest", Expression: "has(params.spec.forProvider) && has(params.spec.forProvider.manifest) ? params.spec.forProvider.manifest : {}"},
			{Name: "kind", Expression: "'kind' in variables.manifest ? string(variables.manifest.kind) : ''"},
			{Name: "metadata", Expression: "'metadata' in variables.manifest ? variables.manifest.metadata : {}"},
			{Name: "name", Expression: "'name' in variables.metadata ? string(variables.metadata.name) : ''"},
			{Name: "poolObject", Expression: "has(params.spec.providerConfigRef) && params.spec.providerConfigRef.name == " + cq(d.ProviderConfig) +
				" && (variables.kind == 'NodePool' || variables.kind.endsWith('NodeClass'))"},
			{Name: "boundHere", Expression: "variables.poolObject && 'annotations' in variables.metadata && " + cq(d.ClusterAnnotation) + " in variables.metadata.annotations && " +
				"variables.metadata.annotations[" + cq(d.ClusterAnnotation) + "] == " + cq(d.Cluster)},
			{Name: "profile", Expression: "variables.kind == 'EC2NodeClass' && 'spec' in variables.manifest && 'instanceProfile' in variables.manifest.spec ? " +
				"string(variables.manifest.spec.instanceProfile) : ''"},
		})
	} else {
		// Ignore: before Karpenter is installed its kinds are not served, and then no pool can use the
		// cluster; a cluster deleted then must go.
		objects[crClusterGuardPolicy] = d.clusterGuard(name, ec2NodeClassParam, admissionv1.Ignore, []admissionv1.Variable{
			{Name: "kind", Expression: "'EC2NodeClass'"},
			{Name: "name", Expression: "params.metadata.name"},
			{Name: "boundHere", Expression: "has(params.metadata.annotations) && " + cq(d.ClusterAnnotation) + " in params.metadata.annotations && " +
				"params.metadata.annotations[" + cq(d.ClusterAnnotation) + "] == " + cq(d.Cluster)},
			{Name: "profile", Expression: "has(params.spec.instanceProfile) ? params.spec.instanceProfile : ''"},
		})
		poolsName := poolsGuardName(d.Cluster)
		objects[crPoolsGuardPolicy] = d.poolsGuard(poolsName)
		objects[crPoolsGuardBinding] = paramsBinding(poolsName)
	}
	return composedPolicies(objects)
}

// clusterGuard refuses to delete the XKarpenterCluster while a param is a tenant pool bound to it, and an
// organization's dedicated identity object while a param is an EC2NodeClass that names its instance profile.
// The variables say, of each param: kind and name (of the pool object), boundHere, profile.
func (d deletionOrder) clusterGuard(name string, param *admissionv1.ParamKind, failure admissionv1.FailurePolicyType, vars []admissionv1.Variable) *admissionv1.ValidatingAdmissionPolicy {
	profile := cq(d.InstanceProfileAnnotation)
	return &admissionv1.ValidatingAdmissionPolicy{
		TypeMeta:   validatingPolicyType,
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy:    ptr.To(failure),
			ParamKind:        param,
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: append(deleteOf([]string{"kiso.dev"}, "xkarpenterclusters"), identityRules()...)},
			MatchConditions: []admissionv1.MatchCondition{{
				Name: "guarded",
				Expression: "request.kind.group == 'kiso.dev' ? oldObject.metadata.name == " + cq(d.Cluster) +
					" : has(oldObject.metadata.annotations) && " + profile + " in oldObject.metadata.annotations",
			}},
			Variables: vars,
			Validations: []admissionv1.Validation{
				{
					Expression: "request.kind.group != 'kiso.dev' || !variables.boundHere",
					MessageExpression: "'XKarpenterCluster " + d.Cluster + " is in use: ' + variables.kind + ' ' + variables.name + ' of an organization is bound to it, and its nodes need " +
						"Karpenter, its permissions and the placement policies until they are gone. Delete the organizations bound to it (their claims) first, " +
						"then delete the cluster again once their pools are gone'",
				},
				{
					Expression: "request.kind.group == 'kiso.dev' || variables.profile != oldObject.metadata.annotations[" + profile + "]",
					MessageExpression: "request.kind.kind + ' ' + oldObject.metadata.name + ' is in use: EC2NodeClass ' + variables.name + ' launches nodes with instance profile ' + " +
						"variables.profile + ', whose identity it is part of; it goes once that NodeClass, and so its last node, is gone'",
				},
			},
		},
	}
}

// poolsGuard refuses to delete the XKarpenterCluster while a tenant NodePool is bound to it. The EC2NodeClass
// guard covers the nodes that drain after their NodePool is gone; this one, pools of any NodeClass kind.
func (d deletionOrder) poolsGuard(name string) *admissionv1.ValidatingAdmissionPolicy {
	annotation := cq(d.ClusterAnnotation)
	return &admissionv1.ValidatingAdmissionPolicy{
		TypeMeta:   validatingPolicyType,
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			// Ignore: see the EC2NodeClass guard.
			FailurePolicy:    ptr.To(admissionv1.Ignore),
			ParamKind:        nodePoolParam,
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: deleteOf([]string{"kiso.dev"}, "xkarpenterclusters")},
			MatchConditions:  []admissionv1.MatchCondition{{Name: "guarded", Expression: "oldObject.metadata.name == " + cq(d.Cluster)}},
			Validations: []admissionv1.Validation{{
				Expression: "!(has(params.metadata.annotations) && " + annotation + " in params.metadata.annotations && params.metadata.annotations[" + annotation + "] == " + cq(d.Cluster) + ")",
				MessageExpression: "'XKarpenterCluster " + d.Cluster + " is in use: NodePool ' + params.metadata.name + ' of an organization is bound to it, and its nodes need " +
					"Karpenter, its permissions and the placement policies until they are gone. Delete the organizations bound to it (their claims) first, " +
					"then delete the cluster again once their pools are gone'",
			}},
		},
	}
}

// identityRules match deleting the kinds of an organization's dedicated identity.
func identityRules() []admissionv1.NamedRuleWithOperations {
	return append(deleteOf([]string{"iam.aws.upbound.io"}, "roles", "instanceprofiles", "rolepolicyattachments"),
		deleteOf([]string{"eks.aws.upbound.io"}, "accessentries")...)
}

// deleteOf matches deleting the resources of the groups, any version.
func deleteOf(groups []string, resources ...string) []admissionv1.NamedRuleWithOperations {
	return []admissionv1.NamedRuleWithOperations{{RuleWithOperations: admissionv1.RuleWithOperations{
		Operations: []admissionv1.OperationType{admissionv1.Delete},
		Rule:       admissionv1.Rule{APIGroups: groups, APIVersions: []string{"*"}, Resources: resources},
	}}}
}

func managedByKiso() *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{placement.ManagedByLabel: placement.ManagedByValue}}
}

// paramsBinding binds the policy of that name with every object of its param kind kiso composes as params,
// each evaluated: none is no refusal.
func paramsBinding(name string) *admissionv1.ValidatingAdmissionPolicyBinding {
	return &admissionv1.ValidatingAdmissionPolicyBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "ValidatingAdmissionPolicyBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ParamRef:          &admissionv1.ParamRef{Selector: managedByKiso(), ParameterNotFoundAction: ptr.To(admissionv1.AllowAction)},
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
		},
	}
}

// composedPolicies converts policies and bindings for composing, labelled as kiso's.
func composedPolicies(objects map[resource.Name]runtime.Object) (map[resource.Name]*composed.Unstructured, error) {
	out := make(map[resource.Name]*composed.Unstructured, len(objects))
	for name, o := range objects {
		cd, err := typed.Composed(o)
		if err != nil {
			return nil, errors.Wrapf(err, "cannot convert %s", name)
		}
		cd.SetLabels(map[string]string{placement.ManagedByLabel: placement.ManagedByValue})
		out[name] = cd
	}
	return out, nil
}
