// Package fntest holds what both functions' tests need to read a
// RunFunctionResponse: desired resources as plain JSON maps, and small
// helpers to compare them with go-cmp.
package fntest

import (
	"context"
	"encoding/json"
	"runtime"
	"runtime/metrics"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/clusterview"
)

// Desired decodes the desired composed resources of a response, by name.
func Desired(t testing.TB, rsp *fnv1.RunFunctionResponse) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for name, r := range rsp.GetDesired().GetResources() {
		out[name] = AsMap(t, r.GetResource())
	}
	return out
}

// AsMap decodes a protobuf Struct as encoding/json would decode its JSON.
func AsMap(t testing.TB, s *structpb.Struct) map[string]any {
	t.Helper()
	b, err := s.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return JSONMap(t, string(b))
}

// JSONMap decodes a JSON object.
func JSONMap(t testing.TB, j string) map[string]any {
	t.Helper()
	m := map[string]any{}
	if err := json.Unmarshal([]byte(j), &m); err != nil {
		t.Fatalf("bad JSON %s: %v", j, err)
	}
	return m
}

// ToJSON encodes v.
func ToJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Dig returns the value at path in a decoded object, or nil.
func Dig(m map[string]any, path ...string) any {
	var v any = m
	for _, p := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[p]
	}
	return v
}

// Condition returns the condition of a type the response sets, and fails the test if it sets none.
func Condition(t testing.TB, rsp *fnv1.RunFunctionResponse, typ string) *fnv1.Condition {
	t.Helper()
	for _, c := range rsp.GetConditions() {
		if c.GetType() == typ {
			return c
		}
	}
	t.Fatalf("no %s condition among %v", typ, rsp.GetConditions())
	return nil
}

// AssertNoFatal stops the test if the function returned a fatal result.
func AssertNoFatal(t testing.TB, rsp *fnv1.RunFunctionResponse) {
	t.Helper()
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
			t.Fatalf("unexpected fatal result: %s", r.GetMessage())
		}
	}
}

// Cluster holds the objects (as JSON) a fake API server returns for a
// function's required resources. An XKarpenterCluster comes with the view its
// function composes for its organizations (ClusterView).
type Cluster []string

// Run calls the function the way Crossplane does: it resolves the function's
// requirements against the cluster and calls again, until the function asks
// for the same requirements twice in a row (at most 5 calls, as Crossplane).
func Run(t testing.TB, fn fnv1.FunctionRunnerServiceServer, req *fnv1.RunFunctionRequest, c Cluster) *fnv1.RunFunctionResponse {
	t.Helper()
	_, rsp := Settle(t, fn, req, c)
	return rsp
}

// Settle calls the function as Run does, and returns the last request, whose
// requirements are resolved, with the function's response to it.
func Settle(t testing.TB, fn fnv1.FunctionRunnerServiceServer, req *fnv1.RunFunctionRequest, c Cluster) (*fnv1.RunFunctionRequest, *fnv1.RunFunctionResponse) {
	t.Helper()
	var asked *fnv1.Requirements
	objects := c.objects(t)
	for range 5 {
		// Each call gets its own copy, as over gRPC: response.To shares the
		// request's desired state with the response.
		rsp, err := fn.RunFunction(context.Background(), proto.Clone(req).(*fnv1.RunFunctionRequest))
		if err != nil {
			t.Fatalf("RunFunction(...): unexpected error: %v", err)
		}
		if rsp.GetRequirements() == nil || (asked != nil && proto.Equal(rsp.GetRequirements(), asked)) {
			return req, rsp
		}
		asked = rsp.GetRequirements()
		req = proto.Clone(req).(*fnv1.RunFunctionRequest)
		req.RequiredResources = resolve(objects, asked)
	}
	t.Fatalf("requirements did not stabilise after 5 calls")
	return nil, nil
}

// objects decodes the cluster's objects, with the view of each cluster XR.
func (c Cluster) objects(t testing.TB) []*unstructured.Unstructured {
	t.Helper()
	objects := make([]*unstructured.Unstructured, 0, len(c))
	for _, o := range c {
		u := &unstructured.Unstructured{Object: JSONMap(t, o)}
		objects = append(objects, u)
		if u.GroupVersionKind() == clusterGVK {
			objects = append(objects, ClusterView(u))
		}
	}
	return objects
}

// resolve answers requirements by name, as Crossplane does.
func resolve(objects []*unstructured.Unstructured, rq *fnv1.Requirements) map[string]*fnv1.Resources {
	out := map[string]*fnv1.Resources{}
	for name, sel := range rq.GetResources() {
		items := &fnv1.Resources{}
		for _, u := range objects {
			if u.GetAPIVersion() == sel.GetApiVersion() && u.GetKind() == sel.GetKind() && Selects(sel, u) {
				items.Items = append(items.Items, &fnv1.Resource{Resource: resource.MustStructObject(u)})
			}
		}
		out[name] = items
	}
	return out
}

// clusterGVK is the kind of the XRs whose view organizations read.
var clusterGVK = schema.GroupVersionKind{Group: v1alpha1.Group, Version: v1alpha1.Version, Kind: v1alpha1.ClusterKind}

// ClusterView is the view an XKarpenterCluster's function composes for its organizations, as Crossplane
// returns it: controlled by the cluster, its spec and status as they are, so a malformed one stays malformed.
func ClusterView(xr *unstructured.Unstructured) *unstructured.Unstructured {
	view := &unstructured.Unstructured{Object: map[string]any{"data": map[string]any{}}}
	view.SetGroupVersionKind(clusterview.GVK)
	view.SetName(clusterview.Name(xr.GetName()))
	view.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: xr.GetAPIVersion(), Kind: xr.GetKind(), Name: xr.GetName(), UID: xr.GetUID(), Controller: ptr.To(true)}})
	for _, f := range []string{"spec", "status"} {
		if v, ok := xr.Object[f]; ok {
			view.Object["data"].(map[string]any)[f] = v
		}
	}
	return view
}

// Selects reports whether a selector of the right kind selects the object,
// by name or by labels, as Crossplane does: a selector without a namespace
// selects by labels in every namespace, and by name only cluster-scoped.
func Selects(sel *fnv1.ResourceSelector, u *unstructured.Unstructured) bool {
	if ml := sel.GetMatchLabels(); ml != nil {
		if sel.Namespace != nil && u.GetNamespace() != sel.GetNamespace() {
			return false
		}
		labels := u.GetLabels()
		for k, v := range ml.GetLabels() {
			if got, ok := labels[k]; !ok || got != v {
				return false
			}
		}
		return true
	}
	return u.GetNamespace() == sel.GetNamespace() && u.GetName() == sel.GetMatchName()
}

// Bench measures RunFunction on one request; a fatal result fails the
// benchmark, so a benchmark never times an error path by mistake.
func Bench(b *testing.B, fn fnv1.FunctionRunnerServiceServer, req *fnv1.RunFunctionRequest) {
	b.Helper()
	b.ReportAllocs()
	desired := proto.Clone(req.GetDesired()).(*fnv1.State)
	// Calls fill in the desired state of the request they get: a copy, so that the caller's request is the same
	// for the next run (go test -count runs the benchmark again with it).
	req = proto.Clone(req).(*fnv1.RunFunctionRequest)
	for b.Loop() {
		// Each call starts from the request's own desired state, as over
		// gRPC: response.To shares it with the response, which the last call
		// filled in.
		req.Desired = proto.Clone(desired).(*fnv1.State)
		rsp, err := fn.RunFunction(context.Background(), req)
		if err != nil {
			b.Fatal(err)
		}
		AssertNoFatal(b, rsp)
	}
}

// BenchOverFloor measures a call as Crossplane pays for it, the request's
// bytes decoded, RunFunction and the response encoded ("call"), beside the
// floor any function pays for the same objects: the same bytes decoded and
// the same response encoded ("floor"). It reports each one's CPU time, GC
// included (floor-cpu-ns/op, call-cpu-ns/op), and bytes allocated
// (floor-B/op, call-B/op), and the call's CPU time over the floor's
// (x-floor).
//
// Floor and call alternate on one P: CPU time measured in two separate runs
// compared two machines whenever a neighbour started or stopped in between,
// and with more than one P the garbage collector marks on whatever P is
// idle, so the CPU time it took depended on the neighbours too (the same code
// measured 1.42x and 2.16x on 2 cores). They alternate in blocks of
// overFloorBlock, each spanning several collections: alternating one by one,
// a collection fell every so many bytes and so, iteration after iteration,
// at the same point of the pair, and where that point fell, in the floor or
// in the call, decided the ratio (the same code read 1.25 and 2.19).
func BenchOverFloor(b *testing.B, fn fnv1.FunctionRunnerServiceServer, req *fnv1.RunFunctionRequest) {
	b.Helper()
	in, err := proto.Marshal(req)
	if err != nil {
		b.Fatal(err)
	}
	call := func() { respond(b, fn, in) }
	rsp := firstResponse(b, fn, in)
	floor := func() {
		if err := proto.Unmarshal(in, &fnv1.RunFunctionRequest{}); err != nil {
			b.Fatal(err)
		}
		if _, err := proto.Marshal(rsp); err != nil {
			b.Fatal(err)
		}
	}

	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var floorCost, callCost cost
	for b.Loop() {
		floorCost.add(measure(b, overFloorBlock, floor))
		callCost.add(measure(b, overFloorBlock, call))
	}
	n := float64(b.N * overFloorBlock)
	b.ReportMetric(floorCost.cpu/n, "floor-cpu-ns/op")
	b.ReportMetric(floorCost.bytes/n, "floor-B/op")
	b.ReportMetric(callCost.cpu/n, "call-cpu-ns/op")
	b.ReportMetric(callCost.bytes/n, "call-B/op")
	b.ReportMetric(callCost.cpu/floorCost.cpu, "x-floor")
}

// respond decodes the request's bytes, runs the function and encodes its response, as a call over gRPC does.
func respond(b *testing.B, fn fnv1.FunctionRunnerServiceServer, in []byte) []byte {
	b.Helper()
	req := &fnv1.RunFunctionRequest{}
	if err := proto.Unmarshal(in, req); err != nil {
		b.Fatal(err)
	}
	rsp, err := fn.RunFunction(context.Background(), req)
	if err != nil {
		b.Fatal(err)
	}
	AssertNoFatal(b, rsp)
	out, err := proto.Marshal(rsp)
	if err != nil {
		b.Fatal(err)
	}
	return out
}

// firstResponse is the response to the request's bytes, as Crossplane
// decodes it.
func firstResponse(b *testing.B, fn fnv1.FunctionRunnerServiceServer, in []byte) *fnv1.RunFunctionResponse {
	b.Helper()
	decoded := &fnv1.RunFunctionResponse{}
	if err := proto.Unmarshal(respond(b, fn, in), decoded); err != nil {
		b.Fatal(err)
	}
	return decoded
}

// cost is CPU time in nanoseconds and bytes allocated.
type cost struct{ cpu, bytes float64 }

func (c *cost) add(o cost) { c.cpu += o.cpu; c.bytes += o.bytes }

// overFloorBlock is how many floors, then calls, BenchOverFloor runs in a row: enough for each block to allocate
// several times the live heap, and so to span several collections, at every size benchmarked.
const overFloorBlock = 8

// measure runs op times times and returns what it cost.
func measure(b *testing.B, times int, op func()) cost {
	allocated := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(allocated)
	bytesBefore, cpuBefore := allocated[0].Value.Uint64(), cpuTime(b)
	for range times {
		op()
	}
	cpu := cpuTime(b) - cpuBefore
	metrics.Read(allocated)
	return cost{cpu: float64(cpu), bytes: float64(allocated[0].Value.Uint64() - bytesBefore)}
}

// cpuTime is the CPU time the process has used so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Request builds a RunFunctionRequest from the function input, the XR and
// the observed composed resources (composition resource name -> object), all
// as JSON.
func Request(input, xr string, observed map[string]string) *fnv1.RunFunctionRequest {
	req := &fnv1.RunFunctionRequest{
		Input:    resource.MustStructJSON(input),
		Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: resource.MustStructJSON(xr)}},
		Desired:  &fnv1.State{},
	}
	if len(observed) > 0 {
		req.Observed.Resources = map[string]*fnv1.Resource{}
		for name, o := range observed {
			req.Observed.Resources[name] = &fnv1.Resource{Resource: resource.MustStructJSON(o)}
		}
	}
	return req
}

// AssertChangesNothing fails unless rsp holds exactly one Fatal result, with
// message want, and composes nothing but what was observed, unchanged.
func AssertChangesNothing(t *testing.T, rsp *fnv1.RunFunctionResponse, want string, observed map[string]string) {
	t.Helper()
	var fatal []string
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
			fatal = append(fatal, r.GetMessage())
		}
	}
	if diff := cmp.Diff([]string{want}, fatal); diff != "" {
		t.Errorf("fatal results: -want, +got:\n%s", diff)
	}
	for name, o := range Desired(t, rsp) {
		was, ok := observed[name]
		if !ok {
			t.Errorf("desired %s was never composed; a Fatal response composes nothing new", name)
			continue
		}
		if diff := cmp.Diff(JSONMap(t, was), o); diff != "" {
			t.Errorf("desired %s differs from the observed one: -observed, +desired:\n%s", name, diff)
		}
	}
}

// WithStatus copies an observed object's status (JSON) onto the object a function keeps of it, which carries
// none, so the two compare whole.
func WithStatus(t testing.TB, kept map[string]any, observed string) map[string]any {
	t.Helper()
	if st, ok := JSONMap(t, observed)["status"]; ok && kept != nil {
		kept["status"] = st
	}
	return kept
}

// ReadySince returns the XR (JSON) with the Ready condition Crossplane sets, turned True ago before now: an XR
// that changed that long ago, as its TTL (fncall.RequeueAfter) reads it.
func ReadySince(t testing.TB, xrJSON string, ago time.Duration) string {
	t.Helper()
	xr := map[string]any{}
	if err := json.Unmarshal([]byte(xrJSON), &xr); err != nil {
		t.Fatalf("XR %s: %v", xrJSON, err)
	}
	xr["status"] = map[string]any{"conditions": []any{map[string]any{
		"type": "Ready", "status": "True", "reason": "Available",
		"lastTransitionTime": time.Now().Add(-ago).UTC().Format(time.RFC3339),
	}}}
	return ToJSON(t, xr)
}
