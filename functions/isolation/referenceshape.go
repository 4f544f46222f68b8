package main

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
)

// shape is what kiso needs a field of a reference object to be before it
// clones it.
type shape int

const (
	shapeObject    shape = iota // a JSON object
	shapeStringMap              // an object of strings (labels, tags)
	shapeTaints                 // a list of objects, each with a string key
)

func (s shape) String() string {
	switch s {
	case shapeStringMap:
		return "a map of strings"
	case shapeTaints:
		return "a list of taints, each an object with a string key"
	default:
		return "an object"
	}
}

// referenceField is a field of a reference object kiso reads or writes when
// it clones it, as a dotted path; a field that is absent is fine unless
// required.
type referenceField struct {
	path     string
	shape    shape
	required bool
}

// nodePoolFields are the fields of the reference NodePool kiso reads or writes.
var nodePoolFields = []referenceField{
	{path: "spec", shape: shapeObject, required: true},
	{path: "spec.template", shape: shapeObject},
	{path: "spec.template.metadata", shape: shapeObject},
	{path: "spec.template.metadata.labels", shape: shapeStringMap},
	{path: "spec.template.spec", shape: shapeObject},
	{path: "spec.template.spec.taints", shape: shapeTaints},
	{path: "spec.limits", shape: shapeObject},
	{path: "spec.disruption", shape: shapeObject},
}

// validateReferenceShapes refuses reference objects kiso cannot clone: the
// wrong kind, no spec, labels, tags or taints of the wrong type. They are the
// platform's objects, read as they are; the error names the claim's
// reference field and the reference's own field, and nothing is rendered
// from them.
func validateReferenceShapes(spec v1alpha1.XKarpenterIsolationSpec, found lookup) field.ErrorList {
	classes := classesOf(spec)
	errs := make(field.ErrorList, 0, len(classes))
	for _, c := range classes {
		path, pair := classPath(c), found.pair(c)
		nodeClassFields := []referenceField{{path: "spec", shape: shapeObject, required: true}}
		if isEC2NodeClass(c.NodeClassRef) {
			nodeClassFields = append(nodeClassFields, referenceField{path: "spec.tags", shape: shapeStringMap})
		}
		errs = append(errs, referenceShape(path.Child("nodeClassRef"), pair.NodeClass, nodeClassGVK(c.NodeClassRef), nodeClassFields)...)
		errs = append(errs, referenceShape(path.Child("nodePoolRef"), pair.NodePool, nodePoolGVK, nodePoolFields)...)
	}
	return errs
}

// referenceShape checks one reference object; it stops at its first bad
// field, as every field after it may be inside it.
func referenceShape(path *field.Path, ref *unstructured.Unstructured, want schema.GroupVersionKind, fields []referenceField) field.ErrorList {
	if ref == nil {
		return nil
	}
	if got := ref.GroupVersionKind(); got != want {
		return field.ErrorList{field.Invalid(path, ref.GetName(), fmt.Sprintf("the required resource returned for it is a %s %s, not a %s %s", got.GroupVersion(), got.Kind, want.GroupVersion(), want.Kind))}
	}
	for _, f := range fields {
		v, ok := nestedValue(ref.Object, strings.Split(f.path, "."))
		switch {
		case !ok && f.required:
			return field.ErrorList{field.Invalid(path, ref.GetName(), fmt.Sprintf("%s %q has no %s", want.Kind, ref.GetName(), f.path))}
		case !ok || hasShape(v, f.shape):
			continue
		}
		return field.ErrorList{field.Invalid(path, ref.GetName(), fmt.Sprintf("%s %q cannot be cloned: its %s is %s, not %s", want.Kind, ref.GetName(), f.path, describe(v, f.shape), f.shape))}
	}
	return nil
}

// nestedValue returns the value at path, null included, and whether it is
// there. The parents have been checked to be objects.
func nestedValue(obj map[string]any, path []string) (any, bool) {
	var v any = obj
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[p]; !ok {
			return nil, false
		}
	}
	return v, true
}

func hasShape(v any, s shape) bool {
	switch s {
	case shapeStringMap:
		m, ok := v.(map[string]any)
		for _, e := range m {
			if _, str := e.(string); !str {
				return false
			}
		}
		return ok
	case shapeTaints:
		l, ok := v.([]any)
		for _, e := range l {
			if m, obj := e.(map[string]any); !obj {
				return false
			} else if _, str := m["key"].(string); !str {
				return false
			}
		}
		return ok
	default:
		_, ok := v.(map[string]any)
		return ok
	}
}

// describe says what is wrong with a value of the wrong shape, as a user
// reading the reference's YAML would.
func describe(v any, want shape) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		if want == shapeStringMap {
			return "an object with a value that is not a string"
		}
		return "an object"
	case []any:
		if want == shapeTaints {
			return "a list with an element that is not a taint"
		}
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	default:
		return "a number"
	}
}
