package server

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// fixedRunner answers every call with the same response.
type fixedRunner struct {
	fnv1.UnimplementedFunctionRunnerServiceServer

	rsp *fnv1.RunFunctionResponse
}

func (f fixedRunner) RunFunction(context.Context, *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	return f.rsp, nil
}

func TestLoggedRunnerLogsEveryCall(t *testing.T) {
	xr, err := structpb.NewStruct(map[string]any{"metadata": map[string]any{"name": "acme-x7k2p", "resourceVersion": "4711"}})
	if err != nil {
		t.Fatal(err)
	}
	req := &fnv1.RunFunctionRequest{Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: xr}}}

	cases := map[string]struct {
		rsp  *fnv1.RunFunctionResponse
		want map[string]any
	}{
		"rendered": {
			rsp: &fnv1.RunFunctionResponse{
				Meta:         &fnv1.ResponseMeta{Ttl: durationpb.New(time.Hour)},
				Desired:      &fnv1.State{Resources: map[string]*fnv1.Resource{"a": {}, "b": {}}},
				Requirements: &fnv1.Requirements{Resources: map[string]*fnv1.ResourceSelector{"ref": {}}},
			},
			want: map[string]any{"msg": callLogMessage, "xr": "acme-x7k2p", "xrVersion": "4711", "desired": float64(2), "requirements": float64(1), "ttl": "1h0m0s"},
		},
		"stopped on a fatal result": {
			rsp: &fnv1.RunFunctionResponse{Results: []*fnv1.Result{
				{Severity: fnv1.Severity_SEVERITY_WARNING, Message: "not this one"},
				{Severity: fnv1.Severity_SEVERITY_FATAL, Message: `NodePool "kiso-acme" already exists`},
			}},
			want: map[string]any{"msg": callLogMessage, "xr": "acme-x7k2p", "xrVersion": "4711", "desired": float64(0), "requirements": float64(0), "ttl": "0s", "fatal": `NodePool "kiso-acme" already exists`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var lines []map[string]any
			sink := funcr.NewJSON(func(obj string) { lines = append(lines, decodeJSON(t, obj)) }, funcr.Options{Verbosity: 1})
			r := loggedRunner{FunctionRunnerServiceServer: fixedRunner{rsp: tc.rsp}, log: logging.NewLogrLogger(sink)}

			if _, err := r.RunFunction(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			if len(lines) != 1 {
				t.Fatalf("logged %d lines for one call, want 1: %v", len(lines), lines)
			}
			got := lines[0]
			if _, ok := got["took"].(string); !ok {
				t.Errorf("no duration logged: %v", got)
			}
			delete(got, "took")
			delete(got, "level")
			delete(got, "logger")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("-want, +got:\n%s", diff)
			}
		})
	}
}

func decodeJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("log line is not JSON: %v: %s", err, s)
	}
	return m
}
