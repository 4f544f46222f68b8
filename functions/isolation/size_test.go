package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/kiso-dev/kiso/functions/internal/fntest"
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
	}{
		"StackIsolation":        {isolation: "stack", stacks: maxStackedStacks, namespaces: maxStackedNamespaces},
		"OrganizationIsolation": {isolation: "organization", stacks: maxStacks, namespaces: maxNamespaces},
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
			spec, err := json.Marshal(map[string]any{
				"organization": org, "customer": strings.Repeat("c", 63), "isolation": tc.isolation, "stacks": stacks,
				"clusterRef": map[string]any{"name": "prod"}, "nodeRole": "Dedicated", "placement": map[string]any{"inject": true},
				"nodeClassRef": map[string]any{"name": "default"}, "nodePoolRef": map[string]any{"name": "default"},
				"tags": map[string]any{"cost-center": strings.Repeat("4", 64)},
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
			if placed["ConfigMap"] != tc.namespaces || placed["Role"] != tc.namespaces {
				t.Fatalf("rendered %d placement ConfigMaps and %d Roles; want one of each in each of the %d namespaces", placed["ConfigMap"], placed["Role"], tc.namespaces)
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
