package main

import (
	"context"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// Function renders Karpenter's AWS prerequisites for one EKS cluster.
type Function struct {
	fnv1.UnimplementedFunctionRunnerServiceServer

	log logging.Logger
}

// RunFunction renders one XKarpenterCluster, phase by phase, each in a file of its own name. It never returns
// an error: failures are Fatal results and a condition on the XR.
func (f *Function) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	r, ok := begin(req, f.log)
	if !ok || !r.validate() {
		return r.Rsp, nil
	}
	r.require()
	if !r.resolve() {
		return r.Rsp, nil
	}
	r.validateFound()
	if !r.render() || !r.settle() {
		return r.Rsp, nil
	}
	r.report()
	r.Log.Debug("rendered", "resources", len(r.objects), "notReady", r.ownership.notReady, "keptInUse", len(r.ownership.inUse))
	return r.Respond(r.status)
}
