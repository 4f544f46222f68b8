package main

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/crossplane/function-sdk-go/errors"

	"github.com/kiso-dev/kiso/functions/internal/ownership"
)

// The PrometheusRule's API, prometheus-operator's monitoring.coreos.com/v1.
const (
	prometheusRuleAPIVersion = "monitoring.coreos.com/v1"
	prometheusRuleKind       = "PrometheusRule"
	alertGroup               = "kiso-karpenter"
)

// An alert is one alerting rule of a PrometheusRule.
type alert struct {
	Alert       string            `json:"alert"`
	Expr        string            `json:"expr"`
	For         string            `json:"for"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

// alerts are kiso's six Karpenter alerts, on metrics Karpenter v1.15
// exports (sigs.k8s.io/karpenter and aws/karpenter-provider-aws v1.15.0):
//
//   - operator_<kind>_status_condition_count{name,type,status,reason}: a gauge
//     per object and condition, from operatorpkg's status controller that
//     Karpenter runs for NodeClaim, NodePool and EC2NodeClass;
//   - karpenter_nodepools_usage and karpenter_nodepools_limit{nodepool,resource_type};
//   - karpenter_cloudprovider_errors_total{controller,method,provider,error,nodepool}:
//     errors of Karpenter's calls to AWS, by category; NodeClaimNotFoundError
//     (an instance already gone) and InsufficientCapacityError (Karpenter
//     retries other offerings) are routine and left out;
//   - karpenter_scheduler_unschedulable_pods_count{controller}: pods the
//     provisioner found no NodePool for in its last scheduling pass.
var alerts = []alert{
	{
		Alert: "KarpenterEC2NodeClassNotReady",
		Expr:  `max by (name) (operator_ec2nodeclass_status_condition_count{type="Ready",status!="True"}) > 0`,
		For:   "15m",
		Annotations: map[string]string{
			"summary":     "EC2NodeClass {{ $labels.name }} is not Ready.",
			"description": "Karpenter launches no node for an EC2NodeClass that is not Ready: check its status conditions (subnets, security groups, AMIs, instance profile).",
		},
	},
	{
		Alert: "KarpenterNodePoolNotReady",
		Expr:  `max by (name) (operator_nodepool_status_condition_count{type="Ready",status!="True"}) > 0`,
		For:   "15m",
		Annotations: map[string]string{
			"summary":     "NodePool {{ $labels.name }} is not Ready.",
			"description": "Karpenter provisions nothing for a NodePool that is not Ready: check its status conditions and its NodeClass.",
		},
	},
	{
		Alert: "KarpenterNodePoolNearLimit",
		Expr:  `max by (nodepool, resource_type) (karpenter_nodepools_usage) / max by (nodepool, resource_type) (karpenter_nodepools_limit > 0) > 0.9`,
		For:   "15m",
		Annotations: map[string]string{
			"summary":     "NodePool {{ $labels.nodepool }} uses {{ $value | humanizePercentage }} of its {{ $labels.resource_type }} limit.",
			"description": "Pods that need more than the NodePool's remaining limit stay pending: raise the limit or let pods use another NodePool.",
		},
	},
	{
		Alert: "KarpenterCloudProviderErrors",
		Expr:  `sum by (method, error) (rate(karpenter_cloudprovider_errors_total{error!~"NodeClaimNotFoundError|InsufficientCapacityError"}[10m])) > 0`,
		For:   "15m",
		Annotations: map[string]string{
			"summary":     "Karpenter's {{ $labels.method }} calls to EC2 fail ({{ $labels.error }}).",
			"description": "Karpenter's calls to AWS keep failing: check the controller's logs for AccessDenied (controller policy, iam:PassRole) or API errors.",
		},
	},
	{
		// A wave of a staged rollout waits for its drifted nodes: one Karpenter does not replace (a disruption
		// budget of 0, a do-not-disrupt pod, a PodDisruptionBudget) holds the wave and every later one. The
		// cluster says so on its RolledOut condition once spec.rollout.progressDeadline (2h by default) passes.
		Alert: "KarpenterDriftedNodeNotReplaced",
		Expr:  `max by (name) (operator_nodeclaim_status_condition_count{type="Drifted",status="True"}) > 0`,
		For:   "2h",
		Annotations: map[string]string{
			"summary":     "NodeClaim {{ $labels.name }} has been drifted for 2 hours and is not replaced.",
			"description": "Karpenter replaces a drifted node only as its NodePool's disruption budgets, PodDisruptionBudgets and karpenter.sh/do-not-disrupt pods allow: until it does, a staged rollout's wave waits for it (the XKarpenterCluster's RolledOut condition names the organization; spec.rollout.skip lets the rollout go on without it).",
		},
	},
	{
		Alert: "KarpenterPodsUnschedulable",
		Expr:  `max(karpenter_scheduler_unschedulable_pods_count{controller="provisioner"}) > 0`,
		For:   "15m",
		Annotations: map[string]string{
			"summary":     "{{ $value }} pods fit no Karpenter NodePool.",
			"description": "Karpenter found no NodePool that can run these pods: check their node selectors, tolerations and requests against the NodePools' requirements, taints and limits.",
		},
	},
}

// alertSeverity labels every alert.
const alertSeverity = "warning"

// renderPrometheusRule returns the PrometheusRule with kiso's Karpenter
// alerts in Karpenter's namespace, or nil when monitoring.prometheusRule is
// off. It is namespaced; a Cluster-scoped XR may compose it.
func renderPrometheusRule(p plan) (*unstructured.Unstructured, error) {
	if !p.PrometheusRule {
		return nil, nil
	}
	rules := make([]alert, len(alerts))
	for i, a := range alerts {
		a.Labels = map[string]string{"severity": alertSeverity}
		rules[i] = a
	}
	labels := make(map[string]string, len(p.Spec.Monitoring.Labels)+1)
	for k, v := range p.Spec.Monitoring.Labels {
		labels[k] = v
	}
	labels[ownership.ManagedByLabel] = ownership.ManagedByValue
	obj := map[string]any{
		"apiVersion": prometheusRuleAPIVersion,
		"kind":       prometheusRuleKind,
		"metadata": map[string]any{
			"name":      p.objectName(),
			"namespace": p.Spec.Karpenter.Namespace,
			"labels":    labels,
		},
		"spec": map[string]any{
			"groups": []any{map[string]any{"name": alertGroup, "rules": rules}},
		},
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&obj)
	if err != nil {
		return nil, errors.Wrap(err, "cannot convert the PrometheusRule")
	}
	u := &unstructured.Unstructured{Object: content}
	return u, nil
}
