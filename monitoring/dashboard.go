package monitoring

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
)

// Dashboard is the Grafana dashboard of kiso's organizations, to import as it is.
//
//go:embed dashboards/kiso-organizations.json
var Dashboard []byte

// dashboard is what DashboardQueries reads of the dashboard.
type dashboard struct {
	Panels     []panel `json:"panels"`
	Templating struct {
		List []variable `json:"list"`
	} `json:"templating"`
}

type panel struct {
	Title   string   `json:"title"`
	Type    string   `json:"type"`
	Targets []target `json:"targets"`
	// Panels are a collapsed row's.
	Panels []panel `json:"panels"`
}

type target struct {
	Expr string `json:"expr"`
}

type variable struct {
	Name  string          `json:"name"`
	Type  string          `json:"type"`
	Query json.RawMessage `json:"query"`
}

// DashboardQueries returns every PromQL the dashboard runs: each panel's targets and each query variable's.
func DashboardQueries() ([]string, error) {
	var d dashboard
	if err := json.Unmarshal(Dashboard, &d); err != nil {
		return nil, fmt.Errorf("cannot read the dashboard: %w", err)
	}
	var out []string
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			for _, t := range p.Targets {
				out = append(out, t.Expr)
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal(v.Query, &q); err != nil {
			return nil, fmt.Errorf("cannot read the query of variable %s: %w", v.Name, err)
		}
		if sel, ok := labelValuesSelector(q.Query); ok {
			out = append(out, sel)
		}
	}
	return out, nil
}

// labelValuesSelector is the series selector of Grafana's label_values(selector, label), which is no PromQL;
// label_values(label) reads no series.
func labelValuesSelector(query string) (string, bool) {
	inner, ok := strings.CutPrefix(strings.TrimSpace(query), "label_values(")
	if !ok {
		return query, true
	}
	inner = strings.TrimSuffix(inner, ")")
	i := strings.LastIndex(inner, ",")
	if i < 0 {
		return "", false
	}
	return inner[:i], true
}
