package main

import (
	"slices"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	inputv1alpha1 "github.com/kiso-dev/kiso/functions/cluster/input/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/fnstate"
	"github.com/kiso-dev/kiso/functions/internal/placement"
)

// Input is this function's input in a Composition; its type, with the markers its CRD is generated from,
// is in input/v1alpha1.
type Input = inputv1alpha1.Input

// mutatingAdmissionPolicyNone says the apiserver serves no MutatingAdmissionPolicy.
const mutatingAdmissionPolicyNone = inputv1alpha1.MutatingAdmissionPolicyNone

// mutatingAdmissionPolicyAPIs are the values the input's CRD allows: the APIs MutatingAdmissionPolicy is
// served at, or None.
var mutatingAdmissionPolicyAPIs = inputv1alpha1.EnumInputMutatingAdmissionPolicy

// getInput decodes the function's input, which may be absent.
func getInput(req *fnv1.RunFunctionRequest) (Input, error) {
	in := Input{}
	if err := fnstate.GetInput(req, &in); err != nil {
		return in, err
	}
	if in.KeyDomain == "" {
		in.KeyDomain = placement.DefaultKeyDomain
	}
	if len(in.Schedulers) == 0 {
		in.Schedulers = []string{defaultScheduler}
	}
	return in, validateInput(in).ToAggregate()
}

// defaultScheduler is the user kube-scheduler runs as, on EKS as elsewhere.
const defaultScheduler = "system:kube-scheduler"

func validateInput(in Input) field.ErrorList {
	errs := placement.ValidateKeyDomain(field.NewPath("input", "keyDomain"), in.KeyDomain)
	for i, ns := range in.PlatformNamespaces {
		for _, msg := range validation.IsDNS1123Label(ns) {
			errs = append(errs, field.Invalid(field.NewPath("input", "platformNamespaces").Index(i), ns, msg))
		}
	}
	for i, u := range in.Schedulers {
		if u == "" {
			errs = append(errs, field.Required(field.NewPath("input", "schedulers").Index(i), "a user name"))
		}
	}
	if v := in.MutatingAdmissionPolicy; v != "" && !slices.Contains(mutatingAdmissionPolicyAPIs, v) {
		errs = append(errs, field.NotSupported(field.NewPath("input", "mutatingAdmissionPolicy"), v, mutatingAdmissionPolicyAPIs))
	}
	return errs
}
