package main

import (
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/kiso-dev/kiso/functions/internal/fnstate"
	"github.com/kiso-dev/kiso/functions/internal/placement"
	inputv1alpha1 "github.com/kiso-dev/kiso/functions/isolation/input/v1alpha1"
)

// DefaultKeyDomain prefixes kiso's labels, taints and tags unless the
// Composition's input chooses another domain.
const DefaultKeyDomain = placement.DefaultKeyDomain

// Input is this function's input in a Composition; its type, with the markers its CRD is generated from,
// is in input/v1alpha1.
type Input = inputv1alpha1.Input

// getInput decodes the function's input, applying defaults.
func getInput(req *fnv1.RunFunctionRequest) (Input, error) {
	in := Input{}
	if err := fnstate.GetInput(req, &in); err != nil {
		return in, err
	}
	if in.KeyDomain == "" {
		in.KeyDomain = DefaultKeyDomain
	}
	if in.OrganizationsNamespace == "" {
		in.OrganizationsNamespace = DefaultOrganizationsNamespace
	}
	return in, validateInput(in).ToAggregate()
}

// DefaultOrganizationsNamespace is where Crossplane runs, which tenants
// cannot write in.
const DefaultOrganizationsNamespace = "crossplane-system"

func validateInput(in Input) field.ErrorList {
	errs := placement.ValidateKeyDomain(field.NewPath("input", "keyDomain"), in.KeyDomain)
	for _, msg := range validation.IsDNS1123Label(in.OrganizationsNamespace) {
		errs = append(errs, field.Invalid(field.NewPath("input", "organizationsNamespace"), in.OrganizationsNamespace, msg))
	}
	return errs
}
