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

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/aws"
	"github.com/kiso-dev/kiso/functions/internal/awsmanaged"
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
	spec := awsmanaged.NewResourceSpec(id.ProviderConfigName, id.Orphan)
	roleRef := &awsmanaged.Reference{Name: id.ObjectName}

	role := &awsmanaged.Role{
		ObjectMeta: ownership.ObjectMeta(id.ObjectName, id.RoleName, id.Labels),
		Spec: awsmanaged.RoleSpec{ResourceSpec: spec, ForProvider: awsmanaged.RoleParameters{
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
		ResourceInstanceProfile: &awsmanaged.InstanceProfile{
			ObjectMeta: ownership.ObjectMeta(id.ObjectName, id.ProfileName, id.Labels),
			Spec: awsmanaged.InstanceProfileSpec{ResourceSpec: spec, ForProvider: awsmanaged.InstanceProfileParameters{
				Path:    ptr.To(id.Path),
				RoleRef: roleRef,
				Tags:    id.Tags,
			}},
		},
		ResourceAccessEntry: &awsmanaged.AccessEntry{
			ObjectMeta: ownership.ObjectMeta(id.ObjectName, "", id.Labels),
			Spec: awsmanaged.AccessEntrySpec{ResourceSpec: spec, ForProvider: awsmanaged.AccessEntryParameters{
				Region:                  ptr.To(id.Region),
				ClusterName:             ptr.To(id.ClusterName),
				PrincipalArnFromRoleRef: roleRef,
				Type:                    ptr.To(accessEntryType),
				Tags:                    id.Tags,
			}},
		},
	}
	for _, np := range aws.NodePolicies {
		out[ResourcePolicyPrefix+resource.Name(np.Key)] = &awsmanaged.RolePolicyAttachment{
			ObjectMeta: ownership.ObjectMeta(names.Join(names.MaxLabelValue, id.ObjectName, np.Key), "", id.Labels),
			Spec: awsmanaged.RolePolicyAttachmentSpec{ResourceSpec: spec, ForProvider: awsmanaged.RolePolicyAttachmentParameters{
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
	role := usage.RefOf(awsmanaged.RoleKind, id.ObjectName)
	out := map[resource.Name]usage.Usage{
		ResourceUsagePrefix + ResourceAccessEntry: {
			Name: names.Join(maxUsageName, id.ObjectName, "access-entry-used-by-role"),
			Of:   usage.RefOf(awsmanaged.AccessEntryKind, id.ObjectName),
			By:   role,
		},
	}
	for _, np := range aws.NodePolicies {
		attachment := names.Join(names.MaxLabelValue, id.ObjectName, np.Key)
		out[ResourceUsagePrefix+ResourcePolicyPrefix+resource.Name(np.Key)] = usage.Usage{
			Name: names.Join(maxUsageName, attachment, "attachment-used-by-role"),
			Of:   usage.RefOf(awsmanaged.RolePolicyAttachmentKind, attachment),
			By:   role,
		}
	}
	return out
}

// RoleARN is the role's ARN, known before AWS creates it.
func (id Identity) RoleARN(account string) string {
	return aws.RoleARN(id.Partition, account, id.Path, id.RoleName)
}
