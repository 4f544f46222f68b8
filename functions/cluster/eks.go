package main

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	xpv1 "github.com/crossplane/crossplane-runtime/v2/apis/common/v1"
	"github.com/crossplane/function-sdk-go/resource"

	eksv1beta1 "github.com/upbound/provider-aws/v2/apis/cluster/eks/v1beta1"

	"github.com/kiso-dev/kiso/functions/internal/ownership"
)

// renderEKS returns, in Pod Identity mode, the association of the
// controller's service account with its role. (The node role's access entry
// is part of the node identity, see renderIAM.)
func renderEKS(p plan) map[resource.Name]runtime.Object {
	out := map[resource.Name]runtime.Object{}
	if p.PodIdentity {
		out[crPodIdentity] = &eksv1beta1.PodIdentityAssociation{
			ObjectMeta: ownership.ObjectMeta(p.objectName("controller"), "", nil),
			Spec: eksv1beta1.PodIdentityAssociationSpec{
				ResourceSpec: resourceSpec(p),
				ForProvider: eksv1beta1.PodIdentityAssociationParameters_2{
					Region:         ptr.To(p.Region),
					ClusterName:    ptr.To(p.Cluster),
					Namespace:      ptr.To(p.Spec.Karpenter.Namespace),
					ServiceAccount: ptr.To(p.Spec.Karpenter.ServiceAccount),
					RoleArnRef:     &xpv1.Reference{Name: p.ControllerRoleResource},
					Tags:           p.Tags,
				},
			},
		}
	}
	return out
}
