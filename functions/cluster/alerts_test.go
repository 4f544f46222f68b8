package main

import (
	"strings"
	"testing"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/kiso-dev/kiso/functions/internal/fntest"
)

// TestAlertsNeedPrometheusOperatorsCRD: Crossplane cannot apply a PrometheusRule where prometheus-operator's CRD
// is missing, and one object it cannot apply fails the cluster's whole reconcile. So the cluster composes its
// alerts only where the CRD is, says on a condition that names the field why it does not otherwise, composes
// everything else either way, and keeps alerts composed before while Crossplane has not answered.
func TestAlertsNeedPrometheusOperatorsCRD(t *testing.T) {
	spec := `{"clusterName":"prod","region":"eu-west-3","accountId":"111122223333"}`
	disabled := `{"clusterName":"prod","region":"eu-west-3","accountId":"111122223333","monitoring":{"prometheusRule":false}}`
	cases := map[string]struct {
		spec       string
		cluster    fntest.Cluster
		wantRule   bool
		wantStatus string
		wantReason string
	}{
		"TheCRDIsThere":        {spec: spec, cluster: withPrometheusOperator(nil), wantRule: true, wantStatus: "True", wantReason: ReasonAlertsComposed},
		"TheCRDIsMissing":      {spec: spec, wantReason: ReasonAlertsCRDMissing, wantStatus: "False"},
		"AlertsAreNotWanted":   {spec: disabled, cluster: withPrometheusOperator(nil), wantReason: ReasonAlertsDisabled, wantStatus: "True"},
		"NotWantedNorPossible": {spec: disabled, wantReason: ReasonAlertsDisabled, wantStatus: "True"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := fntest.Run(t, &Function{log: logging.NewNopLogger()}, newRequest(t, xr(tc.spec), nil), tc.cluster)
			fntest.AssertNoFatal(t, rsp)
			desired := rsp.GetDesired().GetResources()
			if _, ok := desired[string(crPrometheusRule)]; ok != tc.wantRule {
				t.Errorf("PrometheusRule composed: %t, want %t", ok, tc.wantRule)
			}
			if _, ok := desired[string(crControllerRole)]; !ok {
				t.Error("the controller role is not composed: the alerts held up the rest")
			}
			c := alertsCondition(t, rsp)
			if c == nil || c.GetStatus().String() != "STATUS_CONDITION_"+strings.ToUpper(tc.wantStatus) || c.GetReason() != tc.wantReason {
				t.Fatalf("condition %s = %v, want %s %s", TypeAlerts, c, tc.wantStatus, tc.wantReason)
			}
			if tc.wantReason == ReasonAlertsCRDMissing && !strings.HasPrefix(c.GetMessage(), "spec.monitoring.prometheusRule: ") {
				t.Errorf("message %q does not name the field", c.GetMessage())
			}
			if _, asked := rsp.GetRequirements().GetResources()[requirePrometheusRuleCRD]; asked != (tc.spec == spec) {
				t.Errorf("the CRD asked for: %t, want it only when the spec wants alerts", asked)
			}
		})
	}
}

// TestComposedAlertsStayUntilAnswered: until Crossplane says whether the CRD exists (the first call of a
// reconcile), a PrometheusRule composed before stays: Crossplane deletes what a function stops returning.
func TestComposedAlertsStayUntilAnswered(t *testing.T) {
	spec := `{"clusterName":"prod","region":"eu-west-3","accountId":"111122223333"}`
	rendered := run(t, newRequest(t, xr(spec), nil))
	rule, ok := rendered.GetDesired().GetResources()[string(crPrometheusRule)]
	if !ok {
		t.Fatal("no PrometheusRule where prometheus-operator's CRD is")
	}
	observed := map[string]string{string(crPrometheusRule): fntest.ToJSON(t, fntest.AsMap(t, rule.GetResource()))}
	// One call, unanswered: as Crossplane's first call of each reconcile.
	rsp, err := (&Function{log: logging.NewNopLogger()}).RunFunction(t.Context(), newRequest(t, xr(spec), observed))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := rsp.GetDesired().GetResources()[string(crPrometheusRule)]; !ok {
		t.Error("the PrometheusRule composed before was dropped before Crossplane answered whether its CRD exists")
	}
	if c := alertsCondition(t, rsp); c != nil {
		t.Errorf("condition %s set before Crossplane answered: %v", TypeAlerts, c)
	}
}

func alertsCondition(t *testing.T, rsp *fnv1.RunFunctionResponse) *fnv1.Condition {
	t.Helper()
	for _, c := range rsp.GetConditions() {
		if c.GetType() == TypeAlerts {
			return c
		}
	}
	return nil
}
