package server

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/response"

	"github.com/kiso-dev/kiso/monitoring"
)

// Crossplane exports nothing per XR, so each function exports what its calls tell about the XRs it is called
// for: a call's request holds the XR as Crossplane last wrote it, its response what the call made of it. The
// series of an XR are those of its latest call. Crossplane calls no function for an XR being deleted, so an
// XR's series expire once it has not been called for longer than its calls ask (the response's TTL) allows.

// expiryGrace is how long an XR's series outlive its last call beyond twice the TTL that call asked for: a
// settled XR is called every hour, so its series go 2h5m after the last call, and an alert on a deleted claim
// clears then.
const expiryGrace = 5 * time.Minute

// Metrics is what a function exports about each XR it is called for.
type Metrics struct {
	// Families are every family Report returns.
	Families []monitoring.Family
	// Report returns the series of the XR a call was for, as the call leaves them.
	Report func(Call) Samples
}

// Call is one RunFunction call, as the series of its XR are derived from it.
type Call struct {
	Req *fnv1.RunFunctionRequest
	Rsp *fnv1.RunFunctionResponse
	Now time.Time
}

// XRName is the XR's metadata.name.
func (c Call) XRName() string { return compositeName(c.Req) }

// Fatal reports whether the call stopped on a Fatal result: Crossplane applied nothing of it.
func (c Call) Fatal() bool {
	_, fatal := fatalMessage(c.Rsp)
	return fatal
}

// Spec is the XR's spec as Crossplane sent it.
func (c Call) Spec() *structpb.Struct {
	return c.Req.GetObserved().GetComposite().GetResource().GetFields()["spec"].GetStructValue()
}

// Status is the XR's status as the call leaves it: what it asked Crossplane to write, or, when it stopped on a
// Fatal result (Crossplane then writes nothing of it), what the XR held.
func (c Call) Status() *structpb.Struct {
	if !c.Fatal() {
		if st := c.Rsp.GetDesired().GetComposite().GetResource().GetFields()["status"].GetStructValue(); st != nil {
			return st
		}
	}
	return c.Req.GetObserved().GetComposite().GetResource().GetFields()["status"].GetStructValue()
}

// Ready reports whether the XR is Ready as Crossplane last wrote it and the call had no Fatal result.
func (c Call) Ready() bool {
	if c.Fatal() {
		return false
	}
	for _, cond := range observedConditions(c.Req) {
		if cond.Type == "Ready" {
			return cond.Status == "True"
		}
	}
	return false
}

// A Condition is one condition of an XR.
type Condition struct{ Type, Status, Reason string }

// Conditions are the XR's conditions: those Crossplane last wrote (Ready, Synced and what earlier calls set),
// overlaid by those this call set, in type order.
func (c Call) Conditions() []Condition {
	byType := map[string]Condition{}
	for _, cond := range observedConditions(c.Req) {
		byType[cond.Type] = cond
	}
	for _, cond := range c.Rsp.GetConditions() {
		if cond.GetTarget() == fnv1.Target_TARGET_COMPOSITE || cond.GetTarget() == fnv1.Target_TARGET_COMPOSITE_AND_CLAIM {
			byType[cond.GetType()] = Condition{Type: cond.GetType(), Status: conditionStatus(cond.GetStatus()), Reason: cond.GetReason()}
		}
	}
	out := make([]Condition, 0, len(byType))
	for _, t := range slices.Sorted(maps.Keys(byType)) {
		out = append(out, byType[t])
	}
	return out
}

func conditionStatus(s fnv1.Status) string {
	switch s {
	case fnv1.Status_STATUS_CONDITION_TRUE:
		return "True"
	case fnv1.Status_STATUS_CONDITION_FALSE:
		return "False"
	case fnv1.Status_STATUS_CONDITION_UNKNOWN, fnv1.Status_STATUS_CONDITION_UNSPECIFIED:
	}
	return "Unknown"
}

// observedConditions reads the observed XR's status.conditions.
func observedConditions(req *fnv1.RunFunctionRequest) []Condition {
	st := req.GetObserved().GetComposite().GetResource().GetFields()["status"].GetStructValue()
	var out []Condition
	for _, v := range st.GetFields()["conditions"].GetListValue().GetValues() {
		f := v.GetStructValue().GetFields()
		if t := f["type"].GetStringValue(); t != "" {
			out = append(out, Condition{Type: t, Status: f["status"].GetStringValue(), Reason: f["reason"].GetStringValue()})
		}
	}
	return out
}

// A Sample is one series: its label values, in its family's label order, and its value.
type Sample struct {
	Labels []string
	Value  float64
}

// Samples are an XR's series as one call leaves them, by family name. A family the call could not tell (a read
// Crossplane has not answered yet) is absent: it keeps what an earlier call said. A family present with no
// series has none.
type Samples map[string][]Sample

// Add adds a series of a family.
func (s Samples) Add(f monitoring.Family, value float64, labels ...string) {
	s[f.Name] = append(s[f.Name], Sample{Labels: labels, Value: value})
}

// Known says the call told the family, even if it holds no series.
func (s Samples) Known(f monitoring.Family) {
	if _, ok := s[f.Name]; !ok {
		s[f.Name] = []Sample{}
	}
}

// Bool is a gauge's value for a truth.
func Bool(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// xrSeries are one XR's series and when they expire.
type xrSeries struct {
	families map[string][]Sample
	expires  time.Time
}

// collector holds every XR's series and exports them, less those expired.
type collector struct {
	mu sync.Mutex
	// descs and labels are each family's description and label count, by name.
	descs  map[string]*prometheus.Desc
	labels map[string]int
	xrs    map[string]*xrSeries
	now    func() time.Time
}

func newCollector(families []monitoring.Family, now func() time.Time) *collector {
	c := &collector{descs: map[string]*prometheus.Desc{}, labels: map[string]int{}, xrs: map[string]*xrSeries{}, now: now}
	for _, f := range families {
		c.descs[f.Name] = prometheus.NewDesc(f.Name, f.Help, f.Labels, nil)
		c.labels[f.Name] = len(f.Labels)
	}
	return c
}

// record keeps an XR's series from a call that asked to be called again within ttl.
func (c *collector) record(xr string, s Samples, ttl time.Duration) {
	if ttl <= 0 {
		ttl = response.DefaultTTL
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	x, ok := c.xrs[xr]
	if !ok {
		x = &xrSeries{families: map[string][]Sample{}}
		c.xrs[xr] = x
	}
	for name, samples := range s {
		n, known := c.labels[name]
		if !known {
			continue
		}
		// A series of the wrong shape would fail the whole scrape.
		x.families[name] = slices.DeleteFunc(slices.Clone(samples), func(sm Sample) bool { return len(sm.Labels) != n })
	}
	x.expires = c.now().Add(2*ttl + expiryGrace)
}

// Describe sends every family's description.
func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

// Collect sends every series of the XRs not expired, each label set once: two XRs may tell the same series
// (two claims of one organization), and a scrape that sent one twice would fail whole.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	maps.DeleteFunc(c.xrs, func(_ string, x *xrSeries) bool { return now.After(x.expires) })
	seen := map[string]bool{}
	// In XR order, so the same XR's series win each time.
	for _, xr := range slices.Sorted(maps.Keys(c.xrs)) {
		for name, samples := range c.xrs[xr].families {
			for _, s := range samples {
				key := name + "\x00" + strings.Join(s.Labels, "\x00")
				if seen[key] {
					continue
				}
				seen[key] = true
				ch <- prometheus.MustNewConstMetric(c.descs[name], prometheus.GaugeValue, s.Value, s.Labels...)
			}
		}
	}
}

// reporting records the series of each call's XR.
type reporting struct {
	fnv1.FunctionRunnerServiceServer

	metrics   Metrics
	collector *collector
	log       logging.Logger
}

func (r reporting) RunFunction(ctx context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp, err := r.FunctionRunnerServiceServer.RunFunction(ctx, req)
	if err != nil || rsp == nil || r.metrics.Report == nil {
		return rsp, err
	}
	xr := compositeMeta(req, "uid")
	if xr == "" {
		xr = compositeName(req)
	}
	samples := r.report(Call{Req: req, Rsp: rsp, Now: r.collector.now()})
	r.collector.record(xr, samples, rsp.GetMeta().GetTtl().AsDuration())
	return rsp, err
}

// report derives the series; a panic here must not take down the process every XR shares, so it loses this
// call's series (the last call's stay) and is logged.
func (r reporting) report(c Call) (s Samples) {
	defer func() {
		if v := recover(); v != nil {
			r.log.Info("cannot derive the XR's metrics", "xr", c.XRName(), "panic", v)
			s = nil
		}
	}()
	return r.metrics.Report(c)
}
