package main

import (
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/kiso-dev/kiso/functions/internal/fntest"
)

// BenchmarkRunFunction measures one RunFunction call for a cluster with
// every part enabled (34 composed resources): "new" has nothing observed
// yet, "steady" has every resource observed Ready and Synced,
// with managed fields, and the XR with the status the function set, as
// Crossplane sends them.
func BenchmarkRunFunction(b *testing.B) {
	newReq := newRequest(b, xr(podIdentitySpec), nil)
	b.Run("new", func(b *testing.B) { fntest.Bench(b, &Function{log: logging.NewNopLogger()}, newReq) })

	rsp := run(b, newReq)
	steadyReq := newRequest(b, xr(podIdentitySpec), nil)
	steadyReq.Observed.Resources = map[string]*fnv1.Resource{}
	for name, r := range rsp.GetDesired().GetResources() {
		o := fntest.ObservedAsSent(newReq.GetObserved().GetComposite().GetResource().AsMap(), name, r.GetResource().AsMap(), map[string]any{"conditions": []any{
			map[string]any{"type": "Ready", "status": "True"},
			map[string]any{"type": "Synced", "status": "True"},
		}})
		st, err := structpb.NewStruct(o)
		if err != nil {
			b.Fatal(err)
		}
		steadyReq.Observed.Resources[name] = &fnv1.Resource{Resource: st}
	}
	// Crossplane sends the XR back with the status the function last set.
	xrAsSent, err := structpb.NewStruct(fntest.CompositeAsSent(steadyReq.GetObserved().GetComposite().GetResource().AsMap(), run(b, steadyReq)))
	if err != nil {
		b.Fatal(err)
	}
	steadyReq.Observed.Composite.Resource = xrAsSent
	b.Run("steady", func(b *testing.B) { fntest.Bench(b, &Function{log: logging.NewNopLogger()}, steadyReq) })
}
