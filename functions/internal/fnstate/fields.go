// This file moves typed Go structs in and out of a composite
// resource's top-level fields: a function decodes a spec and writes a status.

package fnstate

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	kfield "k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/crossplane/crossplane-runtime/v2/pkg/fieldpath"
	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/resource"
)

// SetStatus writes status, a struct with JSON tags, into the desired XR. It sets
// one top-level status field at a time, so fields it does not name, such as
// the conditions Crossplane and the function set, stay as they are.
func SetStatus(xr *resource.Composite, status any) error {
	v := reflect.ValueOf(status)
	if v.Kind() != reflect.Struct {
		return errors.Errorf("cannot convert status: %T is not a struct", status)
	}
	// The converter reads a struct through a pointer.
	ptr := reflect.New(v.Type())
	ptr.Elem().Set(v)
	fields, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ptr.Interface())
	if err != nil {
		return errors.Wrap(err, "cannot convert status")
	}
	if _, ok := xr.Resource.Object["status"]; !ok {
		xr.Resource.Object["status"] = map[string]any{}
	}
	st, ok := xr.Resource.Object["status"].(map[string]any)
	if !ok {
		return errors.New("cannot set status: the XR's status is not an object")
	}
	// The converter's output is JSON data already: it is set as it is, not
	// through a field path's JSON round trip, which a large status pays dearly.
	maps.Copy(st, fields)
	return nil
}

// Decode decodes one top-level field of an object (spec, status) into a
// typed struct; a field the object lacks leaves into as it is.
func Decode(object map[string]any, field string, into any) error {
	err := fieldpath.Pave(object).GetValueInto(field, into)
	if fieldpath.IsNotFound(err) {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		// Name the field as the user wrote it: spec.tags, not a Go type.
		p := kfield.NewPath(field)
		if te.Field != "" {
			for _, f := range strings.Split(te.Field, ".") {
				p = p.Child(f)
			}
		}
		return kfield.Invalid(p, te.Value, "must be "+jsonKind(te.Type))
	}
	return errors.Wrapf(err, "cannot decode %s", field)
}

// jsonKind names what a Go type decodes from, as a user writing YAML sees it.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Float32, reflect.Float64:
		return "a number"
	default:
		return fmt.Sprintf("an integer that fits %s", t.Kind())
	}
}
