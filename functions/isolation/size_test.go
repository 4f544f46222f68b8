package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/fntest"
	"github.com/kiso-dev/kiso/functions/internal/server"
)

// grpcMessageLimit is the largest message Crossplane's function client
// receives (gRPC's default).
const grpcMessageLimit = 4 << 20

// The largest organizations the spec allows must fit one response, even the
// first one of a new XR, which also asks about every name it will take: a
// dedicated identity, both admission policies, long names and values, every
// namespace given to the organization (so each has a ConfigMap and a Role).
func TestLargestOrganizationFitsOneResponse(t *testing.T) {
	cases := map[string]struct {
		isolation  string
		stacks     int
		namespaces int
		// classes are the organization's classes besides the default one, each of every stack.
		classes int
	}{
		"StackIsolation":        {isolation: "stack", stacks: maxStackedStacks, namespaces: maxStackedNamespaces},
		"OrganizationIsolation": {isolation: "organization", stacks: maxStacks, namespaces: maxNamespaces},
		// A pool per stack and class: as many pools as stack isolation allows, in the most classes.
		"StackIsolationWithClasses":        {isolation: "stack", stacks: maxStackedStacks / (1 + maxClasses), namespaces: maxStackedNamespaces, classes: maxClasses},
		"OrganizationIsolationWithClasses": {isolation: "organization", stacks: maxStacks, namespaces: maxNamespaces, classes: maxClasses},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			org := strings.Repeat("o", 40)
			c := cluster{refNodeClass, refNodePool, clusterXR}
			stacks := make([]any, 0, tc.stacks)
			for i := range tc.stacks {
				stack := fmt.Sprintf("%s-%04d", strings.Repeat("s", 18), i)
				var nss []any
				for j := range tc.namespaces / tc.stacks {
					ns := fmt.Sprintf("%s-%s-%d", org[:30], stack, j)
					nss = append(nss, ns)
					c = append(c, namespaceOf(ns, org))
				}
				stacks = append(stacks, map[string]any{"name": stack, "namespaces": nss})
			}
			classes := make([]any, 0, tc.classes)
			for i := range tc.classes {
				classes = append(classes, map[string]any{"name": fmt.Sprintf("%s-%02d", strings.Repeat("k", 60), i),
					"nodeClassRef": map[string]any{"name": "default"}, "nodePoolRef": map[string]any{"name": "default"}})
			}
			spec, err := json.Marshal(map[string]any{
				"organization": org, "customer": strings.Repeat("c", 63), "isolation": tc.isolation, "stacks": stacks,
				"clusterRef": map[string]any{"name": "prod"}, "nodeRole": "Dedicated", "placement": map[string]any{"inject": true},
				"nodeClassRef": map[string]any{"name": "default"}, "nodePoolRef": map[string]any{"name": "default"},
				"tags": map[string]any{"cost-center": strings.Repeat("4", 64)}, "classes": classes,
				"limits": map[string]any{"cpu": 1000, "memory": "4000Gi", "nodes": 100},
			})
			if err != nil {
				t.Fatal(err)
			}
			rsp := run(t, newRequest(t, input, xr(string(spec)), nil), c)
			fntest.AssertNoFatal(t, rsp)
			placed := map[string]int{}
			byKind := map[string]int{}
			for _, r := range rsp.GetDesired().GetResources() {
				kind := r.GetResource().GetFields()["kind"].GetStringValue()
				byKind[kind] += proto.Size(r)
				if r.GetResource().GetFields()["metadata"].GetStructValue().GetFields()["name"].GetStringValue() == "kiso-placement" {
					placed[kind]++
				}
			}
			if want := tc.namespaces / tc.stacks * tc.stacks; placed["ConfigMap"] != want || placed["Role"] != want {
				t.Fatalf("rendered %d placement ConfigMaps and %d Roles; want one of each in each of the %d namespaces", placed["ConfigMap"], placed["Role"], want)
			}
			size := proto.Size(rsp)
			t.Logf("%d resources, %d bytes (%.0f%% of the limit): %s", len(rsp.GetDesired().GetResources()), size, 100*float64(size)/grpcMessageLimit, sizes(byKind))
			if size >= grpcMessageLimit {
				t.Errorf("response of %d bytes exceeds the %d-byte message Crossplane receives", size, grpcMessageLimit)
			}
		})
	}
}

func sizes(byKind map[string]int) string {
	kinds := make([]string, 0, len(byKind))
	for k := range byKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	out := make([]string, 0, len(kinds))
	for _, k := range kinds {
		out = append(out, fmt.Sprintf("%s %d KB", k, byKind[k]/1000))
	}
	return strings.Join(out, ", ")
}

// warnedPodsAtScale is how many pods the bounded-read promise is held to: a
// Warn-mode organization reads every pod of its namespaces, and Crossplane
// passes them on whole, managed fields included.
const warnedPodsAtScale = 5000

// TestWarnModeReadsFitTheServerAtScale: an organization in Warn mode with
// 5,000 running pods in its namespaces is one request the function server
// accepts, and the function counts them: a third select the organization's
// pool for their namespace, the rest select another stack's.
func TestWarnModeReadsFitTheServerAtScale(t *testing.T) {
	req, rsp := warnModeAtScale(t)
	size := proto.Size(req)
	t.Logf("request with %d pods: %d bytes, %d per pod (%.0f%% of the server's %d MiB)", warnedPodsAtScale, size, size/warnedPodsAtScale, 100*float64(size)/float64(server.MaxRecvBytes), server.MaxRecvBytes>>20)
	if size > server.MaxRecvBytes {
		t.Errorf("request of %d bytes exceeds the %d bytes the function server accepts", size, server.MaxRecvBytes)
	}
	st := fntest.AsMap(t, rsp.GetDesired().GetComposite().GetResource())["status"].(map[string]any)
	want := warnedPodsAtScale - (warnedPodsAtScale+len(scaleNamespaces)-1)/len(scaleNamespaces)
	if st["warnedPods"] != float64(want) {
		t.Errorf("status.warnedPods %v, want %d", st["warnedPods"], want)
	}
}

// scaleNamespaces are the namespaces of placementSpec's stacks.
var scaleNamespaces = []string{"acme-web", "batch", "reindex"}

// warnModeAtScale is the last request of a reconcile of an organization in
// Warn mode with warnedPodsAtScale pods spread over its namespaces, and the
// function's response to it.
func warnModeAtScale(t testing.TB) (*fnv1.RunFunctionRequest, *fnv1.RunFunctionResponse) {
	t.Helper()
	noPods := cluster{refNodeClass, refNodePool, clusterPolicy}
	for _, ns := range scaleNamespaces {
		noPods = append(noPods, namespace(ns))
	}
	spec := xr(placementSpec(v1alpha1.IsolationStack, &v1alpha1.Placement{Mode: v1alpha1.PlacementWarn}))
	fn := &Function{log: logging.NewNopLogger()}
	// What the organization composes does not depend on its pods: the Roles are composed, the policies in force.
	observed := map[string]string{}
	_, first := fntest.Settle(t, fn, fntest.Request(input, spec, nil), noPods)
	_, first = fntest.Settle(t, fn, fntest.Request(input, spec, map[string]string{string(organizationLockResource): fntest.ToJSON(t, fntest.Desired(t, first)[string(organizationLockResource)])}), noPods)
	for name, o := range fntest.Desired(t, first) {
		observed[name] = fntest.ToJSON(t, o)
	}
	// The fixture selects acme's web stack: right in acme-web, wrong in the jobs stack's namespaces.
	pods := fntest.Copies(t, "pod", warnedPodsAtScale, func(i int, u *unstructured.Unstructured) {
		u.SetNamespace(scaleNamespaces[i%len(scaleNamespaces)])
	})
	world := append(slices.Clip(noPods), pods...)
	req, rsp := fntest.Settle(t, fn, fntest.Request(input, spec, observed), world)
	fntest.AssertNoFatal(t, rsp)
	return req, rsp
}

// BenchmarkWarnModeReadsAtScale measures the call of TestWarnModeReadsFitTheServerAtScale as Crossplane pays
// for it (see fntest.BenchOverFloor): its bytes allocated per call are the function's memory at that size.
func BenchmarkWarnModeReadsAtScale(b *testing.B) {
	req, _ := warnModeAtScale(b)
	fntest.BenchOverFloor(b, &Function{log: logging.NewNopLogger()}, req)
}
