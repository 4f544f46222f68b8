package main

import (
	"strings"
	"testing"

	"github.com/crossplane/function-sdk-go/logging"

	"github.com/kiso-dev/kiso/functions/internal/fntest"
)

// FuzzRunFunction drives RunFunction with every example, mutated: the XR
// (spec included), the function input, objects already holding kiso's names
// and the observed composed resources. No input may panic; fntest.FuzzRun
// lists the invariants checked on every response.
//
//	go test -run '^$' -fuzz FuzzRunFunction -fuzztime 5m ./functions/cluster
func FuzzRunFunction(f *testing.F) {
	inputs := []string{input, `{"apiVersion":"cluster.fn.kiso.dev/v1alpha1","kind":"Input","keyDomain":"formance.com","platformNamespaces":["monitoring"]}`}
	for _, s := range fntest.ExampleSeeds(f, "../../examples/cluster", input) {
		for _, in := range inputs {
			f.Add(s.XR, in, s.Cluster, s.Observed, []byte(nil), false)
		}
		// The same XKarpenterCluster named as long as Kubernetes allows: names kiso derives from it must fit.
		f.Add(renamed(f, s.XR, strings.Repeat("n", 253)), input, s.Cluster, s.Observed, []byte(nil), false)
	}
	// Hand-written shapes no example has.
	foreignRole := `[{"apiVersion":"iam.aws.upbound.io/v1beta1","kind":"Role","metadata":{"name":"prod-karpenter-controller"},"spec":{"forProvider":{}}}]`
	for _, s := range []fntest.Seed{
		{XR: `{"apiVersion":"kiso.dev/v1alpha1","kind":"XKarpenterCluster","metadata":{"name":"prod"}}`, Input: input, Cluster: `[]`, Observed: `{}`},
		{XR: xr(`null`), Input: input, Cluster: `[]`, Observed: `{}`},
		{XR: xr(podIdentitySpec), Input: `{}`, Cluster: foreignRole, Observed: `{}`},
		{XR: xr(`{"clusterName":"ünïcødé","region":"eu-west-3","accountId":"111122223333","tags":{"team":1,"x":null}}`), Input: input, Cluster: `[]`, Observed: `{}`},
		{XR: xr(`{"clusterName":"prod","region":"eu-west-3","accountId":"111122223333","monitoring":{"labels":{"release":["a"]}},"karpenter":{"namespace":"` + longName + `"}}`), Input: input, Cluster: `[]`, Observed: `{}`},
		{XR: xr(podIdentitySpec), Input: input, Cluster: `[]`, Observed: `{"queue":{"apiVersion":"sqs.aws.upbound.io/v1beta1","kind":"Queue","metadata":{"name":"prod-karpenter-interruption"},"status":"Ready"}}`},
	} {
		f.Add(s.XR, s.Input, s.Cluster, s.Observed, []byte(nil), false)
		f.Add(s.XR, s.Input, s.Cluster, s.Observed, []byte{0, 1, 0, 7, 2, 9, 0, 60}, true)
	}
	fn := &Function{log: logging.NewNopLogger()}
	f.Fuzz(func(t *testing.T, xr, in, cluster, observed string, ops []byte, loose bool) {
		fntest.FuzzRun(t, fn, fntest.Seed{XR: xr, Input: in, Cluster: cluster, Observed: observed}, ops, loose)
	})
}

// renamed returns the XR, as JSON, with another name.
func renamed(t testing.TB, xrJSON, name string) string {
	xr := fntest.JSONMap(t, xrJSON)
	metadata, _ := xr["metadata"].(map[string]any)
	if metadata == nil {
		t.Fatalf("XR without metadata: %s", xrJSON)
	}
	metadata["name"] = name
	return fntest.ToJSON(t, xr)
}

// longName is longer than any Kubernetes name.
const longName = "n123456789-123456789-123456789-123456789-123456789-123456789-123456789-123456789-123456789-123456789-123456789-123456789-123456789-123456789-123456789-123456789-123456789-123456789-123456789-123456789-123456789-123456789-123456789-123456789-123456789-123456789"
