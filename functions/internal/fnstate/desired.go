package fnstate

import (
	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
)

// SetDesiredComposed sets the response's desired composed resources, as the SDK's
// response.SetDesiredComposedResources does, sharing with the request every part of each object that is as
// Crossplane observed it.
func SetDesiredComposed(rsp *fnv1.RunFunctionResponse, req *fnv1.RunFunctionRequest, desired map[resource.Name]*resource.DesiredComposed) error {
	if rsp.GetDesired() == nil {
		rsp.Desired = &fnv1.State{}
	}
	if rsp.GetDesired().GetResources() == nil {
		rsp.Desired.Resources = make(map[string]*fnv1.Resource, len(desired))
	}
	observed := req.GetObserved().GetResources()
	for name, dc := range desired {
		s, err := fromMap(dc.Resource.UnstructuredContent(), observed[string(name)].GetResource())
		if err != nil {
			return errors.Wrapf(err, "cannot convert desired composed resource %q", name)
		}
		rsp.Desired.Resources[string(name)] = &fnv1.Resource{Resource: s, Ready: ready(dc.Ready)}
	}
	return nil
}

// SetDesiredComposite sets the response's desired composite resource, as the SDK's
// response.SetDesiredCompositeResource does, sharing with the request what is as Crossplane observed it
// (in steady state, the whole status).
func SetDesiredComposite(rsp *fnv1.RunFunctionResponse, req *fnv1.RunFunctionRequest, xr *resource.Composite) error {
	if rsp.GetDesired() == nil {
		rsp.Desired = &fnv1.State{}
	}
	s, err := fromMap(xr.Resource.UnstructuredContent(), req.GetObserved().GetComposite().GetResource())
	if err != nil {
		return errors.Wrap(err, "cannot convert desired composite resource")
	}
	rsp.Desired.Composite = &fnv1.Resource{Resource: s, ConnectionDetails: xr.ConnectionDetails, Ready: ready(xr.Ready)}
	return nil
}

func ready(r resource.Ready) fnv1.Ready {
	switch r {
	case resource.ReadyTrue:
		return fnv1.Ready_READY_TRUE
	case resource.ReadyFalse:
		return fnv1.Ready_READY_FALSE
	default:
		return fnv1.Ready_READY_UNSPECIFIED
	}
}
