package fntest

import (
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// statusWritten is when a controller last wrote the status of every object a benchmark observes.
const statusWritten = "2026-12-02T10:00:05Z"

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
	return ObservedAsSent(xr, status)
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
