package fntest

import (
	"fmt"
	"maps"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// statusWritten is when a controller last wrote the status of every object a benchmark observes.
const statusWritten = "2026-12-02T10:00:05Z"

// ObservedAsSent is what Crossplane sends a function for an object it composed, under the composition resource
// name name, for the XR xr, from desired, and a controller then reported on: desired with the metadata Crossplane
// adds to every object it composes (its composite and claim labels, the composition resource name, the XR as
// controller) and the apiserver sets (uid, resourceVersion, generation, creationTimestamp), the given status, and
// metadata.managedFields as the apiserver keeps them, one entry for Crossplane's apply of every field it set and
// one for the controller's status update. A benchmark without them measures a request smaller than the real one,
// and a response that shares more with it than a real one can.
func ObservedAsSent(xr map[string]any, name string, desired map[string]any, status map[string]any) map[string]any {
	applied := maps.Clone(desired)
	xrMeta, _ := xr["metadata"].(map[string]any)
	xrLabels, _ := xrMeta["labels"].(map[string]any)
	metadata, _ := desired["metadata"].(map[string]any)
	metadata = maps.Clone(metadata)
	labels := clonedField(metadata, "labels")
	labels["crossplane.io/composite"] = xrMeta["name"]
	for _, claim := range []string{"crossplane.io/claim-name", "crossplane.io/claim-namespace"} {
		if v, ok := xrLabels[claim]; ok {
			labels[claim] = v
		}
	}
	annotations := clonedField(metadata, "annotations")
	annotations["crossplane.io/composition-resource-name"] = name
	metadata["labels"], metadata["annotations"] = labels, annotations
	metadata["ownerReferences"] = []any{map[string]any{
		"apiVersion": xr["apiVersion"], "kind": xr["kind"], "name": xrMeta["name"], "uid": xrMeta["uid"],
		"controller": true, "blockOwnerDeletion": true,
	}}
	applied["metadata"] = maps.Clone(metadata)
	metadata["uid"] = uuid.NewSHA1(uuid.NameSpaceOID, []byte(name)).String()
	metadata["resourceVersion"], metadata["generation"], metadata["creationTimestamp"] = "184467", float64(1), "2026-12-02T10:00:00Z"
	return withManagedFields(applied, metadata, status)
}

// clonedField is a copy of the object field of m, empty if m has none.
func clonedField(m map[string]any, field string) map[string]any {
	f, _ := m[field].(map[string]any)
	if f == nil {
		return map[string]any{}
	}
	return maps.Clone(f)
}

// withManagedFields is object (as applied) with metadata and status, and the managed fields of Crossplane's
// apply and a controller's status update.
func withManagedFields(applied, metadata, status map[string]any) map[string]any {
	observed := maps.Clone(applied)
	metadata = maps.Clone(metadata)
	fields := maps.Clone(applied)
	delete(fields, "apiVersion")
	delete(fields, "kind")
	metadata["managedFields"] = []any{
		map[string]any{
			"apiVersion": applied["apiVersion"], "fieldsType": "FieldsV1", "manager": "apiextensions.crossplane.io/composed/4b1e1f7c",
			"operation": "Apply", "time": "2026-12-02T10:00:00Z", "fieldsV1": fieldsV1(fields),
		},
		map[string]any{
			"apiVersion": applied["apiVersion"], "fieldsType": "FieldsV1", "manager": "controller",
			"operation": "Update", "subresource": "status", "time": statusWritten,
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

// CompositeAsSent is what Crossplane sends a function for the XR once it has applied the function's last
// response: the XR with the status the response desired, the response's conditions and Crossplane's own
// (Ready, Synced) beside it, and managed fields for both writes. A steady-state benchmark without the XR's
// status measures a request smaller than the real one, and a function that rebuilds a status it could share.
func CompositeAsSent(xr map[string]any, rsp *fnv1.RunFunctionResponse) map[string]any {
	status, _ := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)
	if status == nil {
		status = map[string]any{}
	}
	conditions := make([]any, 0, 2+len(rsp.GetConditions()))
	conditions = append(conditions,
		condition("Synced", string(corev1.ConditionTrue), "ReconcileSuccess", ""),
		condition("Ready", string(corev1.ConditionTrue), "Available", ""),
	)
	// Every condition a function returns lands on the XR, whether or not it targets the claim too.
	for _, c := range rsp.GetConditions() {
		conditions = append(conditions, condition(c.GetType(), conditionStatus(c.GetStatus()), c.GetReason(), c.GetMessage()))
	}
	status["conditions"] = conditions
	metadata, _ := xr["metadata"].(map[string]any)
	return withManagedFields(xr, metadata, status)
}

// condition is a condition as Crossplane writes it on an XR.
func condition(conditionType, status, reason, message string) map[string]any {
	c := map[string]any{"type": conditionType, "status": status, "reason": reason, "lastTransitionTime": statusWritten, "observedGeneration": float64(1)}
	if message != "" {
		c["message"] = message
	}
	return c
}

func conditionStatus(s fnv1.Status) string {
	switch s {
	case fnv1.Status_STATUS_CONDITION_TRUE:
		return string(corev1.ConditionTrue)
	case fnv1.Status_STATUS_CONDITION_FALSE:
		return string(corev1.ConditionFalse)
	default:
		return string(corev1.ConditionUnknown)
	}
}
