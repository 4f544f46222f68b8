package e2e

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The kinds the scenarios read and write.

// kiso's isolation API.
var (
	IsolationXRDName   = "xkarpenterisolations.kiso.dev"
	IsolationKind      = schema.GroupVersionKind{Group: "kiso.dev", Version: "v1alpha1", Kind: "XKarpenterIsolation"}
	IsolationClaimKind = schema.GroupVersionKind{Group: "kiso.dev", Version: "v1alpha1", Kind: "KarpenterIsolation"}
)

// kiso's cluster API and the kinds it composes.
var (
	ClusterKind = schema.GroupVersionKind{Group: "kiso.dev", Version: "v1alpha1", Kind: "XKarpenterCluster"}
	// ClusterViewKind is the kind of the view a cluster composes for its organizations.
	ClusterViewKind            = schema.GroupVersionKind{Group: "apiextensions.crossplane.io", Version: "v1beta1", Kind: "EnvironmentConfig"}
	RoleKind                   = schema.GroupVersionKind{Group: "iam.aws.upbound.io", Version: "v1beta1", Kind: "Role"}
	PolicyKind                 = schema.GroupVersionKind{Group: "iam.aws.upbound.io", Version: "v1beta1", Kind: "Policy"}
	RolePolicyAttachmentKind   = schema.GroupVersionKind{Group: "iam.aws.upbound.io", Version: "v1beta1", Kind: "RolePolicyAttachment"}
	InstanceProfileKind        = schema.GroupVersionKind{Group: "iam.aws.upbound.io", Version: "v1beta1", Kind: "InstanceProfile"}
	AccessEntryKind            = schema.GroupVersionKind{Group: "eks.aws.upbound.io", Version: "v1beta1", Kind: "AccessEntry"}
	PodIdentityAssociationKind = schema.GroupVersionKind{Group: "eks.aws.upbound.io", Version: "v1beta1", Kind: "PodIdentityAssociation"}
	QueueKind                  = schema.GroupVersionKind{Group: "sqs.aws.upbound.io", Version: "v1beta1", Kind: "Queue"}
	QueuePolicyKind            = schema.GroupVersionKind{Group: "sqs.aws.upbound.io", Version: "v1beta1", Kind: "QueuePolicy"}
	RuleKind                   = schema.GroupVersionKind{Group: "cloudwatchevents.aws.upbound.io", Version: "v1beta1", Kind: "Rule"}
	TargetKind                 = schema.GroupVersionKind{Group: "cloudwatchevents.aws.upbound.io", Version: "v1beta2", Kind: "Target"}
	PrometheusRuleKind         = schema.GroupVersionKind{Group: "monitoring.coreos.com", Version: "v1", Kind: "PrometheusRule"}
	// The cluster's placement policies.
	ValidatingAdmissionPolicyKind        = schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingAdmissionPolicy"}
	ValidatingAdmissionPolicyBindingKind = schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingAdmissionPolicyBinding"}
	MutatingAdmissionPolicyKind          = schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "MutatingAdmissionPolicy"}
	MutatingAdmissionPolicyBindingKind   = schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "MutatingAdmissionPolicyBinding"}
)

// Karpenter's kinds, as the isolation function composes them.
var (
	NodePoolKind     = schema.GroupVersionKind{Group: "karpenter.sh", Version: "v1", Kind: "NodePool"}
	EC2NodeClassKind = schema.GroupVersionKind{Group: "karpenter.k8s.aws", Version: "v1", Kind: "EC2NodeClass"}
	ClusterUsageKind = schema.GroupVersionKind{Group: "protection.crossplane.io", Version: "v1beta1", Kind: "ClusterUsage"}
)

// The kinds Karpenter's KWOK provider works with.
var (
	KWOKNodeClassKind = schema.GroupVersionKind{Group: "karpenter.kwok.sh", Version: "v1alpha1", Kind: "KWOKNodeClass"}
	NodeClaimKind     = schema.GroupVersionKind{Group: "karpenter.sh", Version: "v1", Kind: "NodeClaim"}
	NodeKind          = schema.GroupVersionKind{Version: "v1", Kind: "Node"}
)

// RBACRoleKind is the kind of the Role kiso-placement in each namespace an organization holds.
var RBACRoleKind = schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role"}

// ConfigMapKind is the kind of the kiso-placement object in each namespace an organization serves.
var ConfigMapKind = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
