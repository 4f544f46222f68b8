// Package examples_test checks what the examples promise beyond their renders (make examples checks those).
package examples_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kiso-dev/kiso/internal/layout"
)

// root is the repository, the parent of this package's directory.
const root = ".."

var (
	// composeVerbs are what Crossplane does with a composed resource: it applies, watches and deletes it.
	composeVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete"}
	// readVerbs are what a function's required resources need: Crossplane fetches them for the function.
	readVerbs = []string{"get", "list", "watch"}
)

// A rule is one rule of examples/rbac/crossplane-karpenter.yaml.
type rule struct {
	APIGroups, Resources, Verbs []string
}

func (r rule) grants(group, resource, verb string) bool {
	match := func(list []string, v string) bool { return slices.Contains(list, v) || slices.Contains(list, "*") }
	return match(r.APIGroups, group) && match(r.Resources, resource) && match(r.Verbs, verb)
}

// TestCrossplaneMayComposeWhatTheExamplesCompose: every kind a function composes in an example, and every kind it
// reads as a required resource, is granted to Crossplane, by the RBAC example or by Crossplane itself. Without
// the grant, Crossplane's apply fails in a real cluster while every render passes.
func TestCrossplaneMayComposeWhatTheExamplesCompose(t *testing.T) {
	rules := readRBACExample(t)
	byCrossplane := grantedByCrossplane(t)

	// Each kind is reported once, with the first example that needs it.
	reported := map[string]bool{}
	check := func(file string, objs []map[string]any, composed bool, verbs []string) {
		for _, obj := range objs {
			apiVersion, _ := obj["apiVersion"].(string)
			kind, _ := obj["kind"].(string)
			if composed && !isComposed(obj) {
				continue
			}
			gv, err := schema.ParseGroupVersion(apiVersion)
			if err != nil {
				t.Errorf("%s: %s %s: %v", file, apiVersion, kind, err)
				continue
			}
			plural, _ := meta.UnsafeGuessKindToResource(gv.WithKind(kind))
			group, resource := plural.Group, plural.Resource
			if byCrossplane(group, resource) {
				continue
			}
			var missing []string
			for _, verb := range verbs {
				if !slices.ContainsFunc(rules, func(r rule) bool { return r.grants(group, resource, verb) }) {
					missing = append(missing, verb)
				}
			}
			if len(missing) > 0 && !reported[plural.String()] {
				reported[plural.String()] = true
				t.Errorf("examples/rbac/crossplane-karpenter.yaml does not grant Crossplane %v on %s (%s, in %s)", missing, plural.GroupResource(), kind, file)
			}
		}
	}
	goldens, _ := filepath.Glob(filepath.Join(root, "examples", "*", "*", "expected.yaml"))
	required, _ := filepath.Glob(filepath.Join(root, "examples", "*", "*", "required.yaml"))
	if len(goldens) == 0 {
		t.Fatal("no examples/*/*/expected.yaml")
	}
	for _, f := range goldens {
		check(f, readObjects(t, f), true, composeVerbs)
	}
	for _, f := range required {
		check(f, readObjects(t, f), false, readVerbs)
	}
}

// isComposed says whether a rendered object is one the function composed (not the XR, not a Result).
func isComposed(obj map[string]any) bool {
	m, _ := obj["metadata"].(map[string]any)
	annotations, _ := m["annotations"].(map[string]any)
	_, ok := annotations["crossplane.io/composition-resource-name"]
	return ok
}

// grantedByCrossplane returns what Crossplane grants itself, with no RBAC example: its own APIs (its chart's
// ClusterRole), the composite resources of kiso's XRDs, and the managed resources of the providers kiso's
// Configuration depends on (its RBAC manager grants both). The managed resources kiso composes are those whose
// CRDs hack/crds.env lists for provider-aws.
func grantedByCrossplane(t *testing.T) func(group, resource string) bool {
	t.Helper()
	xrds, err := layout.XRDs(root)
	if err != nil {
		t.Fatal(err)
	}
	env, err := os.ReadFile(filepath.Join(root, "hack", "crds.env"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^PROVIDER_AWS_CRDS="([^"]*)"`).FindSubmatch(env)
	if m == nil {
		t.Fatal("hack/crds.env sets no PROVIDER_AWS_CRDS")
	}
	managed := map[string]bool{}
	for _, path := range strings.Fields(string(m[1])) {
		// A CRD file is named <group>_<plural>.yaml.
		group, plural, _ := strings.Cut(strings.TrimSuffix(filepath.Base(path), ".yaml"), "_")
		managed[group+"/"+plural] = true
	}
	return func(group, resource string) bool {
		if strings.HasSuffix(group, ".crossplane.io") || managed[group+"/"+resource] {
			return true
		}
		// Crossplane's own ClusterRole (its chart's clusterrole.yaml) grants every verb on CRDs: it writes the
		// XRDs' and the packages' CRDs.
		if group == "apiextensions.k8s.io" && resource == "customresourcedefinitions" {
			return true
		}
		return slices.ContainsFunc(xrds, func(x layout.XRD) bool { return x.Group == group })
	}
}

func readRBACExample(t *testing.T) []rule {
	t.Helper()
	var rules []rule
	for _, obj := range readObjects(t, filepath.Join(root, "examples", "rbac", "crossplane-karpenter.yaml")) {
		m, _ := obj["metadata"].(map[string]any)
		if labels, _ := m["labels"].(map[string]any); labels["rbac.crossplane.io/aggregate-to-crossplane"] != "true" {
			t.Errorf("ClusterRole %v is not aggregated to Crossplane's (label rbac.crossplane.io/aggregate-to-crossplane: \"true\")", obj["metadata"])
		}
		raw, _ := obj["rules"].([]any)
		for _, r := range raw {
			m, _ := r.(map[string]any)
			rules = append(rules, rule{APIGroups: stringList(m["apiGroups"]), Resources: stringList(m["resources"]), Verbs: stringList(m["verbs"])})
		}
	}
	if len(rules) == 0 {
		t.Fatal("examples/rbac/crossplane-karpenter.yaml grants nothing")
	}
	return rules
}

func stringList(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, s := range list {
		if str, ok := s.(string); ok {
			out = append(out, str)
		}
	}
	return out
}

func readObjects(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := layout.Objects(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return objs
}
