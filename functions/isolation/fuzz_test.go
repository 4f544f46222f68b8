package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/crossplane/function-sdk-go/logging"

	"github.com/kiso-dev/kiso/functions/internal/fntest"
)

// FuzzRunFunction drives RunFunction with every example, mutated: the XR
// (spec included), the function input, the cluster's objects (reference
// NodeClass and NodePool, XKarpenterCluster, namespaces, other organizations,
// objects holding kiso's names) and the observed composed resources. No
// input may panic; fntest.FuzzRun lists the invariants checked on every
// response.
//
//	go test -run '^$' -fuzz FuzzRunFunction -fuzztime 5m ./functions/isolation
func FuzzRunFunction(f *testing.F) {
	inputs := []string{input, `{"apiVersion":"isolation.fn.kiso.dev/v1alpha1","kind":"Input","keyDomain":"formance.com"}`}
	for _, s := range fntest.ExampleSeeds(f, "../../examples/isolation", input) {
		for _, in := range inputs {
			f.Add(s.XR, in, s.Cluster, s.Observed, []byte(nil), false)
		}
	}
	for _, s := range handSeeds(f) {
		f.Add(s.XR, s.Input, s.Cluster, s.Observed, []byte(nil), false)
		f.Add(s.XR, s.Input, s.Cluster, s.Observed, []byte{0, 1, 0, 7, 2, 9, 0, 60}, true)
	}
	fn := &Function{log: logging.NewNopLogger()}
	f.Fuzz(func(t *testing.T, xr, in, cluster, observed string, ops []byte, loose bool) {
		fntest.FuzzRun(t, fn, fntest.Seed{XR: xr, Input: in, Cluster: cluster, Observed: observed}, ops, loose)
	})
}

// asObjects is observed composed resources, each given as JSON, as one JSON object: a seed's Observed.
func asObjects(t testing.TB, observed map[string]string) string {
	objects := make(map[string]json.RawMessage, len(observed))
	for name, o := range observed {
		objects[name] = json.RawMessage(o)
	}
	return fntest.ToJSON(t, objects)
}

// handSeeds are shapes no example has: malformed references and clusters,
// an XR without spec, unicode and very long strings.
func handSeeds(t testing.TB) []fntest.Seed {
	objects := func(objs ...string) string { return "[" + strings.Join(objs, ",") + "]" }
	withoutTags := strings.Replace(refNodeClass, `"tags":{"team":"platform"},`, "", 1)
	taggedCluster := strings.Replace(clusterXR, `"tags":{`, `"tags":{"team":"sre",`, 1)
	clusterRef := strings.Replace(orgSpec, `"nodeClassRef"`, `"clusterRef":{"name":"prod"},"nodeClassRef"`, 1)
	seeds := []fntest.Seed{
		// A tagged cluster and a reference NodeClass without spec.tags.
		{XR: xr(clusterRef), Cluster: objects(withoutTags, refNodePool, taggedCluster)},
		{XR: xr(dedicatedSpec), Cluster: objects(withoutTags, refNodePool, taggedCluster)},
		{XR: `{"apiVersion":"kiso.dev/v1alpha1","kind":"XKarpenterIsolation","metadata":{"name":"acme-x1","uid":"xr-uid"}}`, Cluster: objects(refNodeClass, refNodePool)},
		{XR: xr(`null`), Cluster: objects(refNodeClass, refNodePool)},
		{XR: xr(orgSpec), Cluster: objects(`{"apiVersion":"karpenter.k8s.aws/v1","kind":"EC2NodeClass","metadata":{"name":"default"}}`, `{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"default"},"spec":[]}`)},
		{XR: xr(stackSpec), Cluster: objects(refNodeClass, strings.Replace(refNodePool, `"taints":[{"key":"arch","value":"arm64","effect":"NoSchedule"}]`, `"taints":"arch=arm64:NoSchedule"`, 1))},
		{XR: xr(stackSpec), Cluster: objects(strings.Replace(refNodeClass, `"tags":{"team":"platform"}`, `"tags":{"team":7,"x":null}`, 1), strings.Replace(refNodePool, `"labels":{"tier":"general"}`, `"labels":{"tier":1}`, 1))},
		{XR: xr(orgSpec), Cluster: objects(strings.Replace(clusterXR, `"name":"prod"`, `"name":"default"`, 1), refNodePool)},
		{XR: xr(clusterRef), Cluster: objects(refNodeClass, refNodePool, `{"apiVersion":"kiso.dev/v1alpha1","kind":"XKarpenterCluster","metadata":{"name":"prod"},"spec":"x","status":[1]}`)},
		{XR: xr(strings.Replace(orgSpec, `"acme"`, `"ünïcødé-`+strings.Repeat("x", 300)+`"`, 1)), Cluster: objects(refNodeClass, refNodePool)},
		{XR: xr(orgSpec), Cluster: objects(refNodeClass, refNodePool, namespace("acme-web")), Observed: fntest.ToJSON(t, map[string]any{"nodepool-kiso-acme": map[string]any{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": "x", "spec": []any{}}})},
	}
	// A switch to stack isolation whose new pools are Ready: the organization's pool retires, its NodeClass,
	// which a Usage names, last.
	retiring := map[string]any{}
	fn := &Function{log: logging.NewNopLogger()}
	for _, spec := range []string{orgSpec, stackSwitch} {
		for name, o := range fntest.Desired(t, fntest.Run(t, fn, fntest.Request(input, xr(spec), nil), cluster{refNodeClass, refNodePool})) {
			o["status"] = readyStatus()
			retiring[name] = o
		}
	}
	seeds = append(seeds, fntest.Seed{XR: xr(stackSwitch), Cluster: objects(refNodeClass, refNodePool), Observed: fntest.ToJSON(t, retiring)})
	// Classes bounded by one limit, beside a NodePool whose counts are not quantities.
	seeds = append(seeds, fntest.Seed{XR: xr(classLimitSpec), Cluster: objects(refNodeClass, refNodePool, gpuNodeClass, gpuNodePool), Observed: fntest.ToJSON(t, map[string]any{
		"nodepool-kiso.acme.gpu": map[string]any{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": map[string]any{"name": "kiso.acme.gpu"},
			"spec": map[string]any{"limits": "x"}, "status": map[string]any{"nodes": "x", "resources": map[string]any{"cpu": "lots", "nodes": -3}}},
	})})
	// Every object name as long as Kubernetes allows, the organization's XR's and its cluster's, with what the
	// organization composes once it holds its name observed Ready.
	longName := strings.Repeat("n", 253)
	longXR := strings.Replace(xr(strings.Replace(orgSpec, `"nodeClassRef"`, `"clusterRef":{"name":"`+longName+`"},"nodeClassRef"`, 1)), `"name":"acme-x1"`, `"name":"`+longName+`"`, 1)
	longCluster := cluster{refNodeClass, refNodePool, strings.Replace(clusterXR, `"name":"prod"`, `"name":"`+longName+`"`, 1)}
	seeds = append(seeds, fntest.Seed{XR: longXR, Cluster: objects(longCluster...), Observed: asObjects(t, composedOf(t, longXR, longCluster, true))})
	for i := range seeds {
		seeds[i].Input = input
		if seeds[i].Observed == "" {
			seeds[i].Observed = "{}"
		}
	}
	return seeds
}
