package main

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/crossplane/function-sdk-go/errors"

	"github.com/kiso-dev/kiso/functions/internal/placement"
	"github.com/kiso-dev/kiso/monitoring"
)

// The PrometheusRule's API, prometheus-operator's monitoring.coreos.com/v1.
const (
	prometheusRuleAPIVersion = "monitoring.coreos.com/v1"
	prometheusRuleKind       = "PrometheusRule"
)

// renderPrometheusRule returns the PrometheusRule with kiso's rule groups
// (monitoring.Groups: Karpenter's alerts, the recording rules per
// organization, kiso's own alerts) in Karpenter's namespace, or nil when
// monitoring.prometheusRule is off. It is namespaced; a Cluster-scoped XR may
// compose it.
func renderPrometheusRule(p plan) (*unstructured.Unstructured, error) {
	if !p.PrometheusRule {
		return nil, nil
	}
	labels := make(map[string]string, len(p.Spec.Monitoring.Labels)+1)
	for k, v := range p.Spec.Monitoring.Labels {
		labels[k] = v
	}
	labels[placement.ManagedByLabel] = placement.ManagedByValue
	obj := map[string]any{
		"apiVersion": prometheusRuleAPIVersion,
		"kind":       prometheusRuleKind,
		"metadata": map[string]any{
			"name":      p.objectName(),
			"namespace": p.Spec.Karpenter.Namespace,
			"labels":    labels,
		},
		"spec": map[string]any{"groups": monitoring.Groups()},
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&obj)
	if err != nil {
		return nil, errors.Wrap(err, "cannot convert the PrometheusRule")
	}
	return &unstructured.Unstructured{Object: content}, nil
}
