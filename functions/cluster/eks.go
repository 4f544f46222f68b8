package main

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/kiso-dev/kiso/functions/internal/awsmanaged"
	"github.com/kiso-dev/kiso/functions/internal/ownership"
)

// renderEKS returns, in Pod Identity mode, the association of the
// controller's service account with its role. (The node role's access entry
// is part of the node identity, see renderIAM.)
func renderEKS(p plan) map[resource.Name]runtime.Object {
	out := map[resource.Name]runtime.Object{}
	if p.PodIdentity {
		out[crPodIdentity] = &awsmanaged.PodIdentityAssociation{
			ObjectMeta: ownership.ObjectMeta(p.objectName("controller"), "", nil),
			Spec: awsmanaged.PodIdentityAssociationSpec{
				ResourceSpec: resourceSpec(p),
				ForProvider: awsmanaged.PodIdentityAssociationParameters{
					Region:         ptr.To(p.Region),
					ClusterName:    ptr.To(p.Cluster),
					Namespace:      ptr.To(p.Spec.Karpenter.Namespace),
					ServiceAccount: ptr.To(p.Spec.Karpenter.ServiceAccount),
					RoleArnRef:     &awsmanaged.Reference{Name: p.ControllerRoleResource},
					Tags:           p.Tags,
				},
			},
		}
	}
	return out
}
