package monitoring

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kiso-dev/kiso/internal/unittool"
)

// promtoolEnv names the promtool the rule tests run; `make unit` sets it (hack/build-tool.sh promtool).
const promtoolEnv = "KISO_PROMTOOL"

// rulesTest is the promtool unit test file of kiso's rule groups.
const rulesTest = "testdata/rules_test.yaml"

// promtoolT returns the promtool to run.
func promtoolT(t *testing.T) string {
	t.Helper()
	return unittool.PathT(t, promtoolEnv, "promtool")
}

// writeRulesT writes the rule groups as a Prometheus rule file beside a copy of the unit test file.
func writeRulesT(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	b, err := yaml.Marshal(map[string]any{"groups": Groups()})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kiso-rules.yaml"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	tests, err := os.ReadFile(rulesTest)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rules_test.yaml"), tests, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestTheRulesPassPromtool: promtool accepts every rule, and every unit test of testdata/rules_test.yaml passes.
func TestTheRulesPassPromtool(t *testing.T) {
	promtool := promtoolT(t)
	dir := writeRulesT(t)
	for _, args := range [][]string{{"check", "rules", "kiso-rules.yaml"}, {"test", "rules", "rules_test.yaml"}} {
		cmd := exec.CommandContext(t.Context(), promtool, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// unitTests is what TestEveryRuleIsTested reads of the promtool test file.
type unitTests struct {
	Tests []struct {
		PromQL []struct {
			Expr       string `json:"expr"`
			ExpSamples []any  `json:"exp_samples"`
		} `json:"promql_expr_test"`
		Alerts []struct {
			Alert     string `json:"alertname"`
			ExpAlerts []any  `json:"exp_alerts"`
		} `json:"alert_rule_test"`
	} `json:"tests"`
}

// TestEveryRuleIsTested: each recording rule is queried and yields a value, and each alert both fires and stays
// silent somewhere in testdata/rules_test.yaml.
func TestEveryRuleIsTested(t *testing.T) {
	b, err := os.ReadFile(rulesTest)
	if err != nil {
		t.Fatal(err)
	}
	var u unitTests
	if err := yaml.Unmarshal(b, &u); err != nil {
		t.Fatal(err)
	}
	valued := map[string]bool{}
	fires, silent := map[string]bool{}, map[string]bool{}
	for _, tc := range u.Tests {
		for _, q := range tc.PromQL {
			valued[q.Expr] = valued[q.Expr] || len(q.ExpSamples) > 0
		}
		for _, a := range tc.Alerts {
			if len(a.ExpAlerts) > 0 {
				fires[a.Alert] = true
			} else {
				silent[a.Alert] = true
			}
		}
	}
	for _, g := range Groups() {
		for _, r := range g.Rules {
			switch {
			case r.Record != "" && !valued[r.Record]:
				t.Errorf("recording rule %s: no promql_expr_test queries it for a value", r.Record)
			case r.Alert != "" && (!fires[r.Alert] || !silent[r.Alert]):
				t.Errorf("alert %s: tested firing %t, tested silent %t; want both", r.Alert, fires[r.Alert], silent[r.Alert])
			}
		}
	}
}

// TestEveryAlertSaysWhatAndWhereToLook: a severity, a summary, a description and a runbook at a heading of
// docs/runbooks.md named after the alert.
func TestEveryAlertSaysWhatAndWhereToLook(t *testing.T) {
	runbooks, err := os.ReadFile("../docs/runbooks.md")
	if err != nil {
		t.Fatal(err)
	}
	var headings []string
	for _, line := range strings.Split(string(runbooks), "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			headings = append(headings, strings.ToLower(strings.TrimSpace(h)))
		}
	}
	for _, g := range Groups() {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			for _, a := range []string{"summary", "description"} {
				if r.Annotations[a] == "" {
					t.Errorf("alert %s has no %s", r.Alert, a)
				}
			}
			if r.Labels["severity"] == "" {
				t.Errorf("alert %s has no severity", r.Alert)
			}
			anchor, ok := strings.CutPrefix(r.Annotations["runbook_url"], RunbookBase)
			if !ok || !slices.Contains(headings, anchor) {
				t.Errorf("alert %s: runbook_url %q names no heading of docs/runbooks.md", r.Alert, r.Annotations["runbook_url"])
			}
		}
	}
}

// TestTheDashboardQueriesAreValidPromQL: promtool checks each dashboard query, as a recording rule, with its
// Grafana variables given values.
func TestTheDashboardQueriesAreValidPromQL(t *testing.T) {
	promtool := promtoolT(t)
	queries, err := DashboardQueries()
	if err != nil {
		t.Fatal(err)
	}
	variables := strings.NewReplacer("$cluster", ".*", "$organization", ".*", "$__rate_interval", "5m")
	rules := make([]Rule, len(queries))
	for i, q := range queries {
		rules[i] = Rule{Record: fmt.Sprintf("dashboard:query_%d", i), Expr: variables.Replace(q)}
	}
	b, err := yaml.Marshal(map[string]any{"groups": []Group{{Name: "dashboard", Rules: rules}}})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "dashboard.yaml")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.CommandContext(t.Context(), promtool, "check", "rules", file).CombinedOutput(); err != nil {
		t.Errorf("promtool check rules on the dashboard's queries: %v\n%s", err, out)
	}
}
