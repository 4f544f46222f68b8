package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/kiso-dev/kiso/monitoring"
)

func TestPrometheusRule(t *testing.T) {
	spec := validSpec()
	spec.Karpenter.Namespace = "karpenter"
	spec.Monitoring.Labels = map[string]string{"release": "kube-prometheus-stack"}
	u, err := renderPrometheusRule(newPlan(spec))
	if err != nil {
		t.Fatal(err)
	}
	if u.GetNamespace() != "karpenter" {
		t.Errorf("namespace %q, want Karpenter's, karpenter", u.GetNamespace())
	}
	if diff := cmp.Diff(map[string]string{"app.kubernetes.io/managed-by": "kiso", "release": "kube-prometheus-stack"}, u.GetLabels()); diff != "" {
		t.Errorf("labels: -want, +got:\n%s", diff)
	}
	groups, _, _ := unstructured.NestedSlice(u.Object, "spec", "groups")
	var got []string
	for _, r := range groups[0].(map[string]any)["rules"].([]any) {
		rule := r.(map[string]any)
		got = append(got, rule["alert"].(string))
		if rule["labels"].(map[string]any)["severity"] != "warning" {
			t.Errorf("%s: no severity label", rule["alert"])
		}
	}
	// The five: an EC2NodeClass not Ready, a NodePool not Ready, a
	// NodePool near its limits, EC2 calls failing, pods no NodePool can place.
	want := []string{"KarpenterEC2NodeClassNotReady", "KarpenterNodePoolNotReady", "KarpenterNodePoolNearLimit", "KarpenterCloudProviderErrors", "KarpenterDriftedNodeNotReplaced", "KarpenterPodsUnschedulable"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("alerts: -want, +got:\n%s", diff)
	}

	// Then the recording rules per organization and kiso's own alerts, all of monitoring.Groups.
	var names []string
	for _, g := range groups {
		names = append(names, g.(map[string]any)["name"].(string))
	}
	if diff := cmp.Diff([]string{"kiso-karpenter", "kiso-organizations", "kiso"}, names); diff != "" {
		t.Errorf("groups: -want, +got:\n%s", diff)
	}
	wantGroups, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&map[string]any{"groups": monitoring.Groups()})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantGroups["groups"], groups); diff != "" {
		t.Errorf("spec.groups is not monitoring.Groups(): -want, +got:\n%s", diff)
	}

	spec.Monitoring.PrometheusRule = ptr.To(false)
	if u, _ := renderPrometheusRule(newPlan(spec)); u != nil {
		t.Errorf("monitoring.prometheusRule false rendered a PrometheusRule")
	}
}
