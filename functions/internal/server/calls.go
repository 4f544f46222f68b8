package server

import (
	"context"
	"time"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// callLogMessage is the debug message logged once per RunFunction call. The
// end-to-end tests count these lines to know Crossplane called a function
// again, so they need not guess with sleeps.
const callLogMessage = "RunFunction"

// loggedRunner logs one line per call: which XR, at which resourceVersion
// Crossplane read it, how long the call took, what it asked Crossplane to
// apply, when Crossplane calls again if nothing changes (the TTL) and whether
// it stopped on a fatal result. That is what an operator reading a function's
// log wants to know first, for every path, including the ones that return
// early.
type loggedRunner struct {
	fnv1.FunctionRunnerServiceServer

	log logging.Logger
}

func (r loggedRunner) RunFunction(ctx context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	start := time.Now()
	rsp, err := r.FunctionRunnerServiceServer.RunFunction(ctx, req)
	kv := []any{
		"xr", compositeName(req),
		"xrVersion", compositeVersion(req),
		"took", time.Since(start).Round(time.Microsecond).String(),
		"desired", len(rsp.GetDesired().GetResources()),
		"requirements", len(rsp.GetRequirements().GetResources()),
		"ttl", rsp.GetMeta().GetTtl().AsDuration().String(),
	}
	if msg, fatal := fatalMessage(rsp); fatal {
		kv = append(kv, "fatal", msg)
	}
	if err != nil {
		kv = append(kv, "error", err.Error())
	}
	r.log.Debug(callLogMessage, kv...)
	return rsp, err
}

// compositeName reads the observed XR's metadata.name without converting the
// whole XR, which for a large organization is most of the request.
func compositeName(req *fnv1.RunFunctionRequest) string {
	return compositeMeta(req, "name")
}

// compositeVersion reads the observed XR's metadata.resourceVersion: which
// change of the XR the reconcile that made the call had read.
func compositeVersion(req *fnv1.RunFunctionRequest) string {
	return compositeMeta(req, "resourceVersion")
}

func compositeMeta(req *fnv1.RunFunctionRequest, field string) string {
	meta := req.GetObserved().GetComposite().GetResource().GetFields()["metadata"]
	return meta.GetStructValue().GetFields()[field].GetStringValue()
}

// fatalMessage returns the first fatal result's message, if there is one.
func fatalMessage(rsp *fnv1.RunFunctionResponse) (string, bool) {
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
			return r.GetMessage(), true
		}
	}
	return "", false
}
