package awsmanaged

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// A Role is an IAM role.
//
// +kubebuilder:object:root=true
type Role struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              RoleSpec `json:"spec"`
}

// RoleSpec is a Role's desired state.
type RoleSpec struct {
	ResourceSpec `json:",inline"`
	ForProvider  RoleParameters `json:"forProvider"`
}

// RoleParameters are the role's settings in AWS.
type RoleParameters struct {
	// AssumeRolePolicy is the trust policy document, as JSON.
	AssumeRolePolicy *string `json:"assumeRolePolicy,omitempty"`
	// ForceDetachPolicies detaches the role's policies when it is deleted, which IAM requires first.
	ForceDetachPolicies *bool              `json:"forceDetachPolicies,omitempty"`
	Path                *string            `json:"path,omitempty"`
	PermissionsBoundary *string            `json:"permissionsBoundary,omitempty"`
	Tags                map[string]*string `json:"tags,omitempty"`
}

// A Policy is a customer-managed IAM policy.
//
// +kubebuilder:object:root=true
type Policy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              PolicySpec `json:"spec"`
}

// PolicySpec is a Policy's desired state.
type PolicySpec struct {
	ResourceSpec `json:",inline"`
	ForProvider  PolicyParameters `json:"forProvider"`
}

// PolicyParameters are the policy's settings in AWS.
type PolicyParameters struct {
	Path *string `json:"path,omitempty"`
	// Policy is the policy document, as JSON.
	Policy *string            `json:"policy,omitempty"`
	Tags   map[string]*string `json:"tags,omitempty"`
}

// A RolePolicyAttachment attaches a managed policy to a role.
//
// +kubebuilder:object:root=true
type RolePolicyAttachment struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              RolePolicyAttachmentSpec `json:"spec"`
}

// RolePolicyAttachmentSpec is a RolePolicyAttachment's desired state.
type RolePolicyAttachmentSpec struct {
	ResourceSpec `json:",inline"`
	ForProvider  RolePolicyAttachmentParameters `json:"forProvider"`
}

// RolePolicyAttachmentParameters name the role and the policy, by ARN or by the Policy composed beside it.
type RolePolicyAttachmentParameters struct {
	PolicyArn    *string    `json:"policyArn,omitempty"`
	PolicyArnRef *Reference `json:"policyArnRef,omitempty"`
	RoleRef      *Reference `json:"roleRef,omitempty"`
}

// An InstanceProfile is an IAM instance profile.
//
// +kubebuilder:object:root=true
type InstanceProfile struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              InstanceProfileSpec `json:"spec"`
}

// InstanceProfileSpec is an InstanceProfile's desired state.
type InstanceProfileSpec struct {
	ResourceSpec `json:",inline"`
	ForProvider  InstanceProfileParameters `json:"forProvider"`
}

// InstanceProfileParameters are the profile's settings in AWS, and its role.
type InstanceProfileParameters struct {
	Path    *string            `json:"path,omitempty"`
	RoleRef *Reference         `json:"roleRef,omitempty"`
	Tags    map[string]*string `json:"tags,omitempty"`
}
