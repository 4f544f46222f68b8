// Package v1alpha1 is the cluster function's input (group cluster.fn.kiso.dev). `make generate` writes its
// CRD, which the function's package ships, and its DeepCopy methods from these types and markers. A
// Composition sets it as
//
//	apiVersion: cluster.fn.kiso.dev/v1alpha1
//	kind: Input
//	keyDomain: kiso.dev
//	platformNamespaces: [crossplane-system, monitoring]
//	mutatingAdmissionPolicy: admissionregistration.k8s.io/v1beta1
//
// +kubebuilder:object:generate=true
// +groupName=cluster.fn.kiso.dev
// +versionName=v1alpha1
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MutatingAdmissionPolicyNone says the apiserver serves no MutatingAdmissionPolicy.
const MutatingAdmissionPolicyNone = "None"

// Input is the cluster function's input in a Composition: choices the platform makes once for the cluster's
// admission-time placement. Everything about Karpenter's AWS prerequisites is on the XKarpenterCluster.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:categories=crossplane
type Input struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// KeyDomain is the domain of the organization and stack keys; it must be the isolation function's
	// (default kiso.dev).
	// +kubebuilder:validation:MaxLength=253
	KeyDomain string `json:"keyDomain,omitempty"`

	// PlatformNamespaces are, besides kube-system and Karpenter's namespace, namespaces whose pods are the
	// platform's: they may name nodes and tolerate every taint, and no organization may take them.
	// +kubebuilder:validation:items:MaxLength=63
	PlatformNamespaces []string `json:"platformNamespaces,omitempty"`

	// Schedulers are the users that may bind pods to nodes in tenants' namespaces (default
	// [system:kube-scheduler], the identity EKS's scheduler runs as): a binding names a node and so skips the
	// taints. Anyone else needs the verb create on bindings.placement.kiso.dev.
	// +kubebuilder:validation:items:MaxLength=253
	Schedulers []string `json:"schedulers,omitempty"`

	// MutatingAdmissionPolicy is the API the apiserver serves MutatingAdmissionPolicy at:
	// admissionregistration.k8s.io/v1 (Kubernetes 1.36+), admissionregistration.k8s.io/v1beta1 (1.34 and 1.35
	// with the MutatingAdmissionPolicy feature gate and that API enabled), or None. Unset, v1beta1 where the
	// apiserver serves admissionregistration.k8s.io/v1beta1, else None. With None claims asking for injection
	// are told nothing injects.
	// +kubebuilder:validation:Enum=admissionregistration.k8s.io/v1;admissionregistration.k8s.io/v1beta1;None
	MutatingAdmissionPolicy string `json:"mutatingAdmissionPolicy,omitempty"`
}
