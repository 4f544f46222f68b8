package awsmanaged

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The API versions of the kinds kiso composes. Every kind is v1beta1 but the Target, v1beta2, the version
// provider-aws converts every other Target version to.
const (
	v1beta1 = "v1beta1"
	v1beta2 = "v1beta2"
)

var (
	iamVersion    = schema.GroupVersion{Group: "iam.aws.upbound.io", Version: v1beta1}
	eksVersion    = schema.GroupVersion{Group: "eks.aws.upbound.io", Version: v1beta1}
	sqsVersion    = schema.GroupVersion{Group: "sqs.aws.upbound.io", Version: v1beta1}
	ruleVersion   = schema.GroupVersion{Group: "cloudwatchevents.aws.upbound.io", Version: v1beta1}
	targetVersion = schema.GroupVersion{Group: "cloudwatchevents.aws.upbound.io", Version: v1beta2}
)

// Each kind's GroupVersionKind.
var (
	RoleKind                   = iamVersion.WithKind("Role")
	PolicyKind                 = iamVersion.WithKind("Policy")
	RolePolicyAttachmentKind   = iamVersion.WithKind("RolePolicyAttachment")
	InstanceProfileKind        = iamVersion.WithKind("InstanceProfile")
	AccessEntryKind            = eksVersion.WithKind("AccessEntry")
	PodIdentityAssociationKind = eksVersion.WithKind("PodIdentityAssociation")
	QueueKind                  = sqsVersion.WithKind("Queue")
	QueuePolicyKind            = sqsVersion.WithKind("QueuePolicy")
	RuleKind                   = ruleVersion.WithKind("Rule")
	TargetKind                 = targetVersion.WithKind("Target")
)

// kinds maps each kind to an empty object of its Go type.
func kinds() map[schema.GroupVersionKind]runtime.Object {
	return map[schema.GroupVersionKind]runtime.Object{
		RoleKind:                   &Role{},
		PolicyKind:                 &Policy{},
		RolePolicyAttachmentKind:   &RolePolicyAttachment{},
		InstanceProfileKind:        &InstanceProfile{},
		AccessEntryKind:            &AccessEntry{},
		PodIdentityAssociationKind: &PodIdentityAssociation{},
		QueueKind:                  &Queue{},
		QueuePolicyKind:            &QueuePolicy{},
		RuleKind:                   &Rule{},
		TargetKind:                 &Target{},
	}
}

// AddToScheme registers every kind, so that a scheme knows each Go type's apiVersion and kind.
func AddToScheme(s *runtime.Scheme) error {
	for gvk, o := range kinds() {
		s.AddKnownTypeWithName(gvk, o)
	}
	return nil
}
