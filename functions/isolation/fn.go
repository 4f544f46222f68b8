package main

import (
	"context"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// Function renders an organization's dedicated Karpenter pools.
type Function struct {
	fnv1.UnimplementedFunctionRunnerServiceServer

	log logging.Logger
}

// RunFunction renders one XKarpenterIsolation. It never returns an error:
// failures are Fatal results and conditions on the XR and its claim, and on
// any path where it cannot render it keeps what it composed before.
func (f *Function) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	r, ok := begin(req, f.log)
	if !ok {
		return r.Rsp, nil
	}
	if !r.validate() {
		return r.Rsp, nil
	}
	if !r.require() {
		return r.Rsp, nil
	}
	if !r.resolve() {
		return r.Rsp, nil
	}
	if !r.validateFound() {
		return r.Rsp, nil
	}
	if !r.render() {
		return r.Rsp, nil
	}
	r.settle()
	r.report()
	return r.respond()
}
