package server

import (
	"context"

	"google.golang.org/protobuf/proto"

	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/response"
)

// maxResponseBytes is the largest response a function returns: Crossplane's
// client receives gRPC messages of at most 4 MiB, less some room for framing.
const maxResponseBytes = 4<<20 - 64<<10

// sizeGuard turns a response Crossplane could not receive into a Fatal result
// that says why. Crossplane would otherwise fail the call with a bare
// ResourceExhausted; either way nothing is applied or deleted, but only this
// way the XR says what to change. The XRDs' limits keep kiso's own objects
// well inside the message; the reference objects a platform supplies are
// cloned once per pool and have no limit.
type sizeGuard struct {
	fnv1.FunctionRunnerServiceServer
}

func (g sizeGuard) RunFunction(ctx context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp, err := g.FunctionRunnerServiceServer.RunFunction(ctx, req)
	if err != nil {
		return rsp, err
	}
	if size := proto.Size(rsp); size > maxResponseBytes {
		out := response.To(req, response.DefaultTTL)
		response.Fatal(out, errors.Errorf("cannot return the desired state: it is %d bytes, more than the %d bytes Crossplane accepts from a function, so nothing was changed; "+
			"compose less per XR (fewer stacks in stack isolation) or make the reference objects smaller", size, maxResponseBytes))
		return out, nil
	}
	return rsp, nil
}
