// Package xrstatus writes a function's typed status into the desired
// composite resource.
package xrstatus

import (
	"encoding/json"

	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/resource"
)

// Set writes status, a struct with JSON tags, into the desired XR. It sets
// one top-level status field at a time, so fields it does not name, such as
// the conditions Crossplane and the function set, stay as they are.
func Set(xr *resource.Composite, status any) error {
	b, err := json.Marshal(status)
	if err != nil {
		return errors.Wrap(err, "cannot encode status")
	}
	fields := map[string]any{}
	if err := json.Unmarshal(b, &fields); err != nil {
		return errors.Wrap(err, "cannot decode status")
	}
	for k, v := range fields {
		if err := xr.Resource.SetValue("status."+k, v); err != nil {
			return errors.Wrapf(err, "cannot set status.%s", k)
		}
	}
	return nil
}
