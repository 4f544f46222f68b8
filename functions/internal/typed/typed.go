// Package typed turns typed Go objects (provider-aws managed resources,
// admission policies) into composed resources for a function's desired state.
package typed

import (
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/resource/composed"
)

// MustRegister adds the Go types of the objects a function composes to
// composed.Scheme, so Composed knows their apiVersion and kind. It panics if
// a type cannot be registered: a function that cannot convert what it
// renders must not start.
func MustRegister(adders ...func(*runtime.Scheme) error) {
	b := runtime.NewSchemeBuilder(adders...)
	utilruntime.Must(b.AddToScheme(composed.Scheme))
}

// Composed converts a typed object, whose Go type must be registered in
// composed.Scheme. Typed structs serialise an empty status (for example
// observedGeneration: 0); a function has no opinion on status, so it is
// dropped rather than sent to the API server.
func Composed(o runtime.Object) (*composed.Unstructured, error) {
	cd, err := composed.From(o)
	if err != nil {
		return nil, errors.Wrapf(err, "cannot convert %T to a composed resource", o)
	}
	delete(cd.Object, "status")
	return cd, nil
}
