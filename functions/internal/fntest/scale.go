package fntest

import (
	"embed"
	"encoding/json"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// scaleObjects are objects as an API server returns them on a busy
// cluster, managed fields included (Crossplane passes required resources on
// whole): a Deployment's running pod with a log shipper, and a NodeClaim
// Karpenter launched on AWS. Size tests copy them by the thousand.
//
//go:embed testdata/scale/*.json
var scaleObjects embed.FS

// ScaleObject returns a copy of testdata/scale/<name>.json.
func ScaleObject(t testing.TB, name string) *unstructured.Unstructured {
	t.Helper()
	b, err := scaleObjects.ReadFile("testdata/scale/" + name + ".json")
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal(b, &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// Copies returns n copies of a scale object as JSON, the i-th named
// <name>-<i> and changed by edit (nil for none).
func Copies(t testing.TB, object string, n int, edit func(i int, u *unstructured.Unstructured)) []string {
	t.Helper()
	proto := ScaleObject(t, object)
	out := make([]string, 0, n)
	for i := range n {
		u := proto.DeepCopy()
		u.SetName(fmt.Sprintf("%s-%d", proto.GetName(), i))
		if edit != nil {
			edit(i, u)
		}
		b, err := json.Marshal(u.Object)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return out
}
