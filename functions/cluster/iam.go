package main

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/kiso-dev/kiso/functions/internal/aws"
	"github.com/kiso-dev/kiso/functions/internal/awsmanaged"
	"github.com/kiso-dev/kiso/functions/internal/nodeidentity"
	"github.com/kiso-dev/kiso/functions/internal/ownership"
	"github.com/kiso-dev/kiso/functions/internal/placement"
)

// renderIAM returns the controller's role, its six policies (five without
// interruption) and their attachments, and, unless the cluster uses an
// existing instance profile, the node identity: the node role, its policy
// attachments, its instance profile and its EKS access entry.
func renderIAM(p plan) map[resource.Name]runtime.Object {
	out := map[resource.Name]runtime.Object{}
	controllerRole := p.ControllerRoleResource
	out[crControllerRole] = role(p, controllerRole, p.ControllerRoleName, controllerTrust(p.Spec))

	for _, mp := range controllerPolicies(p) {
		name := p.objectName("controller", mp.Key)
		out[crControllerPolicy+resource.Name(mp.Key)] = &awsmanaged.Policy{
			ObjectMeta: ownership.ObjectMeta(name, p.names.policy(mp), nil),
			Spec: awsmanaged.PolicySpec{
				ResourceSpec: resourceSpec(p),
				ForProvider: awsmanaged.PolicyParameters{
					Path:   ptr.To(p.IAMPath),
					Policy: ptr.To(mp.Document.JSON()),
					Tags:   p.Tags,
				},
			},
		}
		out[crControllerAttach+resource.Name(mp.Key)] = &awsmanaged.RolePolicyAttachment{
			ObjectMeta: ownership.ObjectMeta(name, "", nil),
			Spec: awsmanaged.RolePolicyAttachmentSpec{
				ResourceSpec: resourceSpec(p),
				ForProvider: awsmanaged.RolePolicyAttachmentParameters{
					RoleRef:      &awsmanaged.Reference{Name: controllerRole},
					PolicyArnRef: &awsmanaged.Reference{Name: name},
				},
			},
		}
	}

	if !p.CreateNodeRole {
		return out
	}
	for name, o := range nodeIdentity(p).Objects() {
		out[name] = o
	}
	return out
}

// role is an IAM role kiso creates, under the permissions boundary if the
// spec names one.
func role(p plan, objectName, awsName string, trust aws.PolicyDocument) *awsmanaged.Role {
	r := &awsmanaged.Role{
		ObjectMeta: ownership.ObjectMeta(objectName, awsName, nil),
		Spec: awsmanaged.RoleSpec{
			ResourceSpec: resourceSpec(p),
			ForProvider: awsmanaged.RoleParameters{
				AssumeRolePolicy: ptr.To(trust.JSON()),
				// Usages keep the role's policy attachments until the role is
				// gone; deleting it detaches them, as IAM requires.
				ForceDetachPolicies: ptr.To(true),
				Path:                ptr.To(p.IAMPath),
				Tags:                p.Tags,
			},
		},
	}
	if p.Spec.PermissionsBoundary != "" {
		r.Spec.ForProvider.PermissionsBoundary = ptr.To(p.Spec.PermissionsBoundary)
	}
	return r
}

// resourceSpec is what every managed resource shares: its ProviderConfig,
// and, for a setup kiso took over, that it is never deleted from AWS.
func resourceSpec(p plan) awsmanaged.ResourceSpec {
	return awsmanaged.NewResourceSpec(p.Spec.ProviderConfigName, p.TakeOver)
}

// nodeIdentity is the cluster's shared node identity: the role and
// instance profile AWS's template makes, under kiso's names and path.
func nodeIdentity(p plan) nodeidentity.Identity {
	return nodeidentity.Identity{
		ObjectName:          p.objectName("node"),
		RoleName:            p.NodeRoleName,
		ProfileName:         p.InstanceProfileName,
		Path:                p.IAMPath,
		PermissionsBoundary: p.Spec.PermissionsBoundary,
		Partition:           p.Partition,
		Region:              p.Region,
		ClusterName:         p.Cluster,
		ProviderConfigName:  p.Spec.ProviderConfigName,
		Tags:                p.Tags,
		Labels:              map[string]string{placement.ManagedByLabel: placement.ManagedByValue},
		Orphan:              p.TakeOver,
	}
}
