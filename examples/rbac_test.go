// Package examples_test checks what the examples promise beyond their renders (make examples checks those).
package examples_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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

// rbacExamples are the files under examples/rbac and the test that checks each.
var rbacExamples = map[string]string{
	"crossplane-karpenter.yaml": "TestCrossplaneMayComposeWhatTheExamplesCompose",
	"namespace-labeller.yaml":   "TestNamespaceLabellerHoldsWhatThePlatformsPolicyChecks",
	"claim-writer.yaml":         "TestClaimWriterWritesClaimsAndNothingElse",
}

// TestEveryRBACExampleIsChecked: a file added under examples/rbac gets a test of what it grants.
func TestEveryRBACExampleIsChecked(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(root, "examples", "rbac", "*"))
	for _, f := range files {
		if _, ok := rbacExamples[filepath.Base(f)]; !ok {
			t.Errorf("%s: no test checks what it grants (rbacExamples)", f)
		}
	}
	if len(files) != len(rbacExamples) {
		t.Errorf("examples/rbac holds %d files, rbacExamples lists %d", len(files), len(rbacExamples))
	}
}

// authorizerCheck is a CEL authorizer check of a policy: group, resource, verb.
var authorizerCheck = regexp.MustCompile(`authorizer\.group\("([^"]*)"\)\.resource\("([^"]*)"\)(?:\.name\([^)]*\))?\.check\("([^"]*)"\)`)

// labellerNamespaceVerbs are what the platform's automation does with namespaces: create one, read it, label it.
var labellerNamespaceVerbs = []string{"get", "list", "create", "patch"}

// TestNamespaceLabellerHoldsWhatThePlatformsPolicyChecks: examples/rbac/namespace-labeller.yaml grants what
// kiso-namespace-identity asks the authorizer (read from the policy an example renders) and the namespace verbs
// that create and label a namespace, binds it to a group, and grants nothing else.
func TestNamespaceLabellerHoldsWhatThePlatformsPolicyChecks(t *testing.T) {
	wanted := [][]string{}
	for _, verb := range labellerNamespaceVerbs {
		wanted = append(wanted, []string{"", "namespaces", verb})
	}
	wanted = append(wanted, namespaceIdentityChecks(t)...)

	rules, bound := readLabellerExample(t)
	for _, w := range wanted {
		if !slices.ContainsFunc(rules, func(r rule) bool { return r.grants(w[0], w[1], w[2]) }) {
			t.Errorf("examples/rbac/namespace-labeller.yaml does not grant %s on %s in group %q", w[2], w[1], w[0])
		}
	}
	for _, r := range rules {
		for _, group := range r.APIGroups {
			for _, resource := range r.Resources {
				for _, verb := range r.Verbs {
					if !slices.ContainsFunc(wanted, func(w []string) bool { return slices.Equal(w, []string{group, resource, verb}) }) {
						t.Errorf("examples/rbac/namespace-labeller.yaml grants %s on %s in group %q, which labelling namespaces does not need", verb, resource, group)
					}
				}
			}
		}
	}
	if !bound {
		t.Error("examples/rbac/namespace-labeller.yaml binds ClusterRole kiso:namespace-labeller to no group")
	}
}

// namespaceIdentityChecks are the authorizer checks (group, resource, verb) of the policy kiso-namespace-identity
// as examples/cluster/pod-identity renders it.
func namespaceIdentityChecks(t *testing.T) [][]string {
	t.Helper()
	var checks [][]string
	for _, obj := range readObjects(t, filepath.Join(root, "examples", "cluster", "pod-identity", "expected.yaml")) {
		if obj["kind"] != "ValidatingAdmissionPolicy" || metadataName(obj) != "kiso-namespace-identity" {
			continue
		}
		spec, _ := obj["spec"].(map[string]any)
		validations, _ := spec["validations"].([]any)
		for _, v := range validations {
			expression, _ := v.(map[string]any)["expression"].(string)
			for _, m := range authorizerCheck.FindAllStringSubmatch(expression, -1) {
				checks = append(checks, m[1:])
			}
		}
	}
	if len(checks) == 0 {
		t.Fatal("examples/cluster/pod-identity renders no kiso-namespace-identity policy that asks the authorizer")
	}
	return checks
}

// readLabellerExample returns the rules of examples/rbac/namespace-labeller.yaml's ClusterRole, and whether its
// binding gives that ClusterRole to one group.
func readLabellerExample(t *testing.T) (rules []rule, boundToAGroup bool) {
	t.Helper()
	for _, obj := range readObjects(t, filepath.Join(root, "examples", "rbac", "namespace-labeller.yaml")) {
		switch obj["kind"] {
		case "ClusterRole":
			raw, _ := obj["rules"].([]any)
			for _, r := range raw {
				m, _ := r.(map[string]any)
				rules = append(rules, rule{APIGroups: stringList(m["apiGroups"]), Resources: stringList(m["resources"]), Verbs: stringList(m["verbs"])})
			}
		case "ClusterRoleBinding":
			ref, _ := obj["roleRef"].(map[string]any)
			subjects, _ := obj["subjects"].([]any)
			boundToAGroup = ref["name"] == "kiso:namespace-labeller" && len(subjects) == 1 && subjects[0].(map[string]any)["kind"] == "Group"
		}
	}
	return rules, boundToAGroup
}

// TestClaimWriterWritesClaimsAndNothingElse: examples/rbac/claim-writer.yaml grants writing organizations' claims
// (the namespaced KarpenterIsolation) and nothing else: not the cluster-scoped XRs, which a RoleBinding could not
// confine to a namespace, nor any other kind.
func TestClaimWriterWritesClaimsAndNothingElse(t *testing.T) {
	objs := readObjects(t, filepath.Join(root, "examples", "rbac", "claim-writer.yaml"))
	if len(objs) != 1 || kindOf(objs[0]) != "rbac.authorization.k8s.io/ClusterRole" {
		t.Fatalf("examples/rbac/claim-writer.yaml holds %d objects, want one ClusterRole", len(objs))
	}
	rules, _ := objs[0]["rules"].([]any)
	if len(rules) != 1 {
		t.Fatalf("kiso:claim-writer has %d rules, want one", len(rules))
	}
	rule := rules[0].(map[string]any)
	want := map[string]any{"apiGroups": []any{"kiso.dev"}, "resources": []any{"karpenterisolations"},
		"verbs": []any{"get", "list", "watch", "create", "update", "patch", "delete"}}
	if diff := cmp.Diff(want, rule); diff != "" {
		t.Errorf("kiso:claim-writer grants: -want, +got:\n%s", diff)
	}
}
