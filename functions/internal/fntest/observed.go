package fntest

import (
	"fmt"
	"maps"
)

// ObservedAsSent is what Crossplane sends a function for an object it composed from desired and a
// controller then reported on: desired with the given status, and metadata.managedFields as the apiserver
// keeps them, one entry for Crossplane's apply of every field it set and one for the controller's status
// update. Managed fields are part of every observed object Crossplane sends; a benchmark without them
// measures a request smaller than the real one.
func ObservedAsSent(desired map[string]any, status map[string]any) map[string]any {
	observed := maps.Clone(desired)
	metadata, _ := desired["metadata"].(map[string]any)
	metadata = maps.Clone(metadata)
	applied := maps.Clone(desired)
	delete(applied, "apiVersion")
	delete(applied, "kind")
	metadata["managedFields"] = []any{
		map[string]any{
			"apiVersion": desired["apiVersion"], "fieldsType": "FieldsV1", "manager": "apiextensions.crossplane.io/composed/4b1e1f7c",
			"operation": "Apply", "time": "2026-12-02T10:00:00Z", "fieldsV1": fieldsV1(applied),
		},
		map[string]any{
			"apiVersion": desired["apiVersion"], "fieldsType": "FieldsV1", "manager": "controller",
			"operation": "Update", "subresource": "status", "time": "2026-12-02T10:00:05Z",
			"fieldsV1": fieldsV1(map[string]any{"status": status}),
		},
	}
	observed["metadata"] = metadata
	observed["status"] = status
	return observed
}

// fieldsV1 is the FieldsV1 set of a value: "f:<field>" for every field of an object, "i:<index>" for
// every item of a list (the apiserver keys items of keyed lists by their keys instead; the size is alike).
func fieldsV1(v any) map[string]any {
	out := map[string]any{}
	switch v := v.(type) {
	case map[string]any:
		for k, field := range v {
			out["f:"+k] = fieldsV1(field)
		}
	case []any:
		for i, item := range v {
			out[fmt.Sprintf("i:%d", i)] = fieldsV1(item)
		}
	}
	return out
}
