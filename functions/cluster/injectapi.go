package main

import (
	admissionv1 "k8s.io/api/admissionregistration/v1"
	admissionv1beta1 "k8s.io/api/admissionregistration/v1beta1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/kiso-dev/kiso/functions/internal/fnstate"
	"github.com/kiso-dev/kiso/functions/internal/ownership"
	"github.com/kiso-dev/kiso/functions/internal/placement"
	"github.com/kiso-dev/kiso/functions/internal/remote"
)

// Which MutatingAdmissionPolicy API the apiserver that holds the cluster's policies serves, unless the input
// says: Kubernetes v1.36 on serves it at admissionregistration.k8s.io/v1 by default, with no flag (so EKS
// serves it); v1.34 and v1.35 serve v1beta1 only with its feature gate and runtime-config. Each is read as
// Crossplane can read it without failing the call, since a required resource of a kind the apiserver does not
// serve fails the whole call:
//   - v1 beside Crossplane: the schema Crossplane (v2.2 on) returns for the kind from the apiserver's OpenAPI,
//     empty where it is not served;
//   - v1 in a workload cluster: an observe-only read there of the injecting policy at v1, answered (found or
//     not) where v1 is served, refused with "no matches for kind" where it is not;
//   - v1beta1 either way: the APIService the aggregator registers for admissionregistration.k8s.io/v1beta1.

// requireAdmissionAPI is the required resource under which Crossplane returns the APIService the aggregator
// registers for admissionregistration.k8s.io/v1beta1 when the apiserver serves it.
const requireAdmissionAPI = "admissionregistration-v1beta1"

// requireInjectV1 is the required schema (beside Crossplane) or read (in a workload cluster) that says whether
// MutatingAdmissionPolicy is served at admissionregistration.k8s.io/v1.
const requireInjectV1 = "mutatingadmissionpolicy-v1"

var (
	apiServiceGVK = schema.GroupVersionKind{Group: "apiregistration.k8s.io", Version: "v1", Kind: "APIService"}
	injectV1GVK   = admissionv1.SchemeGroupVersion.WithKind("MutatingAdmissionPolicy")
)

// requireInjectAPI asks for what tells which MutatingAdmissionPolicy API the apiserver serves, unless the
// input says: resources in rs, and the schemas it returns. remoteCluster is true when the policies live in a
// workload cluster.
func requireInjectAPI(rs map[string]*fnv1.ResourceSelector, req *fnv1.RunFunctionRequest, in Input, remoteCluster bool) map[string]*fnv1.SchemaSelector {
	if in.MutatingAdmissionPolicy != "" {
		return nil
	}
	rs[requireAdmissionAPI] = ownership.ByName(apiServiceGVK, "", "v1beta1.admissionregistration.k8s.io")
	switch {
	case remoteCluster:
		rs[requireInjectV1] = ownership.ByName(injectV1GVK, "", placement.InjectPolicyName)
	case returnsSchemas(req):
		return map[string]*fnv1.SchemaSelector{
			requireInjectV1: {ApiVersion: injectV1GVK.GroupVersion().String(), Kind: injectV1GVK.Kind},
		}
	}
	return nil
}

// returnsSchemas reports whether Crossplane says it answers required schemas (v2.2 on).
func returnsSchemas(req *fnv1.RunFunctionRequest) bool {
	return request.HasCapability(req, fnv1.Capability_CAPABILITY_REQUIRED_SCHEMAS)
}

// injectAPIVersion is the MutatingAdmissionPolicy API to render, or "" for none: the input's choice, else v1
// where the apiserver serves it, else v1beta1 where it serves that. Until the apiserver has answered (a
// workload cluster may not answer for a while), an injecting policy composed before is kept: Crossplane
// deletes what a function stops returning.
func injectAPIVersion(req *fnv1.RunFunctionRequest, in Input, observed fnstate.Observed, workload *remote.Reader) string {
	switch in.MutatingAdmissionPolicy {
	case mutatingAdmissionPolicyNone:
		return ""
	case "":
	default:
		return in.MutatingAdmissionPolicy
	}
	v1, v1Known := servesInjectV1(req, workload)
	if v1 {
		return admissionv1.SchemeGroupVersion.String()
	}
	found, resolved := fnstate.Required(req, requireAdmissionAPI)
	switch {
	case !resolved || !v1Known:
		if oc, ok := observed.Get(crPlacementInjectPolicy); ok {
			return observedAPIVersion(oc)
		}
		return ""
	case len(found) == 0:
		return ""
	}
	return admissionv1beta1.SchemeGroupVersion.String()
}

// servesInjectV1 says whether the apiserver serves MutatingAdmissionPolicy at v1, and whether that is known
// yet. A Crossplane that returns no schemas is taken at its word: it cannot tell, and v1beta1 is read.
func servesInjectV1(req *fnv1.RunFunctionRequest, workload *remote.Reader) (served, known bool) {
	if workload != nil {
		if workload.NotServed(requireInjectV1) {
			return false, true
		}
		_, resolved := fnstate.Required(req, requireInjectV1)
		return resolved, resolved
	}
	if !returnsSchemas(req) {
		return false, true
	}
	s, resolved := request.GetRequiredSchema(req, requireInjectV1)
	return s != nil, resolved
}

// observedAPIVersion is the API version of an observed composed object, or of the object a provider-kubernetes
// Object composes.
func observedAPIVersion(oc resource.ObservedComposed) string {
	if oc.Resource.GroupVersionKind().GroupKind() == remote.ObjectGVK.GroupKind() {
		return remote.Unwrap(oc.Resource).GetAPIVersion()
	}
	return oc.Resource.GetAPIVersion()
}
