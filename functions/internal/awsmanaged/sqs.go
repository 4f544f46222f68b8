package awsmanaged

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// A Queue is an SQS queue.
//
// +kubebuilder:object:root=true
type Queue struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              QueueSpec `json:"spec"`
}

// QueueSpec is a Queue's desired state.
type QueueSpec struct {
	ResourceSpec `json:",inline"`
	ForProvider  QueueParameters `json:"forProvider"`
}

// QueueParameters are the queue's settings in AWS.
type QueueParameters struct {
	Region *string `json:"region"`
	Name   *string `json:"name,omitempty"`
	// MessageRetentionSeconds is a number in provider-aws' schema.
	MessageRetentionSeconds *float64           `json:"messageRetentionSeconds,omitempty"`
	SqsManagedSseEnabled    *bool              `json:"sqsManagedSseEnabled,omitempty"`
	Tags                    map[string]*string `json:"tags,omitempty"`
}

// A QueuePolicy is the access policy of a queue.
//
// +kubebuilder:object:root=true
type QueuePolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              QueuePolicySpec `json:"spec"`
}

// QueuePolicySpec is a QueuePolicy's desired state.
type QueuePolicySpec struct {
	ResourceSpec `json:",inline"`
	ForProvider  QueuePolicyParameters `json:"forProvider"`
}

// QueuePolicyParameters name the queue, a Queue composed beside the policy, and hold the policy document.
type QueuePolicyParameters struct {
	Region      *string    `json:"region"`
	QueueURLRef *Reference `json:"queueUrlRef,omitempty"`
	// Policy is the policy document, as JSON.
	Policy *string `json:"policy,omitempty"`
}
