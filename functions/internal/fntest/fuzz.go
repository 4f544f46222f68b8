package fntest

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/yaml"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
)

// A Seed is one fuzz input, every document as JSON: the XR, the function
// input, the objects in the cluster (a list) and the observed composed
// resources (composition resource name -> object).
type Seed struct {
	XR, Input, Cluster, Observed string
}

// ExampleSeeds reads every example of a function (dir/*/xr.yaml, with
// required.yaml and observed.yaml beside it) as fuzz seeds.
func ExampleSeeds(t testing.TB, dir, input string) []Seed {
	t.Helper()
	xrs, err := filepath.Glob(filepath.Join(dir, "*", "xr.yaml"))
	if err != nil || len(xrs) == 0 {
		t.Fatalf("no examples in %s: %v", dir, err)
	}
	out := make([]Seed, 0, len(xrs))
	for _, xrFile := range xrs {
		ex := filepath.Dir(xrFile)
		docs := readYAML(t, xrFile)
		if len(docs) != 1 {
			t.Fatalf("%s: want one XR, got %d documents", xrFile, len(docs))
		}
		observed := map[string]any{}
		for _, o := range readYAML(t, filepath.Join(ex, "observed.yaml")) {
			name, _ := Dig(o, "metadata", "annotations", "crossplane.io/composition-resource-name").(string)
			observed[name] = o
		}
		cluster := make([]any, 0, 4)
		for _, o := range readYAML(t, filepath.Join(ex, "required.yaml")) {
			cluster = append(cluster, o)
		}
		out = append(out, Seed{XR: ToJSON(t, docs[0]), Input: input, Cluster: ToJSON(t, cluster), Observed: ToJSON(t, observed)})
	}
	return out
}

// readYAML reads every document of a YAML file; a missing file has none.
func readYAML(t testing.TB, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	d := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	for {
		var m map[string]any
		err := d.Decode(&m)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if m != nil {
			out = append(out, m)
		}
	}
}

// maxFuzzInput bounds one fuzz input, so the fuzzer spends its time on
// shapes, not on megabytes.
const maxFuzzInput = 256 << 10

// FuzzRun calls fn with the fuzzed documents as Crossplane would: it answers
// the function's requirements from the cluster and calls again, until the
// requirements are stable or the function returns a Fatal result. ops mutate
// the decoded documents' structure (see Mutate); with loose, a requirement is
// answered with every object of the requested name whatever its kind, as a
// broken or hostile API server might. Documents that are not JSON objects
// are skipped: Crossplane sends only objects.
//
// fn is called directly, never through a server that recovers panics, so a
// panic fails the fuzz target. After each call FuzzRun checks what must hold
// for every input: a response and no error; the same request answered the
// same way twice; a Fatal result composes nothing; otherwise every composed
// object has a kind and a valid name and, on the last call, none is an object
// that exists and that the XR does not control.
func FuzzRun(t *testing.T, fn fnv1.FunctionRunnerServiceServer, s Seed, ops []byte, loose bool) {
	if len(s.XR)+len(s.Input)+len(s.Cluster)+len(s.Observed) > maxFuzzInput {
		t.Skip("input too large")
	}
	var d docs
	if json.Unmarshal([]byte(s.XR), &d.XR) != nil || json.Unmarshal([]byte(s.Input), &d.Input) != nil ||
		json.Unmarshal([]byte(s.Cluster), &d.Cluster) != nil || json.Unmarshal([]byte(s.Observed), &d.Observed) != nil ||
		d.XR == nil || d.Input == nil {
		t.Skip("not JSON objects")
	}
	d.mutate(ops)
	inUse := d.labelUsedObjects()
	req, ok := d.request()
	if !ok {
		t.Skip("an observed resource is not an object")
	}
	cluster := d.objects()
	xrUID, _ := Dig(d.XR, "metadata", "uid").(string)

	var asked *fnv1.Requirements
	for call := range 5 {
		rsp := callChecked(t, fn, req)
		if _, fatal := fatalResult(rsp); fatal {
			if n := len(rsp.GetDesired().GetResources()); n != 0 {
				t.Fatalf("call %d: a Fatal result with %d desired composed resources", call, n)
			}
			return
		}
		checkComposed(t, rsp, req)
		checkInUseKept(t, rsp, inUse)
		last := rsp.GetRequirements() == nil || (asked != nil && proto.Equal(rsp.GetRequirements(), asked))
		if last {
			checkNothingAdopted(t, rsp, req, cluster, xrUID)
			return
		}
		asked = rsp.GetRequirements()
		req = proto.Clone(req).(*fnv1.RunFunctionRequest)
		req.RequiredResources = resolveFuzz(asked, cluster, loose)
	}
}

// callChecked calls fn twice on copies of req and fails unless both calls
// return the same response and no error.
func callChecked(t *testing.T, fn fnv1.FunctionRunnerServiceServer, req *fnv1.RunFunctionRequest) *fnv1.RunFunctionResponse {
	t.Helper()
	var rsps [2]*fnv1.RunFunctionResponse
	for i := range rsps {
		rsp, err := fn.RunFunction(context.Background(), proto.Clone(req).(*fnv1.RunFunctionRequest))
		if err != nil {
			t.Fatalf("RunFunction returned an error instead of a result: %v", err)
		}
		if rsp == nil {
			t.Fatal("RunFunction returned no response")
		}
		rsps[i] = rsp
	}
	if !proto.Equal(rsps[0], rsps[1]) {
		t.Fatalf("the same request answered differently: -first, +second:\n%s", cmp.Diff(rsps[0], rsps[1], protocmp.Transform()))
	}
	return rsps[0]
}

func fatalResult(rsp *fnv1.RunFunctionResponse) (string, bool) {
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
			return r.GetMessage(), true
		}
	}
	return "", false
}

// checkComposed fails if a composed object lacks a kind or a valid name:
// Crossplane would fail to apply it, or generate a name kiso never checked.
// An object kept as Crossplane observed it is the API server's, not kiso's.
func checkComposed(t *testing.T, rsp *fnv1.RunFunctionResponse, req *fnv1.RunFunctionRequest) {
	t.Helper()
	for name, r := range rsp.GetDesired().GetResources() {
		u := &unstructured.Unstructured{Object: r.GetResource().AsMap()}
		if o, ok := req.GetObserved().GetResources()[name]; ok {
			if (&unstructured.Unstructured{Object: o.GetResource().AsMap()}).GetName() == u.GetName() {
				continue
			}
		}
		if u.GetAPIVersion() == "" || u.GetKind() == "" {
			t.Fatalf("desired %s has no apiVersion or kind: %v", name, u.Object)
		}
		if msgs := validation.IsDNS1123Subdomain(u.GetName()); len(msgs) > 0 {
			t.Fatalf("desired %s (%s) has an invalid name %q: %v", name, u.GetKind(), u.GetName(), msgs)
		}
		for k, v := range u.GetLabels() {
			if msgs := append(validation.IsQualifiedName(k), validation.IsValidLabelValue(v)...); len(msgs) > 0 {
				t.Fatalf("desired %s (%s %q) has an invalid label %s=%q: %v", name, u.GetKind(), u.GetName(), k, v, msgs)
			}
		}
	}
}

// labelUsedObjects labels every observed object an observed ClusterUsage names as used, as Crossplane's usage
// controller does, and returns their composed resource names.
func (d *docs) labelUsedObjects() map[string]bool {
	return labelUsed(d.Observed)
}

// checkInUseKept fails if the function stops returning an object a Usage still names: Crossplane's webhook
// would refuse to delete it, and Crossplane would give up the XR's whole reconcile on the refusal.
func checkInUseKept(t *testing.T, rsp *fnv1.RunFunctionResponse, inUse map[string]bool) {
	t.Helper()
	for _, name := range slices.Sorted(maps.Keys(inUse)) {
		if _, ok := rsp.GetDesired().GetResources()[name]; !ok {
			t.Fatalf("observed %s is in use by a Usage, yet not desired: Crossplane would try to delete it and be refused", name)
		}
	}
}

// checkNothingAdopted fails if the function composes an object it has not
// composed before, that exists in the cluster and that the XR does not
// control: Crossplane would take it over.
func checkNothingAdopted(t *testing.T, rsp *fnv1.RunFunctionResponse, req *fnv1.RunFunctionRequest, cluster []*unstructured.Unstructured, xrUID string) {
	t.Helper()
	observed := map[string]bool{}
	for _, r := range req.GetObserved().GetResources() {
		observed[objectKey(&unstructured.Unstructured{Object: r.GetResource().AsMap()})] = true
	}
	existing := map[string]*unstructured.Unstructured{}
	for _, u := range cluster {
		existing[objectKey(u)] = u
	}
	for name, r := range rsp.GetDesired().GetResources() {
		k := objectKey(&unstructured.Unstructured{Object: r.GetResource().AsMap()})
		holder, exists := existing[k]
		if !exists || observed[k] || controlledBy(holder, xrUID) {
			continue
		}
		t.Fatalf("desired %s adopts %s, which exists and which the XR (uid %q) does not control", name, k, xrUID)
	}
}

func objectKey(u *unstructured.Unstructured) string {
	return u.GroupVersionKind().GroupKind().String() + "/" + u.GetNamespace() + "/" + u.GetName()
}

func controlledBy(u *unstructured.Unstructured, uid string) bool {
	if uid == "" {
		return false
	}
	for _, ref := range u.GetOwnerReferences() {
		if ref.Controller != nil && *ref.Controller && string(ref.UID) == uid {
			return true
		}
	}
	return false
}

// resolveFuzz answers requirements from the cluster: by group, kind,
// namespace and name as Crossplane does (an API server serves an object at
// every version of its kind), or by name alone when loose.
func resolveFuzz(rq *fnv1.Requirements, cluster []*unstructured.Unstructured, loose bool) map[string]*fnv1.Resources {
	out := map[string]*fnv1.Resources{}
	for name, sel := range rq.GetResources() {
		items := &fnv1.Resources{}
		gv, _ := schema.ParseGroupVersion(sel.GetApiVersion())
		for _, u := range cluster {
			sameKind := u.GroupVersionKind().GroupKind() == gv.WithKind(sel.GetKind()).GroupKind()
			matched := Selects(sel, u) && sameKind
			if loose {
				matched = u.GetName() == sel.GetMatchName() || sel.GetMatchLabels() != nil && Selects(sel, u)
			}
			if matched {
				s, err := resource.AsStruct(u)
				if err != nil {
					continue
				}
				items.Items = append(items.Items, &fnv1.Resource{Resource: s})
			}
		}
		out[name] = items
	}
	return out
}

// docs are the decoded documents of one fuzz input.
type docs struct {
	XR       map[string]any
	Input    map[string]any
	Cluster  []any
	Observed map[string]any
}

// request builds the first RunFunctionRequest, before any requirement.
func (d docs) request() (*fnv1.RunFunctionRequest, bool) {
	xr, err := resource.AsStruct(&unstructured.Unstructured{Object: d.XR})
	if err != nil {
		return nil, false
	}
	in, err := resource.AsStruct(&unstructured.Unstructured{Object: d.Input})
	if err != nil {
		return nil, false
	}
	req := &fnv1.RunFunctionRequest{Input: in, Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: xr}}, Desired: &fnv1.State{}}
	for _, name := range slices.Sorted(maps.Keys(d.Observed)) {
		o, ok := d.Observed[name].(map[string]any)
		if !ok {
			return nil, false
		}
		s, err := resource.AsStruct(&unstructured.Unstructured{Object: o})
		if err != nil {
			return nil, false
		}
		if req.Observed.Resources == nil {
			req.Observed.Resources = map[string]*fnv1.Resource{}
		}
		req.Observed.Resources[name] = &fnv1.Resource{Resource: s}
	}
	return req, true
}

// objects are the cluster's objects; anything in the list that is not an
// object is dropped, as an API server holds only objects.
func (d docs) objects() []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, 0, len(d.Cluster))
	for _, o := range d.Cluster {
		if m, ok := o.(map[string]any); ok {
			out = append(out, &unstructured.Unstructured{Object: m})
		}
	}
	return out
}

// replacements are what Mutate puts in place of a value: other types, empty
// values, values near kiso's limits, unicode and very long strings.
var replacements = []func() any{
	func() any { return nil },
	func() any { return "" },
	func() any { return float64(0) },
	func() any { return float64(-1) },
	func() any { return 1e300 },
	func() any { return true },
	func() any { return []any{} },
	func() any { return map[string]any{} },
	func() any { return []any{"x", float64(1), nil} },
	func() any { return map[string]any{"x": float64(1), "y": []any{}, "z": nil} },
	func() any { return "ünïcødé-名前-🚀" },
	func() any { return strings.Repeat("a", 64) },
	func() any { return strings.Repeat("b", 254) },
	func() any { return strings.Repeat("é", 4096) },
	func() any { return "kube-system" },
	func() any { return "Never" },
	func() any { return "kiso.dev/organization" },
	func() any { return "karpenter.sh/nodepool" },
	func() any { return "a/b:c=d e" },
	func() any { return "-leading-dash" },
	func() any { return "UPPER_case" },
	func() any { return "default" },
	func() any { return "acme" },
	func() any { return "0" },
}

// mutate applies ops, 4 bytes each, to the documents: which document, a seed
// for the path walked into it, and what to do at the end of the path
// (replace the value, delete it, or duplicate a list element).
func (d *docs) mutate(ops []byte) {
	for len(ops) >= 4 {
		op := ops[:4]
		ops = ops[4:]
		var root any
		switch op[0] % 4 {
		case 0:
			root = d.XR
		case 1:
			root = d.Input
		case 2:
			root = d.Cluster
		default:
			root = d.Observed
		}
		rng := uint32(binary.LittleEndian.Uint16(op[1:3])) + 1
		action := int(op[3])
		mutateAt(root, &rng, action)
	}
}

// next is a small xorshift generator: the same ops walk the same path.
func next(rng *uint32) int {
	*rng ^= *rng << 13
	*rng ^= *rng >> 17
	*rng ^= *rng << 5
	return int(*rng >> 1)
}

// mutateAt walks from v into a random child, stopping at random, and mutates
// the child it stops at. It reports whether it mutated anything.
func mutateAt(v any, rng *uint32, action int) bool {
	switch c := v.(type) {
	case map[string]any:
		keys := slices.Sorted(maps.Keys(c))
		if len(keys) == 0 {
			c[fmt.Sprint("k", action)] = replacements[action%len(replacements)]()
			return true
		}
		k := keys[next(rng)%len(keys)]
		if next(rng)%3 != 0 && mutateAt(c[k], rng, action) {
			return true
		}
		switch {
		case action >= 2*len(replacements):
			delete(c, k)
		default:
			c[k] = replacements[action%len(replacements)]()
		}
		return true
	case []any:
		if len(c) == 0 {
			return false
		}
		i := next(rng) % len(c)
		if next(rng)%3 != 0 && mutateAt(c[i], rng, action) {
			return true
		}
		switch {
		case action >= 2*len(replacements):
			// Duplicate the element in place: lists with repeated entries.
			c[(i+1)%len(c)] = runtime.DeepCopyJSONValue(c[i])
		default:
			c[i] = replacements[action%len(replacements)]()
		}
		return true
	}
	return false
}
