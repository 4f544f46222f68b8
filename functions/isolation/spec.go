package main

import (
	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/fnstate"
)

// decodeSpec reads the XR's spec and applies the defaults the XRD declares,
// so the function behaves the same whether or not the API server defaulted it.
func decodeSpec(xr *resource.Composite) (v1alpha1.XKarpenterIsolationSpec, error) {
	spec := v1alpha1.XKarpenterIsolationSpec{}
	if err := fnstate.Decode(xr.Resource.Object, "spec", &spec); err != nil {
		return spec, errors.Wrap(err, "cannot read the XR")
	}
	spec.Default()
	return spec, nil
}
