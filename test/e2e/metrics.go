package e2e

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// A counterSet is one reading of a counter, each of its series keyed by the labels a reader cares about.
type counterSet map[string]float64

// metricsURLs maps a server to its metrics URL. The workload cluster's servers are added when the first scenario
// that needs it starts it, while other scenarios may be reading.
type metricsURLs struct {
	mu   sync.Mutex
	urls map[string]string
}

func (m *metricsURLs) set(server, url string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.urls == nil {
		m.urls = map[string]string{}
	}
	m.urls[server] = url
}

func (m *metricsURLs) get(server string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	url, ok := m.urls[server]
	return url, ok
}

// scrapeMetrics reads the Prometheus metrics of a server: the apiserver's through kubectl (they need the
// administrator's credentials), the others' from their metrics URL.
func (e *Environment) scrapeMetrics(ctx context.Context, server string) (map[string]*dto.MetricFamily, error) {
	var text []byte
	if server == "kube-apiserver" {
		out, err := e.Kubectl.Run(ctx, nil, "get", "--raw", "/metrics")
		if err != nil {
			return nil, err
		}
		text = out
	} else {
		url, ok := e.Metrics.get(server)
		if !ok {
			return nil, fmt.Errorf("no metrics URL for %s", server)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return nil, err
		}
		rsp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, fmt.Errorf("cannot read the metrics of %s: %w", server, err)
		}
		defer rsp.Body.Close()
		if text, err = io.ReadAll(rsp.Body); err != nil {
			return nil, fmt.Errorf("cannot read the metrics of %s: %w", server, err)
		}
	}
	return parseMetrics(server, text)
}

// parseMetrics parses a server's metrics in Prometheus' text format.
func parseMetrics(server string, text []byte) (map[string]*dto.MetricFamily, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("cannot parse the metrics of %s: %w", server, err)
	}
	return families, nil
}

// counters sums a metric's series (counter or gauge) by the values of the named labels, joined by " ".
func counters(families map[string]*dto.MetricFamily, name string, by ...string) counterSet {
	out := counterSet{}
	f, ok := families[name]
	if !ok {
		return out
	}
	for _, m := range f.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		var key []string
		for _, b := range by {
			if v := labels[b]; v != "" {
				key = append(key, v)
			}
		}
		v := m.GetCounter().GetValue() + m.GetGauge().GetValue()
		out[strings.Join(key, " ")] += v
	}
	return out
}

// since is what each series grew by from an earlier reading.
func (c counterSet) since(earlier counterSet) counterSet {
	out := counterSet{}
	for k, v := range c {
		if d := v - earlier[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}

// total sums every series.
func (c counterSet) total() float64 {
	sum := 0.0
	for _, v := range c {
		sum += v
	}
	return sum
}

// top prints the n largest series at the rate given.
func (c counterSet) top(n int, at rate) string {
	return c.largest(n, func(v float64) string { return fmt.Sprintf(at.format, v*at.scale) })
}

func (c counterSet) largest(n int, format func(float64) string) string {
	keys := slices.SortedFunc(maps.Keys(c), func(a, b string) int {
		if d := cmp.Compare(c[b], c[a]); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	keys = keys[:min(n, len(keys))]
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+" "+format(c[k]))
	}
	return strings.Join(parts, ", ")
}

// labelsMatch reports whether a series carries every wanted label with the wanted value.
func labelsMatch(m *dto.Metric, want map[string]string) bool {
	found := 0
	for _, l := range m.GetLabel() {
		if v, ok := want[l.GetName()]; ok {
			if l.GetValue() != v {
				return false
			}
			found++
		}
	}
	return found == len(want)
}

// rate is how a reading's growth is printed: scaled (per minute, or per new organization) and named.
type rate struct {
	scale  float64
	unit   string // "/min", "/org"
	format string // of one scaled count
}

func perMinute(seconds float64) rate { return rate{scale: 60 / seconds, unit: "/min", format: "%.0f"} }

func perOrganization(added int) rate {
	return rate{scale: 1 / float64(added), unit: "/org", format: "%.1f"}
}
