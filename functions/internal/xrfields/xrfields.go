// Package xrfields moves typed Go structs in and out of a composite
// resource's top-level fields: a function decodes a spec and writes a status.
package xrfields

import (
	"encoding/json"

	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/resource"
)

// SetStatus writes status, a struct with JSON tags, into the desired XR. It sets
// one top-level status field at a time, so fields it does not name, such as
// the conditions Crossplane and the function set, stay as they are.
func SetStatus(xr *resource.Composite, status any) error {
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

// Decode decodes one top-level field of an object (spec, status) into a
// typed struct; a field the object lacks leaves into as it is.
func Decode(object map[string]any, field string, into any) error {
	raw, ok := object[field]
	if !ok {
		return nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return errors.Wrapf(err, "cannot encode %s", field)
	}
	return errors.Wrapf(json.Unmarshal(b, into), "cannot decode %s", field)
}
