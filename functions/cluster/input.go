package main

import (
	"slices"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/kiso-dev/kiso/functions/internal/fnstate"
	"github.com/kiso-dev/kiso/functions/internal/placement"
)

// Input is this function's input in a Composition: choices the platform
// makes once for the cluster's admission-time placement. Everything about
// Karpenter's AWS prerequisites is on the XKarpenterCluster.
//
//	apiVersion: cluster.fn.kiso.dev/v1alpha1
//	kind: Input
//	keyDomain: kiso.dev
//	platformNamespaces: [crossplane-system, monitoring]
//	mutatingAdmissionPolicy: admissionregistration.k8s.io/v1beta1
type Input struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`

	// KeyDomain is the domain of the organization and stack keys; it must be
	// the isolation function's (default kiso.dev).
	KeyDomain string `json:"keyDomain,omitempty"`

	// PlatformNamespaces are, besides kube-system and Karpenter's namespace,
	// namespaces whose pods are the platform's: they may name nodes and
	// tolerate every taint, and no organization may take them.
	PlatformNamespaces []string `json:"platformNamespaces,omitempty"`

	// MutatingAdmissionPolicy is the API the apiserver serves
	// MutatingAdmissionPolicy at: admissionregistration.k8s.io/v1
	// (Kubernetes 1.36+), admissionregistration.k8s.io/v1beta1 (1.34 and
	// 1.35 with the MutatingAdmissionPolicy feature gate and that API
	// enabled), or None. Empty, v1beta1 where the apiserver serves
	// admissionregistration.k8s.io/v1beta1, else None. With None claims
	// asking for injection are told nothing injects.
	MutatingAdmissionPolicy string `json:"mutatingAdmissionPolicy,omitempty"`
}

// mutatingAdmissionPolicyNone says the apiserver serves no MutatingAdmissionPolicy.
const mutatingAdmissionPolicyNone = "None"

// mutatingAdmissionPolicyAPIs are the APIs MutatingAdmissionPolicy is served at.
var mutatingAdmissionPolicyAPIs = []string{"admissionregistration.k8s.io/v1", "admissionregistration.k8s.io/v1beta1", mutatingAdmissionPolicyNone}

// getInput decodes the function's input, which may be absent.
func getInput(req *fnv1.RunFunctionRequest) (Input, error) {
	in := Input{}
	if err := fnstate.DecodeInput(req, &in); err != nil {
		return in, err
	}
	if in.KeyDomain == "" {
		in.KeyDomain = placement.DefaultKeyDomain
	}
	return in, validateInput(in).ToAggregate()
}

func validateInput(in Input) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(in.KeyDomain) {
		errs = append(errs, field.Invalid(field.NewPath("input", "keyDomain"), in.KeyDomain, msg))
	}
	for i, ns := range in.PlatformNamespaces {
		for _, msg := range validation.IsDNS1123Label(ns) {
			errs = append(errs, field.Invalid(field.NewPath("input", "platformNamespaces").Index(i), ns, msg))
		}
	}
	if v := in.MutatingAdmissionPolicy; v != "" && !slices.Contains(mutatingAdmissionPolicyAPIs, v) {
		errs = append(errs, field.NotSupported(field.NewPath("input", "mutatingAdmissionPolicy"), v, mutatingAdmissionPolicyAPIs))
	}
	return errs
}
