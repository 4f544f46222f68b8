package main

import (
	"k8s.io/apimachinery/pkg/runtime"

	xpv1 "github.com/crossplane/crossplane-runtime/v2/apis/common/v1"
	"github.com/crossplane/function-sdk-go/resource"

	eksv1beta1 "github.com/upbound/provider-aws/v2/apis/cluster/eks/v1beta1"
)

// accessEntryType lets the node role's instances join the cluster as nodes;
// EKS forbids a username and groups on it.
const accessEntryType = "EC2_LINUX"

// renderEKS returns the node role's access entry (unless the cluster uses an
// existing instance profile, whose role already has one) and, in Pod
// Identity mode, the association of the controller's service account with
// its role.
func renderEKS(p plan) map[resource.Name]runtime.Object {
	out := map[resource.Name]runtime.Object{}
	if p.CreateNodeRole {
		out[crAccessEntry] = &eksv1beta1.AccessEntry{
			ObjectMeta: objectMeta(p.objectName("node"), ""),
			Spec: eksv1beta1.AccessEntrySpec{
				ResourceSpec: resourceSpec(p),
				ForProvider: eksv1beta1.AccessEntryParameters{
					Region:                  ptr(p.Region),
					ClusterName:             ptr(p.Cluster),
					PrincipalArnFromRoleRef: &xpv1.Reference{Name: p.objectName("node")},
					Type:                    ptr(accessEntryType),
					Tags:                    p.Tags,
				},
			},
		}
	}
	if p.PodIdentity {
		out[crPodIdentity] = &eksv1beta1.PodIdentityAssociation{
			ObjectMeta: objectMeta(p.objectName("controller"), ""),
			Spec: eksv1beta1.PodIdentityAssociationSpec{
				ResourceSpec: resourceSpec(p),
				ForProvider: eksv1beta1.PodIdentityAssociationParameters_2{
					Region:         ptr(p.Region),
					ClusterName:    ptr(p.Cluster),
					Namespace:      ptr(p.Spec.Karpenter.Namespace),
					ServiceAccount: ptr(p.Spec.Karpenter.ServiceAccount),
					RoleArnRef:     &xpv1.Reference{Name: p.objectName("controller")},
					Tags:           p.Tags,
				},
			},
		}
	}
	return out
}
