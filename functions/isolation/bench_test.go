package main

import (
	"context"
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
			stacks := make([]string, n)
			for i := range stacks {
				stacks[i] = fmt.Sprintf(`{"name":"stack-%d"}`, i)
			}
			spec := `{"organization":"acme","customer":"acme-corp","isolation":"` + bc.isolation + `","stacks":[` + strings.Join(stacks, ",") + `],
				"nodeClassRef":{"name":"default"},"nodePoolRef":{"name":"default"},"tags":{"cost-center":"42"}}`

			newReq := benchRequest(b, spec, nil)
			b.Run(fmt.Sprintf("%s/stacks=%d/new", bc.isolation, n), func(b *testing.B) { fntest.Bench(b, &Function{log: logging.NewNopLogger()}, newReq) })

			observed := map[string]*fnv1.Resource{}
			rsp, err := (&Function{log: logging.NewNopLogger()}).RunFunction(context.Background(), newReq)
			if err != nil {
				b.Fatal(err)
			}
			for name, r := range rsp.GetDesired().GetResources() {
				o := r.GetResource().AsMap()
				o["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}}
				st, err := structpb.NewStruct(o)
				if err != nil {
					b.Fatal(err)
				}
				observed[name] = &fnv1.Resource{Resource: st}
			}
			steadyReq := benchRequest(b, spec, observed)
			b.Run(fmt.Sprintf("%s/stacks=%d/steady", bc.isolation, n), func(b *testing.B) { fntest.Bench(b, &Function{log: logging.NewNopLogger()}, steadyReq) })
		}
	}
}

// benchRequest builds a request whose requirements are all resolved: the
// references and namespaces exist and no foreign object holds a name.
func benchRequest(b *testing.B, spec string, observed map[string]*fnv1.Resource) *fnv1.RunFunctionRequest {
	b.Helper()
	req := &fnv1.RunFunctionRequest{
		Input:    resource.MustStructJSON(input),
		Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: resource.MustStructJSON(xr(spec))}, Resources: observed},
		Desired:  &fnv1.State{},
	}
	rsp, err := (&Function{log: logging.NewNopLogger()}).RunFunction(context.Background(), req)
	if err != nil {
		b.Fatal(err)
	}
	req.RequiredResources = map[string]*fnv1.Resources{}
	for name, sel := range rsp.GetRequirements().GetResources() {
		req.RequiredResources[name] = &fnv1.Resources{}
		if sel.GetKind() == "Namespace" {
			// Every namespace exists, so each gets its ConfigMap.
			req.RequiredResources[name].Items = []*fnv1.Resource{{Resource: resource.MustStructJSON(namespace(sel.GetMatchName()))}}
		}
	}
	req.RequiredResources[requireReferenceNodeClass] = &fnv1.Resources{Items: []*fnv1.Resource{{Resource: resource.MustStructJSON(refNodeClass)}}}
	req.RequiredResources[requireReferenceNodePool] = &fnv1.Resources{Items: []*fnv1.Resource{{Resource: resource.MustStructJSON(refNodePool)}}}
	return req
}
