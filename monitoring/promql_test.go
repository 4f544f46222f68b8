package monitoring

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMetricNames(t *testing.T) {
	cases := map[string]struct {
		expr string
		want []string
		err  bool
	}{
		"Selector": {expr: `up`, want: []string{"up"}},
		"MatchersHoldNoNames": {
			expr: `operator_nodepool_status_condition_count{type="Ready",status!="True", name=~"kiso-.*"}`,
			want: []string{"operator_nodepool_status_condition_count"},
		},
		"AggregationBeforeAndAfterItsGrouping": {
			expr: `sum by (nodepool, resource_type) (a) / max without (instance) (b) + count(c) by (x)`,
			want: []string{"a", "b", "c"},
		},
		"JoinsKeepNoLabelNames": {
			expr: `sum by (cluster, organization) (karpenter_nodepools_usage * on (nodepool) group_left (cluster, organization) max by (cluster, organization, nodepool) (kiso_pool_info))`,
			want: []string{"karpenter_nodepools_usage", "kiso_pool_info"},
		},
		"FunctionsRangesAndDurations": {
			expr: `sum(rate(karpenter_cloudprovider_errors_total{error!~"A|B"}[10m] offset 5m)) > 0.9 and on() vector(1) or absent(x) unless histogram_quantile(0.99, y_bucket[1h:5m])`,
			want: []string{"karpenter_cloudprovider_errors_total", "x", "y_bucket"},
		},
		"RecordingRuleNames":   {expr: `kiso:organization_usage:sum{resource_type="cpu"} / kiso:organization_limit:sum`, want: []string{"kiso:organization_limit:sum", "kiso:organization_usage:sum"}},
		"GrafanaVariables":     {expr: `sum(rate(a{cluster=~"$cluster"}[$__rate_interval])) * ${factor} + $scale`, want: []string{"a"}},
		"StringsWithBrackets":  {expr: `label_replace(a, "x", "$1", "y", "(.*)}")`, want: []string{"a"}},
		"ComparisonWithBool":   {expr: `a == bool 0`, want: []string{"a"}},
		"Unbalanced":           {expr: `sum(a{x="1"]`, err: true},
		"UnterminatedString":   {expr: `a{x="1}`, err: true},
		"TopkWithAParameter":   {expr: `topk(5, kiso:organization_nodes:count)`, want: []string{"kiso:organization_nodes:count"}},
		"NumbersAreNotSeries":  {expr: `1e3 * 0x1f + .5 - 2h`, want: nil},
		"AlertsIsPrometheus's": {expr: `ALERTS{alertname=~"Kiso.*"}`, want: []string{"ALERTS"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := MetricNames(tc.expr)
			if (err != nil) != tc.err {
				t.Fatalf("MetricNames(%q) error %v, want error %t", tc.expr, err, tc.err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("MetricNames(%q): -want, +got:\n%s", tc.expr, diff)
			}
		})
	}
}
