package fnstate

import (
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
)

// Labeled is the name and labels of an object Crossplane returned for a requirement.
type Labeled struct {
	Name   string
	Labels map[string]string
}

// RequiredLabeled reads the name and labels of each object Crossplane returned for a requirement, as
// request.GetRequiredResource followed by GetName and GetLabels would, without converting the objects whole: the
// namespaces the platform gives an organization may number a thousand, and kiso reads only that of them.
// resolved is false until Crossplane has answered the requirement.
func RequiredLabeled(req *fnv1.RunFunctionRequest, name string) (objects []Labeled, resolved bool) {
	answer, ok := req.GetRequiredResources()[name]
	if !ok {
		return nil, false
	}
	objects = make([]Labeled, 0, len(answer.GetItems()))
	for _, item := range answer.GetItems() {
		meta := item.GetResource().GetFields()["metadata"].GetStructValue().GetFields()
		objects = append(objects, Labeled{Name: stringOf(meta["name"]), Labels: stringMap(meta["labels"])})
	}
	return objects, true
}

// stringOf is v if it is a string, else "" (unstructured.NestedString's reading).
func stringOf(v *structpb.Value) string {
	if s, ok := v.GetKind().(*structpb.Value_StringValue); ok {
		return s.StringValue
	}
	return ""
}

// stringMap is v if it is an object of strings, null read as "", else nil (how Unstructured.GetLabels reads).
func stringMap(v *structpb.Value) map[string]string {
	s := v.GetStructValue()
	if s == nil {
		return nil
	}
	out := make(map[string]string, len(s.GetFields()))
	for k, f := range s.GetFields() {
		switch f := f.GetKind().(type) {
		case *structpb.Value_StringValue:
			out[k] = f.StringValue
		case *structpb.Value_NullValue:
			out[k] = ""
		default:
			return nil
		}
	}
	return out
}

// Required reads the objects Crossplane returned for a requirement as request.GetRequiredResource does, without
// their metadata.managedFields, which no kiso function reads and which are often as large as the rest of an
// object (a pod's, a NodePool's). resolved is false until Crossplane has answered the requirement.
func Required(req *fnv1.RunFunctionRequest, name string) (objects []resource.Required, resolved bool) {
	answer, ok := req.GetRequiredResources()[name]
	if !ok {
		return nil, false
	}
	objects = make([]resource.Required, 0, len(answer.GetItems()))
	for _, item := range answer.GetItems() {
		objects = append(objects, resource.Required{Resource: &unstructured.Unstructured{Object: withoutManagedFields(item.GetResource())}})
	}
	return objects, true
}
