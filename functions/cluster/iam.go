package main

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	xpv1 "github.com/crossplane/crossplane-runtime/v2/apis/common/v1"
	"github.com/crossplane/function-sdk-go/resource"

	iamv1beta1 "github.com/upbound/provider-aws/v2/apis/cluster/iam/v1beta1"
)

// iamPath is the path of every role and policy of AWS's template.
const iamPath = "/"

// nodePolicies are the AWS-managed policies AWS's template attaches to the
// node role, keyed by the suffix of their composed resource names.
var nodePolicies = []struct{ Key, Name string }{
	{"worker-node", "AmazonEKSWorkerNodePolicy"},
	{"cni", "AmazonEKS_CNI_Policy"},
	{"ecr-pull", "AmazonEC2ContainerRegistryPullOnly"},
	{"ssm", "AmazonSSMManagedInstanceCore"},
}

// renderIAM returns the controller's role, its six policies (five without
// interruption) and their attachments, and, unless the cluster uses an
// existing instance profile, the node role, its policy attachments and its
// instance profile.
func renderIAM(p plan) map[resource.Name]runtime.Object {
	out := map[resource.Name]runtime.Object{}
	controllerRole := p.objectName("controller")
	out[crControllerRole] = role(p, controllerRole, p.ControllerRoleName, controllerTrust(p.Spec))

	for _, mp := range controllerPolicies(p) {
		name := p.objectName("controller", mp.Key)
		out[crControllerPolicy+resource.Name(mp.Key)] = &iamv1beta1.Policy{
			ObjectMeta: objectMeta(name, policyName(mp, p.Cluster)),
			Spec: iamv1beta1.PolicySpec{
				ResourceSpec: resourceSpec(p),
				ForProvider: iamv1beta1.PolicyParameters{
					Path:   ptr(iamPath),
					Policy: ptr(mp.Document.JSON()),
					Tags:   p.Tags,
				},
			},
		}
		out[crControllerAttach+resource.Name(mp.Key)] = &iamv1beta1.RolePolicyAttachment{
			ObjectMeta: objectMeta(name, ""),
			Spec: iamv1beta1.RolePolicyAttachmentSpec{
				ResourceSpec: resourceSpec(p),
				ForProvider: iamv1beta1.RolePolicyAttachmentParameters{
					RoleRef:      &xpv1.Reference{Name: controllerRole},
					PolicyArnRef: &xpv1.Reference{Name: name},
				},
			},
		}
	}

	if !p.CreateNodeRole {
		return out
	}
	nodeRole := p.objectName("node")
	out[crNodeRole] = role(p, nodeRole, p.NodeRoleName, nodeTrust(p.Partition))
	for _, np := range nodePolicies {
		out[crNodePolicy+resource.Name(np.Key)] = &iamv1beta1.RolePolicyAttachment{
			ObjectMeta: objectMeta(p.objectName("node", np.Key), ""),
			Spec: iamv1beta1.RolePolicyAttachmentSpec{
				ResourceSpec: resourceSpec(p),
				ForProvider: iamv1beta1.RolePolicyAttachmentParameters{
					RoleRef:   &xpv1.Reference{Name: nodeRole},
					PolicyArn: ptr(managedPolicyARN(p.Partition, np.Name)),
				},
			},
		}
	}
	out[crInstanceProfile] = &iamv1beta1.InstanceProfile{
		ObjectMeta: objectMeta(nodeRole, p.InstanceProfileName),
		Spec: iamv1beta1.InstanceProfileSpec{
			ResourceSpec: resourceSpec(p),
			ForProvider: iamv1beta1.InstanceProfileParameters{
				Path:    ptr(iamPath),
				RoleRef: &xpv1.Reference{Name: nodeRole},
				Tags:    p.Tags,
			},
		},
	}
	return out
}

// role is an IAM role kiso creates, under the permissions boundary if the
// spec names one.
func role(p plan, objectName, awsName string, trust PolicyDocument) *iamv1beta1.Role {
	r := &iamv1beta1.Role{
		ObjectMeta: objectMeta(objectName, awsName),
		Spec: iamv1beta1.RoleSpec{
			ResourceSpec: resourceSpec(p),
			ForProvider: iamv1beta1.RoleParameters{
				AssumeRolePolicy: ptr(trust.JSON()),
				Path:             ptr(iamPath),
				Tags:             p.Tags,
			},
		},
	}
	if p.Spec.PermissionsBoundary != "" {
		r.Spec.ForProvider.PermissionsBoundary = ptr(p.Spec.PermissionsBoundary)
	}
	return r
}

// objectMeta names a composed object. For kinds whose AWS identifier is a
// name kiso chooses, externalName sets it: the Kubernetes name must be
// DNS-1123, the AWS name keeps the cluster name's case and underscores.
func objectMeta(name, externalName string) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Name: name, Labels: map[string]string{tagManagedBy: managedByValue}}
	if externalName != "" {
		m.Annotations = map[string]string{"crossplane.io/external-name": externalName}
	}
	return m
}

// resourceSpec is what every managed resource shares: its ProviderConfig.
func resourceSpec(p plan) xpv1.ResourceSpec {
	return xpv1.ResourceSpec{ProviderConfigReference: &xpv1.Reference{Name: p.Spec.ProviderConfigName}}
}
