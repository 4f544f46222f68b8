package server

import (
	"context"
	"runtime/debug"

	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/response"
)

// panicLogMessage is the message logged when a call panicked.
const panicLogMessage = "RunFunction panicked"

// recovering turns a panic inside one call into a Fatal result on that XR.
// Every XR of a kind shares the function's process: without it, one
// organization's input would stop reconciliation for all of them. A Fatal
// result stops Crossplane before it applies or deletes anything.
type recovering struct {
	fnv1.FunctionRunnerServiceServer

	log logging.Logger
}

func (r recovering) RunFunction(ctx context.Context, req *fnv1.RunFunctionRequest) (rsp *fnv1.RunFunctionResponse, err error) {
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		r.log.Info(panicLogMessage, "xr", compositeName(req), "panic", v, "stack", string(debug.Stack()))
		rsp = response.To(req, response.DefaultTTL)
		// The call may have half-built the desired state it shares with the
		// request; none of it is returned.
		rsp.Desired = &fnv1.State{}
		response.Fatal(rsp, errors.Errorf("the function failed on this XR's input (panic: %v); nothing was changed; please report it with the XR", v))
		err = nil
	}()
	return r.FunctionRunnerServiceServer.RunFunction(ctx, req)
}
