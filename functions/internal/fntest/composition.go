package fntest

import (
	"encoding/json"
	"os"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"
	"sigs.k8s.io/yaml"

	"github.com/crossplane/function-sdk-go/resource"
)

// CompositionInputs returns the input of every pipeline step of a Composition file that calls function,
// by step name, so a test can read what the repository's Compositions give a function as it does.
func CompositionInputs(t testing.TB, path, function string) map[string]*structpb.Struct {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Spec struct {
			Pipeline []struct {
				Step        string `json:"step"`
				FunctionRef struct {
					Name string `json:"name"`
				} `json:"functionRef"`
				Input json.RawMessage `json:"input"`
			} `json:"pipeline"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(raw, &c); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	out := map[string]*structpb.Struct{}
	for _, s := range c.Spec.Pipeline {
		if s.FunctionRef.Name == function {
			out[s.Step] = resource.MustStructJSON(string(s.Input))
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s: no pipeline step calls %s", path, function)
	}
	return out
}
