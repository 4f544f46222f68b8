package main

import (
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/kiso-dev/kiso/functions/internal/fntest"
)

// BenchmarkRunFunction measures one RunFunction call of a reconcile whose
// requirements are resolved: "new" has nothing composed yet (every name is
// checked for a foreign owner), "steady" has everything observed Ready. Stack
// isolation renders a pool per stack and allows at most 200 stacks;
// organization isolation renders one pool for up to 1000.
func BenchmarkRunFunction(b *testing.B) {
	for _, bc := range []struct {
		isolation string
		stacks    []int
	}{
		{"stack", []int{1, 10, 100, 200}},
		{"organization", []int{1, 10, 100, 1000}},
	} {
		for _, n := range bc.stacks {
			newReq, steadyReq := benchRequests(b, bc.isolation, n)
			b.Run(fmt.Sprintf("%s/stacks=%d/new", bc.isolation, n), func(b *testing.B) { fntest.Bench(b, &Function{log: logging.NewNopLogger()}, newReq) })
			b.Run(fmt.Sprintf("%s/stacks=%d/steady", bc.isolation, n), func(b *testing.B) { fntest.Bench(b, &Function{log: logging.NewNopLogger()}, steadyReq) })
		}
	}
}

// BenchmarkCallOverFloor measures the function's own share of a call, as
// Crossplane pays for it over gRPC: the request decoded, RunFunction and the
// response encoded ("call"), over what decoding the same request and
// encoding the same response costs any function ("floor"). x-floor is their
// ratio.
func BenchmarkCallOverFloor(b *testing.B) {
	for _, bc := range []struct {
		isolation string
		stacks    int
	}{
		{"stack", 100},
		{"stack", 200},
		{"organization", 1000},
	} {
		newReq, steadyReq := benchRequests(b, bc.isolation, bc.stacks)
		b.Run(fmt.Sprintf("%s/stacks=%d/new", bc.isolation, bc.stacks), func(b *testing.B) { fntest.BenchOverFloor(b, &Function{log: logging.NewNopLogger()}, newReq) })
		b.Run(fmt.Sprintf("%s/stacks=%d/steady", bc.isolation, bc.stacks), func(b *testing.B) { fntest.BenchOverFloor(b, &Function{log: logging.NewNopLogger()}, steadyReq) })
	}
}

// benchRequests builds the two requests of an organization of n stacks,
// each in its default namespace, which the platform gives it: "new" has
// nothing composed yet, "steady" has everything "new" renders observed Ready,
// with managed fields, and the XR with the status the function set, as
// Crossplane sends them.
func benchRequests(b *testing.B, isolation string, n int) (newReq, steadyReq *fnv1.RunFunctionRequest) {
	b.Helper()
	stacks := make([]string, n)
	world := fntest.Cluster{refNodeClass, refNodePool}
	for i := range stacks {
		stacks[i] = fmt.Sprintf(`{"name":"stack-%d"}`, i)
		world = append(world, namespace(defaultNamespace("acme", fmt.Sprintf("stack-%d", i))))
	}
	spec := `{"organization":"acme","customer":"acme-corp","isolation":"` + isolation + `","stacks":[` + strings.Join(stacks, ",") + `],
		"nodeClassRef":{"name":"default"},"nodePoolRef":{"name":"default"},"tags":{"cost-center":"42"}}`

	newReq, rsp := benchRequest(b, spec, nil, world)
	observed := map[string]*fnv1.Resource{}
	for name, r := range rsp.GetDesired().GetResources() {
		o := fntest.ObservedAsSent(newReq.GetObserved().GetComposite().GetResource().AsMap(), name, r.GetResource().AsMap(), readyStatus())
		st, err := structpb.NewStruct(o)
		if err != nil {
			b.Fatal(err)
		}
		observed[name] = &fnv1.Resource{Resource: st}
	}
	steadyReq, rsp = benchRequest(b, spec, observed, world)
	// Crossplane sends the XR back with the status the function last set.
	xrAsSent, err := structpb.NewStruct(fntest.CompositeAsSent(steadyReq.GetObserved().GetComposite().GetResource().AsMap(), rsp))
	if err != nil {
		b.Fatal(err)
	}
	steadyReq.Observed.Composite = &fnv1.Resource{Resource: xrAsSent}
	return newReq, steadyReq
}

// benchRequest builds a request whose requirements are all resolved against
// the world, with the function's response to it.
func benchRequest(b *testing.B, spec string, observed map[string]*fnv1.Resource, world fntest.Cluster) (*fnv1.RunFunctionRequest, *fnv1.RunFunctionResponse) {
	b.Helper()
	req := &fnv1.RunFunctionRequest{
		Input:    resource.MustStructJSON(input),
		Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: resource.MustStructJSON(xr(spec))}, Resources: observed},
		Desired:  &fnv1.State{},
	}
	req, rsp := fntest.Settle(b, &Function{log: logging.NewNopLogger()}, req, world)
	fntest.AssertNoFatal(b, rsp)
	return req, rsp
}
