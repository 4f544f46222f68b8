package server

import (
	"context"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// panickingRunner panics the way a nil map write in a renderer does, after
// half-building the desired state it shares with the request.
type panickingRunner struct {
	fnv1.UnimplementedFunctionRunnerServiceServer

	tags map[string]string
}

func (p panickingRunner) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	req.Desired.Resources = map[string]*fnv1.Resource{"half-built": {}}
	p.tags["team"] = "platform"
	return nil, nil
}

func TestPanicBecomesAFatalResultOnTheXR(t *testing.T) {
	xr, err := structpb.NewStruct(map[string]any{"metadata": map[string]any{"name": "acme-x7k2p"}})
	if err != nil {
		t.Fatal(err)
	}
	req := &fnv1.RunFunctionRequest{
		Meta:     &fnv1.RequestMeta{Tag: "t1"},
		Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: xr}},
		Desired:  &fnv1.State{},
	}
	var lines []map[string]any
	sink := funcr.NewJSON(func(obj string) { lines = append(lines, decodeJSON(t, obj)) }, funcr.Options{})
	r := recovering{FunctionRunnerServiceServer: panickingRunner{}, log: logging.NewLogrLogger(sink)}

	rsp, err := r.RunFunction(context.Background(), req)
	if err != nil {
		t.Fatalf("a panic must become a result, not an error: %v", err)
	}
	msg, fatal := fatalMessage(rsp)
	if !fatal {
		t.Fatalf("no fatal result: %v", rsp.GetResults())
	}
	want := "the function failed on this XR's input (panic: assignment to entry in nil map); nothing was changed; please report it with the XR"
	if msg != want {
		t.Errorf("fatal result:\nwant: %s\ngot:  %s", want, msg)
	}
	if n := len(rsp.GetDesired().GetResources()); n != 0 {
		t.Errorf("returned %d desired resources the panicking call half-built; want none", n)
	}
	if rsp.GetMeta().GetTag() != "t1" {
		t.Errorf("response tag %q does not answer request tag t1", rsp.GetMeta().GetTag())
	}
	if len(lines) != 1 {
		t.Fatalf("logged %d lines for one panic, want 1: %v", len(lines), lines)
	}
	got := lines[0]
	if got["msg"] != panicLogMessage || got["xr"] != "acme-x7k2p" || got["panic"] != "assignment to entry in nil map" {
		t.Errorf("log line does not name the panic and the XR: %v", got)
	}
	if stack, _ := got["stack"].(string); !strings.Contains(stack, "panickingRunner.RunFunction") {
		t.Errorf("log line has no stack through the panicking call: %q", stack)
	}
}

func TestNoPanicPassesTheResponseThrough(t *testing.T) {
	want := &fnv1.RunFunctionResponse{Desired: &fnv1.State{Resources: map[string]*fnv1.Resource{"a": {}}}}
	r := recovering{FunctionRunnerServiceServer: fixedRunner{rsp: want}, log: logging.NewNopLogger()}
	got, err := r.RunFunction(context.Background(), &fnv1.RunFunctionRequest{})
	if err != nil || got != want {
		t.Errorf("RunFunction(...) = %v, %v; want the runner's own response", got, err)
	}
}
