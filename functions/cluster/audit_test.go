package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/fntest"
	"github.com/kiso-dev/kiso/functions/internal/placement"
)

// What the audit binding admits and the enforcing one refuses is proven against a real kube-apiserver in
// test/e2e (AnAuditingClusterNamesWhatItWouldRefuse); these tests pin what the function renders and reads.

// daemonSet is a DaemonSet of a namespace whose pods carry the pod spec fields given (JSON, without braces).
func daemonSet(namespace, name, podSpec string) string {
	spec := `"containers":[{"name":"agent","image":"agent"}]`
	if podSpec != "" {
		spec += "," + podSpec
	}
	return fmt.Sprintf(`{"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":%[1]q,"namespace":%[2]q},"spec":{"selector":{"matchLabels":{"app":%[1]q}},"template":{"metadata":{"labels":{"app":%[1]q}},"spec":{%[3]s}}}}`,
		name, namespace, spec)
}

// labelledNamespace is a namespace with labels (JSON object).
func labelledNamespace(name, labels string) string {
	return fmt.Sprintf(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q,"labels":%s}}`, name, labels)
}

const tolerateEverything = `"tolerations":[{"operator":"Exists"}]`

// TestAnAuditingClusterNamesWhatEnforceWouldRefuse: in spec.placement.mode Audit the placement policy still
// denies in organizations' namespaces, only warns and audits in the others outside the platform's, and the
// cluster names the DaemonSets there whose pods Enforce would refuse, on its status, its PlacementEnforced
// condition, a Warning and a metric; an exempt namespace, the platform's and an organization's are not listed.
func TestAnAuditingClusterNamesWhatEnforceWouldRefuse(t *testing.T) {
	world := withPrometheusOperator(fntest.Cluster{
		labelledNamespace("monitoring", `{}`), daemonSet("monitoring", "node-exporter", tolerateEverything),
		labelledNamespace("logging", `{}`), daemonSet("logging", "fluent-bit", `"tolerations":[{"key":"node-role","operator":"Exists"}]`),
		labelledNamespace("tracing", `{}`), daemonSet("tracing", "collector", `"nodeSelector":{"node-restriction.kubernetes.io/kiso.dev.organization":"acme"}`),
		labelledNamespace("security", `{"kiso.dev/placement-exempt":"true"}`), daemonSet("security", "falco", tolerateEverything),
		labelledNamespace("acme-web", `{"kiso.dev/organization":"acme"}`), daemonSet("acme-web", "sidecar", tolerateEverything),
		labelledNamespace("kube-system", `{}`), daemonSet("kube-system", "kube-proxy", tolerateEverything),
		labelledNamespace("karpenter", `{}`),
	})
	spec := strings.Replace(podIdentitySpec, `"tags"`, `"karpenter":{"namespace":"karpenter"},"placement":{"mode":"Audit"},"tags"`, 1)
	fn := &Function{log: logging.NewNopLogger()}
	rsp := fntest.Run(t, fn, newRequest(t, xr(spec), nil), world)
	fntest.AssertNoFatal(t, rsp)
	got := fntest.Desired(t, rsp)

	organizations := map[string]any{"matchExpressions": []any{
		map[string]any{"key": "kiso.dev/placement-exempt", "operator": "NotIn", "values": []any{"true"}},
		map[string]any{"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": []any{"karpenter", "kube-system"}},
		map[string]any{"key": "kiso.dev/organization", "operator": "Exists"},
	}}
	others := fntest.Dig(got["placement-audit-binding"], "spec", "matchResources", "namespaceSelector")
	wantOthers := fntest.JSONMap(t, strings.Replace(fntest.ToJSON(t, organizations), `"Exists"`, `"DoesNotExist"`, 1))
	for name, want := range map[string]any{
		"placement-binding":       map[string]any{"policy": "kiso-placement", "actions": []any{"Deny"}, "namespaces": organizations},
		"placement-audit-binding": map[string]any{"policy": "kiso-placement", "actions": []any{"Warn", "Audit"}, "namespaces": wantOthers},
	} {
		b := got[name]
		g := map[string]any{"policy": fntest.Dig(b, "spec", "policyName"), "actions": fntest.Dig(b, "spec", "validationActions"), "namespaces": fntest.Dig(b, "spec", "matchResources", "namespaceSelector")}
		if diff := cmp.Diff(want, g); diff != "" {
			t.Errorf("%s: -want, +got:\n%s", name, diff)
		}
	}
	if others == nil {
		t.Fatal("no audit binding")
	}
	if mode := fntest.Dig(got["placement-policy"], "metadata", "annotations", placement.AnnotationMode); mode != "Audit" {
		t.Errorf("the policy tells organizations mode %v, want Audit", mode)
	}

	st := fntest.AsMap(t, rsp.GetDesired().GetComposite().GetResource())["status"].(map[string]any)
	want := map[string]any{"total": float64(2), "daemonSets": float64(3), "wouldRefuse": []any{
		map[string]any{"namespace": "monitoring", "kind": "DaemonSet", "name": "node-exporter", "reason": "tolerates every taint (a toleration with operator Exists and no key), organizations' nodes included"},
		map[string]any{"namespace": "tracing", "kind": "DaemonSet", "name": "collector", "reason": "selects the nodes of organization acme (node-restriction.kubernetes.io/kiso.dev.organization in its nodeSelector), but namespace tracing is no organization's"},
	}}
	if diff := cmp.Diff(want, st["placementAudit"]); diff != "" {
		t.Errorf("status.placementAudit: -want, +got:\n%s", diff)
	}
	c := fntest.Condition(t, rsp, TypePlacementEnforced)
	if c.GetStatus() != fnv1.Status_STATUS_CONDITION_FALSE || c.GetReason() != ReasonPlacementAudit ||
		!strings.Contains(c.GetMessage(), "Enforce would refuse the pods of 2 of 3 DaemonSets there (status.placementAudit): monitoring/node-exporter, tracing/collector") {
		t.Errorf("PlacementEnforced %s %s: %s", c.GetStatus(), c.GetReason(), c.GetMessage())
	}
	var warned bool
	for _, r := range rsp.GetResults() {
		warned = warned || (r.GetSeverity() == fnv1.Severity_SEVERITY_WARNING && r.GetMessage() == "placement audit: Enforce would refuse the pods of monitoring/node-exporter, tracing/collector")
	}
	if !warned {
		t.Errorf("no Warning (an event on the XR) names what Enforce would refuse; results: %v", rsp.GetResults())
	}

	// Switched to Enforce: one binding that denies outside the platform, nothing read, nothing audited.
	enforcing := strings.Replace(spec, `"mode":"Audit"`, `"mode":"Enforce"`, 1)
	rsp = fntest.Run(t, fn, newRequest(t, xr(enforcing), nil), world)
	for _, name := range []string{requireAuditDaemonSets, requireAuditNamespaces} {
		if _, asked := rsp.GetRequirements().GetResources()[name]; asked {
			t.Errorf("an enforcing cluster asks for %s", name)
		}
	}
	got = fntest.Desired(t, rsp)
	if _, ok := got["placement-audit-binding"]; ok {
		t.Error("an enforcing cluster composes the audit binding")
	}
	if sel := fntest.Dig(got["placement-binding"], "spec", "matchResources", "namespaceSelector", "matchExpressions"); len(sel.([]any)) != 2 {
		t.Errorf("an enforcing cluster's placement binding selects %v, want every namespace outside the platform's", sel)
	}
	if st := fntest.AsMap(t, rsp.GetDesired().GetComposite().GetResource())["status"].(map[string]any); st["placementAudit"] != nil {
		t.Errorf("an enforcing cluster reports an audit: %v", st["placementAudit"])
	}
	if c := fntest.Condition(t, rsp, TypePlacementEnforced); c.GetStatus() != fnv1.Status_STATUS_CONDITION_TRUE || c.GetReason() != ReasonPlacementEnforced {
		t.Errorf("PlacementEnforced %s %s", c.GetStatus(), c.GetReason())
	}
}

// TestTheAuditJudgesAPodAsThePolicyDoes: each check of the placement policy's creation, as it reads a pod of a
// namespace of no organization (organization ""): a toleration or selector of value "" is that namespace's own.
func TestTheAuditJudgesAPodAsThePolicyDoes(t *testing.T) {
	pp := newPlacementPlan("prod", v1alpha1.XKarpenterClusterSpec{}, Input{}, placement.NewKeys("kiso.dev"))
	org, nodeOrg := pp.OrganizationKey, pp.NodeOrganizationKey
	in := func(key string, values ...string) *corev1.Affinity {
		return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: corev1.NodeSelectorOpIn, Values: values}}}},
		}}}
	}
	for name, tc := range map[string]struct {
		spec    corev1.PodSpec
		refused string
	}{
		"Plain":                      {},
		"NodeName":                   {spec: corev1.PodSpec{NodeName: "ip-10-0-0-1"}, refused: "names node"},
		"EveryTaint":                 {spec: corev1.PodSpec{Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}}, refused: "tolerates every taint"},
		"EveryTaintNoExecuteOnly":    {spec: corev1.PodSpec{Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}}}},
		"EveryOrganization":          {spec: corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: org, Operator: corev1.TolerationOpExists}}}, refused: "tolerates every value of " + org},
		"EveryStack":                 {spec: corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: pp.StackKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}}, refused: "tolerates every value of " + pp.StackKey},
		"AnOrganization":             {spec: corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: org, Value: "acme"}}}, refused: "tolerates organization acme's taint"},
		"OrganizationNone":           {spec: corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: org, Value: ""}}}},
		"OtherKeys":                  {spec: corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: "node-role", Operator: corev1.TolerationOpExists}}}},
		"SelectorOnNodeLabel":        {spec: corev1.PodSpec{NodeSelector: map[string]string{nodeOrg: "acme"}}, refused: "selects the nodes of organization acme"},
		"SelectorOnTaintKey":         {spec: corev1.PodSpec{NodeSelector: map[string]string{org: "acme"}}, refused: "selects the nodes of organization acme"},
		"SelectorEmpty":              {spec: corev1.PodSpec{NodeSelector: map[string]string{nodeOrg: ""}}},
		"AffinityIn":                 {spec: corev1.PodSpec{Affinity: in(nodeOrg, "acme", "globex")}, refused: "selects the nodes of organization acme, globex"},
		"AffinityInNone":             {spec: corev1.PodSpec{Affinity: in(nodeOrg, "")}},
		"AffinityOnOtherKey":         {spec: corev1.PodSpec{Affinity: in("zone", "a")}},
		"NodeNameBeforeTolerations":  {spec: corev1.PodSpec{NodeName: "n", Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}}, refused: "names node n"},
		"EveryTaintBeforeOrganizing": {spec: corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: org, Value: "acme"}, {Operator: corev1.TolerationOpExists}}}, refused: "tolerates every taint"},
	} {
		got := pp.wouldRefuse(tc.spec, "monitoring")
		if (tc.refused == "") != (got == "") || !strings.HasPrefix(got, tc.refused) {
			t.Errorf("%s: refusal %q, want one starting %q", name, got, tc.refused)
		}
	}
}
