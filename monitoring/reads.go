package monitoring

import (
	"fmt"
	"slices"
)

// builtin are series Prometheus itself writes, from the alerting rules it evaluates: kiso composes those rules.
var builtin = []string{"ALERTS"}

// Recorded are the series kiso's recording rules write.
func Recorded() []string {
	var out []string
	for _, g := range Groups() {
		for _, r := range g.Rules {
			if r.Record != "" {
				out = append(out, r.Record)
			}
		}
	}
	slices.Sort(out)
	return out
}

// Exported are the series kiso's rules and dashboard read that a server must export (kiso's functions,
// Karpenter): every name they read, less what the recording rules write and what Prometheus writes itself. The
// end-to-end suite checks each one is exported by the servers it runs.
func Exported() ([]string, error) {
	exprs, err := DashboardQueries()
	if err != nil {
		return nil, err
	}
	for _, g := range Groups() {
		for _, r := range g.Rules {
			exprs = append(exprs, r.Expr)
		}
	}
	recorded := Recorded()
	var out []string
	for _, e := range exprs {
		names, err := MetricNames(e)
		if err != nil {
			return nil, fmt.Errorf("cannot read what an expression reads: %w", err)
		}
		for _, n := range names {
			if !slices.Contains(recorded, n) && !slices.Contains(builtin, n) {
				out = append(out, n)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
