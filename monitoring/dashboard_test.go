package monitoring

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestTheDashboardOffersItsVariablesAndQueriesInEveryPanel: it parses, offers the cluster and organization
// variables, and every panel runs a query.
func TestTheDashboardOffersItsVariablesAndQueriesInEveryPanel(t *testing.T) {
	var d dashboard
	if err := json.Unmarshal(Dashboard, &d); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	var vars []string
	for _, v := range d.Templating.List {
		vars = append(vars, v.Name)
	}
	for _, want := range []string{"datasource", "cluster", "organization"} {
		if !slices.Contains(vars, want) {
			t.Errorf("no variable %s: %v", want, vars)
		}
	}
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			if p.Type != "row" && len(p.Targets) == 0 {
				t.Errorf("panel %q runs no query", p.Title)
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
}

// TestTheDashboardReadsOnlyWhatKisoRecordsOrTheSuiteChecks: every series a query reads is a recording rule kiso
// composes, one the end-to-end suite finds exported (Exported), or Prometheus's ALERTS; every series Exported
// lists is one kiso's functions or Karpenter export.
func TestTheDashboardReadsOnlyWhatKisoRecordsOrTheSuiteChecks(t *testing.T) {
	queries, err := DashboardQueries()
	if err != nil {
		t.Fatal(err)
	}
	exported, err := Exported()
	if err != nil {
		t.Fatal(err)
	}
	recorded := Recorded()
	for _, q := range queries {
		names, err := MetricNames(q)
		if err != nil {
			t.Errorf("query %q: %v", q, err)
			continue
		}
		if len(names) == 0 {
			t.Errorf("query %q reads no series", q)
		}
		for _, n := range names {
			if !slices.Contains(recorded, n) && !slices.Contains(exported, n) && !slices.Contains(builtin, n) {
				t.Errorf("query %q reads %s, which kiso neither records nor checks is exported", q, n)
			}
		}
	}

	var families []string
	for _, f := range append(slices.Clone(IsolationFamilies), ClusterFamilies...) {
		families = append(families, f.Name)
	}
	for _, n := range exported {
		switch {
		case strings.HasPrefix(n, "kiso_"):
			if !slices.Contains(families, n) {
				t.Errorf("%s is read but no kiso function exports it (IsolationFamilies, ClusterFamilies)", n)
			}
		case !strings.HasPrefix(n, "karpenter_") && !strings.HasPrefix(n, "operator_"):
			t.Errorf("%s is read but neither kiso's functions nor Karpenter export it", n)
		}
	}
}

// TestExportedListsWhatTheRulesReadFromServers: Karpenter's series and kiso's, not the recording rules' own.
func TestExportedListsWhatTheRulesReadFromServers(t *testing.T) {
	got, err := Exported()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"karpenter_nodepools_usage", "kiso_pool_info", "kiso_organization_ready", "operator_nodeclaim_status_condition_count"} {
		if !slices.Contains(got, want) {
			t.Errorf("Exported() lacks %s: %v", want, got)
		}
	}
	for _, n := range got {
		if strings.HasPrefix(n, "kiso:") || n == "ALERTS" {
			t.Errorf("Exported() lists %s, which Prometheus writes", n)
		}
	}
}

func TestLabelValuesReadsItsSelector(t *testing.T) {
	cases := map[string]struct {
		query, want string
		reads       bool
	}{
		"WithASelector": {query: `label_values(kiso_organization_ready{cluster=~"$cluster"}, organization)`, want: `kiso_organization_ready{cluster=~"$cluster"}`, reads: true},
		"LabelOnly":     {query: `label_values(cluster)`},
		"PromQL":        {query: `up`, want: `up`, reads: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, reads := labelValuesSelector(tc.query)
			if got != tc.want || reads != tc.reads {
				t.Errorf("labelValuesSelector(%q) = %q, %t; want %q, %t", tc.query, got, reads, tc.want, tc.reads)
			}
		})
	}
}
