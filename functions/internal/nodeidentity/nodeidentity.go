// Package nodeidentity renders the AWS identity of a group of Karpenter
// nodes: an IAM role EC2 may assume, with the AWS-managed policies a node
// needs, its instance profile, and the EKS access entry that lets its
// instances join the cluster as nodes. The cluster function renders one for
// the cluster's shared node role, the isolation function one per
// organization with a Dedicated node role.
package nodeidentity

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	xpv1 "github.com/crossplane/crossplane-runtime/v2/apis/common/v1"
	"github.com/crossplane/function-sdk-go/resource"

	eksv1beta1 "github.com/upbound/provider-aws/v2/apis/cluster/eks/v1beta1"
	iamv1beta1 "github.com/upbound/provider-aws/v2/apis/cluster/iam/v1beta1"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/aws"
	"github.com/kiso-dev/kiso/functions/internal/names"
	"github.com/kiso-dev/kiso/functions/internal/ownership"
	"github.com/kiso-dev/kiso/functions/internal/usage"
)

// Composed resource names of an identity's objects.
const (
	ResourceRole            resource.Name = "node-role"
	ResourceInstanceProfile resource.Name = "node-instance-profile"
	ResourceAccessEntry     resource.Name = "node-access-entry"
	// ResourcePolicyPrefix is followed by the policy's key (aws.NodePolicies).
	ResourcePolicyPrefix = "node-policy-attachment-"
	// ResourceUsagePrefix is followed by the composed resource name of the
	// object the role keeps.
	ResourceUsagePrefix = "node-usage-"
)

// maxUsageName is the longest name a ClusterUsage may have.
const maxUsageName = 253

// accessEntryType lets the role's instances join the cluster as Linux
// nodes; EKS forbids a username and groups on it.
const accessEntryType = "EC2_LINUX"

// An Identity describes one node identity.
type Identity struct {
	// ObjectName is the Kubernetes name of the role, instance profile and
	// access entry; policy attachments append their policy's key (shortened
	// with a hash to 63 characters).
	ObjectName string

	// RoleName and ProfileName are the AWS names.
	RoleName    string
	ProfileName string

	// Path is the IAM path of the role and the instance profile.
	Path string

	// PermissionsBoundary, if set, bounds the role.
	PermissionsBoundary string

	Partition          v1alpha1.Partition
	Region             string
	ClusterName        string
	ProviderConfigName string

	Tags map[string]*string
	// Labels go on every object, besides kiso's managed-by label.
	Labels map[string]string

	// Orphan leaves the identity in AWS when its objects are deleted: for an
	// identity kiso took over rather than created.
	Orphan bool
}

// Objects returns the identity's managed resources by composed resource name.
func (id Identity) Objects() map[resource.Name]runtime.Object {
	spec := xpv1.ResourceSpec{ProviderConfigReference: &xpv1.Reference{Name: id.ProviderConfigName}}
	if id.Orphan {
		spec.DeletionPolicy = xpv1.DeletionOrphan
	}
	roleRef := &xpv1.Reference{Name: id.ObjectName}

	role := &iamv1beta1.Role{
		ObjectMeta: ownership.ObjectMeta(id.ObjectName, id.RoleName, id.Labels),
		Spec: iamv1beta1.RoleSpec{ResourceSpec: spec, ForProvider: iamv1beta1.RoleParameters{
			AssumeRolePolicy: ptr.To(aws.NodeTrust(id.Partition).JSON()),
			// The role goes last (Usages): deleting it detaches its policies,
			// which IAM requires and the attachments, still kept, would not.
			ForceDetachPolicies: ptr.To(true),
			Path:                ptr.To(id.Path),
			Tags:                id.Tags,
		}},
	}
	if id.PermissionsBoundary != "" {
		role.Spec.ForProvider.PermissionsBoundary = ptr.To(id.PermissionsBoundary)
	}
	out := map[resource.Name]runtime.Object{
		ResourceRole: role,
		ResourceInstanceProfile: &iamv1beta1.InstanceProfile{
			ObjectMeta: ownership.ObjectMeta(id.ObjectName, id.ProfileName, id.Labels),
			Spec: iamv1beta1.InstanceProfileSpec{ResourceSpec: spec, ForProvider: iamv1beta1.InstanceProfileParameters{
				Path:    ptr.To(id.Path),
				RoleRef: roleRef,
				Tags:    id.Tags,
			}},
		},
		ResourceAccessEntry: &eksv1beta1.AccessEntry{
			ObjectMeta: ownership.ObjectMeta(id.ObjectName, "", id.Labels),
			Spec: eksv1beta1.AccessEntrySpec{ResourceSpec: spec, ForProvider: eksv1beta1.AccessEntryParameters{
				Region:                  ptr.To(id.Region),
				ClusterName:             ptr.To(id.ClusterName),
				PrincipalArnFromRoleRef: roleRef,
				Type:                    ptr.To(accessEntryType),
				Tags:                    id.Tags,
			}},
		},
	}
	for _, np := range aws.NodePolicies {
		out[ResourcePolicyPrefix+resource.Name(np.Key)] = &iamv1beta1.RolePolicyAttachment{
			ObjectMeta: ownership.ObjectMeta(names.Join(names.MaxLabelValue, id.ObjectName, np.Key), "", id.Labels),
			Spec: iamv1beta1.RolePolicyAttachmentSpec{ResourceSpec: spec, ForProvider: iamv1beta1.RolePolicyAttachmentParameters{
				RoleRef:   roleRef,
				PolicyArn: ptr.To(aws.ManagedPolicyARN(id.Partition, np.Name)),
			}},
		}
	}
	return out
}

// Usages keep the access entry and the policy attachments while the role
// exists: the role itself is kept by whatever uses it (NodeClasses, or the
// cluster's controller role), so nodes keep joining the cluster and keep
// their permissions until their NodeClass, and so their last node, is gone.
func (id Identity) Usages() map[resource.Name]usage.Usage {
	role := usage.RefOf(iamv1beta1.Role_GroupVersionKind, id.ObjectName)
	out := map[resource.Name]usage.Usage{
		ResourceUsagePrefix + ResourceAccessEntry: {
			Name: names.Join(maxUsageName, id.ObjectName, "access-entry-used-by-role"),
			Of:   usage.RefOf(eksv1beta1.AccessEntry_GroupVersionKind, id.ObjectName),
			By:   role,
		},
	}
	for _, np := range aws.NodePolicies {
		attachment := names.Join(names.MaxLabelValue, id.ObjectName, np.Key)
		out[ResourceUsagePrefix+ResourcePolicyPrefix+resource.Name(np.Key)] = usage.Usage{
			Name: names.Join(maxUsageName, attachment, "attachment-used-by-role"),
			Of:   usage.RefOf(iamv1beta1.RolePolicyAttachment_GroupVersionKind, attachment),
			By:   role,
		}
	}
	return out
}

// RoleARN is the role's ARN, known before AWS creates it.
func (id Identity) RoleARN(account string) string {
	return aws.RoleARN(id.Partition, account, id.Path, id.RoleName)
}
