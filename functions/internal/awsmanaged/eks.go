package awsmanaged

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// An AccessEntry lets an IAM principal into an EKS cluster.
//
// +kubebuilder:object:root=true
type AccessEntry struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              AccessEntrySpec `json:"spec"`
}

// AccessEntrySpec is an AccessEntry's desired state.
type AccessEntrySpec struct {
	ResourceSpec `json:",inline"`
	ForProvider  AccessEntryParameters `json:"forProvider"`
}

// AccessEntryParameters name the cluster and the principal, a Role composed beside the entry.
type AccessEntryParameters struct {
	Region                  *string            `json:"region"`
	ClusterName             *string            `json:"clusterName,omitempty"`
	PrincipalArnFromRoleRef *Reference         `json:"principalArnFromRoleRef,omitempty"`
	Type                    *string            `json:"type,omitempty"`
	Tags                    map[string]*string `json:"tags,omitempty"`
}

// A PodIdentityAssociation gives a service account's pods an IAM role.
//
// +kubebuilder:object:root=true
type PodIdentityAssociation struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              PodIdentityAssociationSpec `json:"spec"`
}

// PodIdentityAssociationSpec is a PodIdentityAssociation's desired state.
type PodIdentityAssociationSpec struct {
	ResourceSpec `json:",inline"`
	ForProvider  PodIdentityAssociationParameters `json:"forProvider"`
}

// PodIdentityAssociationParameters name the cluster, the service account and the role.
type PodIdentityAssociationParameters struct {
	Region         *string            `json:"region"`
	ClusterName    *string            `json:"clusterName,omitempty"`
	Namespace      *string            `json:"namespace,omitempty"`
	ServiceAccount *string            `json:"serviceAccount,omitempty"`
	RoleArnRef     *Reference         `json:"roleArnRef,omitempty"`
	Tags           map[string]*string `json:"tags,omitempty"`
}
