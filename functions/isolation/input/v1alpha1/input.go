// Package v1alpha1 is the isolation function's input (group isolation.fn.kiso.dev). `make generate` writes
// its CRD, which the function's package ships, and its DeepCopy methods from these types and markers. A
// Composition sets it as
//
//	apiVersion: isolation.fn.kiso.dev/v1alpha1
//	kind: Input
//	keyDomain: formance.com
//	references: {nodePools: [general], nodeClasses: [general]}
//
// +kubebuilder:object:generate=true
// +groupName=isolation.fn.kiso.dev
// +versionName=v1alpha1
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Input is the isolation function's input in a Composition: choices the platform makes once for every
// organization, never the tenant.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:categories=crossplane
type Input struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// KeyDomain is the prefix of the organization, stack and customer keys (default kiso.dev), so a platform
	// that already uses formance.com/... labels keeps them.
	// +kubebuilder:validation:MaxLength=253
	KeyDomain string `json:"keyDomain,omitempty"`

	// OrganizationsNamespace is where each organization's XR holds a ConfigMap kiso-organization.<organization>,
	// so that one XR only holds an organization, whatever its isolation mode (default crossplane-system, a
	// namespace tenants cannot write in).
	// +kubebuilder:validation:MaxLength=63
	OrganizationsNamespace string `json:"organizationsNamespace,omitempty"`

	// References are NodeClasses and NodePools tenants may clone besides those labelled
	// <keyDomain>/reference: "true".
	References References `json:"references,omitempty"`
}

// References lists, by name, the NodeClasses and NodePools the platform lets tenants clone.
type References struct {
	// NodeClasses tenants may clone, by name.
	NodeClasses []string `json:"nodeClasses,omitempty"`

	// NodePools tenants may clone, by name.
	NodePools []string `json:"nodePools,omitempty"`
}
