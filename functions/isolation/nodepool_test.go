package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kiso-dev/kiso/functions/internal/fntest"
	"github.com/kiso-dev/kiso/functions/internal/nodeidentity"
	"github.com/kiso-dev/kiso/functions/internal/placement"
)

// Every pool's clones share what kiso does not write with the reference
// objects: rendering a pool changes neither the references in the request nor
// a pool rendered before it.
func TestRenderingAPoolChangesNeitherTheReferencesNorAnotherPool(t *testing.T) {
	keys := placement.NewKeys(DefaultKeyDomain)
	spec := decodeForTest(t, strings.Replace(stackSpec, `"pool":{"limits":{"cpu":"64"}}`,
		`"pool":{"limits":{"cpu":"64"},"expireAfter":"24h","weight":10,"disruption":{"consolidateAfter":"5m","budgets":[{"nodes":"10%"}]}}`, 1))
	pools := planPools(spec, keys)
	nodePool := &unstructured.Unstructured{Object: fntest.JSONMap(t, refNodePool)}
	nodeClass := &unstructured.Unstructured{Object: fntest.JSONMap(t, refNodeClass)}
	gvk := nodeClassGVK(spec.NodeClassRef)
	render := func(p pool) []any {
		np, err := renderNodePool(nodePool, p, gvk, keys)
		if err != nil {
			t.Fatal(err)
		}
		nc, err := renderNodeClass(nodeClass, p, keys, nodeAccount{Inherited: map[string]string{"env": "prod"}, Identity: &nodeidentity.Identity{ProfileName: "acme-nodes"}})
		if err != nil {
			t.Fatal(err)
		}
		return []any{np.Object, nc.Object}
	}

	web := render(pools[0])
	before := fntest.ToJSON(t, web)
	render(pools[1])
	if diff := cmp.Diff(fntest.JSONMap(t, refNodePool), nodePool.Object); diff != "" {
		t.Errorf("rendering changed the reference NodePool: -want, +got:\n%s", diff)
	}
	if diff := cmp.Diff(fntest.JSONMap(t, refNodeClass), nodeClass.Object); diff != "" {
		t.Errorf("rendering changed the reference NodeClass: -want, +got:\n%s", diff)
	}
	if diff := cmp.Diff(before, fntest.ToJSON(t, web)); diff != "" {
		t.Errorf("rendering pool %s changed pool %s: -before, +after:\n%s", pools[1].Name, pools[0].Name, diff)
	}
}
