package awsmanaged

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// A Rule is an EventBridge rule on the default event bus.
//
// +kubebuilder:object:root=true
type Rule struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              RuleSpec `json:"spec"`
}

// RuleSpec is a Rule's desired state.
type RuleSpec struct {
	ResourceSpec `json:",inline"`
	ForProvider  RuleParameters `json:"forProvider"`
}

// RuleParameters are the rule's settings in AWS.
type RuleParameters struct {
	Region *string `json:"region"`
	// EventPattern is the pattern of events the rule matches, as JSON.
	EventPattern *string            `json:"eventPattern,omitempty"`
	Tags         map[string]*string `json:"tags,omitempty"`
}

// A Target sends what a rule matches to a destination.
//
// +kubebuilder:object:root=true
type Target struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              TargetSpec `json:"spec"`
}

// TargetSpec is a Target's desired state.
type TargetSpec struct {
	ResourceSpec `json:",inline"`
	ForProvider  TargetParameters `json:"forProvider"`
}

// TargetParameters name the rule, a Rule composed beside the target, and the destination's ARN.
type TargetParameters struct {
	Region   *string    `json:"region"`
	RuleRef  *Reference `json:"ruleRef,omitempty"`
	TargetID *string    `json:"targetId,omitempty"`
	Arn      *string    `json:"arn,omitempty"`
}
