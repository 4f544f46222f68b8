package monitoring

import (
	"strings"
)

// A Group is one rule group of a PrometheusRule (and of a Prometheus rule file).
type Group struct {
	Name  string `json:"name"`
	Rules []Rule `json:"rules"`
}

// A Rule is a recording rule (Record) or an alerting rule (Alert).
type Rule struct {
	Record      string            `json:"record,omitempty"`
	Alert       string            `json:"alert,omitempty"`
	Expr        string            `json:"expr"`
	For         string            `json:"for,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// RunbookBase is where each alert's runbook_url points, at the heading named after the alert.
const RunbookBase = "https://github.com/kiso-dev/kiso/blob/main/docs/runbooks.md#"

// Severities of kiso's alerts.
const (
	severityWarning = "warning"
	severityInfo    = "info"
	// severityCritical is for what breaks the boundary between organizations.
	severityCritical = "critical"
)

// quarterHour is how long most conditions last before their alert fires.
const quarterHour = "15m"

// about is an alert's summary and description.
func about(summary, description string) map[string]string {
	return map[string]string{"summary": summary, "description": description}
}

// severity labels an alert.
func severity(s string) map[string]string { return map[string]string{"severity": s} }

// Groups are the rule groups the cluster composes: Karpenter's alerts, the recording rules per organization and
// kiso's own alerts. Every alert carries a severity and a runbook_url.
func Groups() []Group {
	return []Group{
		{Name: "kiso-karpenter", Rules: withRunbooks(karpenterAlerts, severityWarning)},
		{Name: "kiso-organizations", Rules: recordingRules},
		{Name: "kiso", Rules: withRunbooks(kisoAlerts, "")},
	}
}

// withRunbooks labels each alert with a severity (its own, else defaultSeverity) and links its runbook.
func withRunbooks(alerts []Rule, defaultSeverity string) []Rule {
	out := make([]Rule, len(alerts))
	for i, a := range alerts {
		labels := severity(defaultSeverity)
		for k, v := range a.Labels {
			labels[k] = v
		}
		annotations := map[string]string{"runbook_url": RunbookBase + strings.ToLower(a.Alert)}
		for k, v := range a.Annotations {
			annotations[k] = v
		}
		a.Labels, a.Annotations = labels, annotations
		out[i] = a
	}
	return out
}

// karpenterAlerts are kiso's alerts on Karpenter, on metrics Karpenter v1.15
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
var karpenterAlerts = []Rule{
	{
		Alert: "KarpenterEC2NodeClassNotReady",
		Expr:  `max by (name) (operator_ec2nodeclass_status_condition_count{type="Ready",status!="True"}) > 0`,
		For:   quarterHour,
		Annotations: about(
			"EC2NodeClass {{ $labels.name }} is not Ready.",
			"Karpenter launches no node for an EC2NodeClass that is not Ready: check its status conditions (subnets, security groups, AMIs, instance profile)."),
	},
	{
		Alert: "KarpenterNodePoolNotReady",
		Expr:  `max by (name) (operator_nodepool_status_condition_count{type="Ready",status!="True"}) > 0`,
		For:   quarterHour,
		Annotations: about(
			"NodePool {{ $labels.name }} is not Ready.",
			"Karpenter provisions nothing for a NodePool that is not Ready: check its status conditions and its NodeClass."),
	},
	{
		Alert: "KarpenterNodePoolNearLimit",
		Expr:  `max by (nodepool, resource_type) (karpenter_nodepools_usage) / max by (nodepool, resource_type) (karpenter_nodepools_limit > 0) > 0.9`,
		For:   quarterHour,
		Annotations: about(
			"NodePool {{ $labels.nodepool }} uses {{ $value | humanizePercentage }} of its {{ $labels.resource_type }} limit.",
			"Pods that need more than the NodePool's remaining limit stay pending: raise the limit or let pods use another NodePool."),
	},
	{
		Alert: "KarpenterCloudProviderErrors",
		Expr:  `sum by (method, error) (rate(karpenter_cloudprovider_errors_total{error!~"NodeClaimNotFoundError|InsufficientCapacityError"}[10m])) > 0`,
		For:   quarterHour,
		Annotations: about(
			"Karpenter's {{ $labels.method }} calls to EC2 fail ({{ $labels.error }}).",
			"Karpenter's calls to AWS keep failing: check the controller's logs for AccessDenied (controller policy, iam:PassRole) or API errors."),
	},
	{
		// A wave of a staged rollout waits for its drifted nodes: one Karpenter does not replace (a disruption
		// budget of 0, a do-not-disrupt pod, a PodDisruptionBudget) holds the wave and every later one. The
		// cluster says so on its RolledOut condition once spec.rollout.progressDeadline (2h by default) passes.
		Alert: "KarpenterDriftedNodeNotReplaced",
		Expr:  `max by (name) (operator_nodeclaim_status_condition_count{type="Drifted",status="True"}) > 0`,
		For:   "2h",
		Annotations: about(
			"NodeClaim {{ $labels.name }} has been drifted for 2 hours and is not replaced.",
			"Karpenter replaces a drifted node only as its NodePool's disruption budgets, PodDisruptionBudgets and karpenter.sh/do-not-disrupt pods allow: until it does, a staged rollout's wave waits for it (the XKarpenterCluster's RolledOut condition names the organization; spec.rollout.skip lets the rollout go on without it)."),
	},
	{
		Alert: "KarpenterPodsUnschedulable",
		Expr:  `max(karpenter_scheduler_unschedulable_pods_count{controller="provisioner"}) > 0`,
		For:   quarterHour,
		Annotations: about(
			"{{ $value }} pods fit no Karpenter NodePool.",
			"Karpenter found no NodePool that can run these pods: check their node selectors, tolerations and requests against the NodePools' requirements, taints and limits."),
	},
}

// pools and namespaces are kiso's info series without the labels a scrape adds (instance, pod), so that a join
// matches one series per NodePool or namespace whatever scrapes the function.
const (
	pools      = `max by (cluster, organization, nodepool) (kiso_pool_info)`
	namespaces = `max by (cluster, organization, namespace) (kiso_namespace_info)`
)

// perOrganization sums a per-nodepool Karpenter series per organization (and the labels given).
func perOrganization(series, by string) string {
	return `sum by (cluster, organization` + by + `) (` + series + ` * on (nodepool) group_left (cluster, organization) ` + pools + `)`
}

// recordingRules are, per organization, what its pools hold and may hold, what runs on them, what waits for
// them and what they cost, from Karpenter's series joined with the pools the isolation function names; and how
// far each cluster's staged rollout got.
var recordingRules = []Rule{
	{
		// Karpenter's count of what the organization's pools launched (cpu, memory, nodes, pods, ...):
		// NodePool status.resources.
		Record: "kiso:organization_usage:sum",
		Expr:   perOrganization("karpenter_nodepools_usage", ", resource_type"),
	},
	{
		// The sum of the limits of the organization's pools that set one (spec.limits).
		Record: "kiso:organization_limit:sum",
		Expr:   perOrganization("karpenter_nodepools_limit", ", resource_type"),
	},
	{
		// What the organization's nodes can hold: their allocatable resources.
		Record: "kiso:organization_allocatable:sum",
		Expr:   perOrganization("karpenter_nodes_allocatable", ", resource_type"),
	},
	{
		// What the pods on the organization's nodes request, DaemonSets included.
		Record: "kiso:organization_pod_requests:sum",
		Expr:   perOrganization("karpenter_nodes_total_pod_requests", ", resource_type"),
	},
	{
		// The organization's nodes by instance type and capacity type (on-demand, spot, reserved): over time,
		// its node-hours of each, which priced give its compute cost.
		Record: "kiso:organization_nodes:count",
		Expr: `count by (cluster, organization, instance_type, capacity_type) (karpenter_nodes_allocatable{resource_type="cpu"} * on (nodepool) group_left (cluster, organization) ` +
			pools + `)`,
	},
	{
		// Karpenter's estimate of what the organization's nodes cost an hour, at the prices it launches by
		// (alpha in Karpenter v1.15; not billing).
		Record: "kiso:organization_cost_per_hour:sum",
		Expr:   perOrganization("karpenter_nodepools_cost_total", ""),
	},
	{
		// Pods of the organization's namespaces waiting for a node; 0 for an organization none waits for.
		Record: "kiso:organization_pending_pods:sum",
		Expr: `sum by (cluster, organization) (karpenter_pods_state{phase="Pending"} * on (namespace) group_left (cluster, organization) ` + namespaces + `)` +
			` or on (cluster, organization) 0 * max by (cluster, organization) (kiso_namespace_info)`,
	},
	{
		// How many organizations are in each rollout state, per cluster.
		Record: "kiso:rollout_organizations:count",
		Expr:   `count by (cluster, state) (max by (cluster, organization, state) (kiso_rollout_organization_state))`,
	},
	{
		// The share of a cluster's organizations done on their reference's current revision.
		Record: "kiso:rollout_progress:ratio",
		Expr: `(count by (cluster) (max by (cluster, organization) (kiso_rollout_organization_state{state="done"})) or 0 * count by (cluster) (max by (cluster, organization) (kiso_rollout_organization_state)))` +
			` / count by (cluster) (max by (cluster, organization) (kiso_rollout_organization_state))`,
	},
}

// kisoAlerts are kiso's own alerts, on what its functions export: each names the organization (and its cluster).
var kisoAlerts = []Rule{
	{
		Alert:  "KisoOrganizationNotReady",
		Expr:   `min by (cluster, organization, xr) (kiso_organization_ready) == 0`,
		For:    quarterHour,
		Labels: severity(severityWarning),
		Annotations: about(
			"Organization {{ $labels.organization }} (XR {{ $labels.xr }}) is not Ready.",
			"Its claim has not been Ready for 15 minutes, or the function stopped on a Fatal result: its conditions say why (kubectl get xkarpenterisolation {{ $labels.xr }} -o yaml, or kiso_organization_condition)."),
	},
	{
		// PlacementEnforced=False does not make a claim un-Ready (its pools run), so KisoOrganizationNotReady
		// says nothing of it; yet it is the product's security signal: other pods may reach the organization's
		// nodes, or its own run outside them. Warn mode and enforce: false are the platform's choice, not a fault;
		// a cluster that audits (ClusterAudits) is the platform's too, and fires KisoClusterPlacementAudited once
		// for the cluster rather than once per organization.
		Alert:  "KisoPlacementNotEnforced",
		Expr:   `max by (cluster, organization, xr, reason) (kiso_organization_condition{type="PlacementEnforced",status="False",reason!~"WarnOnly|EnforcementOff|ClusterAudits"}) > 0`,
		For:    quarterHour,
		Labels: severity(severityCritical),
		Annotations: about(
			"Placement of organization {{ $labels.organization }} (XR {{ $labels.xr }}) is not enforced: {{ $labels.reason }}.",
			"Its claim's PlacementEnforced condition has been False for 15 minutes ({{ $labels.reason }}): other pods may reach its nodes, or its pods may be refused; the condition's message says what is missing."),
	},
	{
		Alert:  "KisoClusterNotReady",
		Expr:   `min by (cluster) (kiso_cluster_ready) == 0`,
		For:    quarterHour,
		Labels: severity(severityWarning),
		Annotations: about(
			"XKarpenterCluster {{ $labels.cluster }} is not Ready.",
			"It has not been Ready for 15 minutes, or the function stopped on a Fatal result: its conditions say which of Karpenter's prerequisites or placement policies is missing (kubectl get xkarpentercluster {{ $labels.cluster }} -o yaml, or kiso_cluster_condition)."),
	},
	{
		// A function's series are its calls' (kiso_*_ready of each XR it was called for). When a function is down,
		// its target's series go stale at once; when Crossplane stops calling it, each expires after twice its
		// TTL and five minutes. Either way the series vanish rather than say anything, so the alert is on their
		// absence where the last three hours had some: it also fires for three hours after the last cluster or
		// organization is deleted, which its runbook says.
		Alert: "KisoFunctionSilent",
		Expr: `label_replace((count(max_over_time(kiso_cluster_ready[3h])) > 0) unless (count(kiso_cluster_ready) > 0), "function", "cluster", "", "")` +
			` or label_replace((count(max_over_time(kiso_organization_ready[3h])) > 0) unless (count(kiso_organization_ready) > 0), "function", "isolation", "", "")`,
		For:    quarterHour,
		Labels: severity(severityWarning),
		Annotations: about(
			"kiso's {{ $labels.function }} function exports no series about any XR.",
			"It exported some in the last three hours and none for 15 minutes: the function is down, unreachable by Prometheus, or Crossplane no longer calls it. Admission keeps enforcing placement meanwhile, but no claim or cluster changes."),
	},
	{
		// Audit is a transition of the install: while it lasts, other teams' pods may reach every organization's
		// nodes. A day is long enough to read status.placementAudit and exempt or fix what it names.
		Alert:  "KisoClusterPlacementAudited",
		Expr:   `max by (cluster) (kiso_cluster_condition{type="PlacementEnforced",status="False",reason="Audit"}) > 0`,
		For:    "24h",
		Labels: severity(severityWarning),
		Annotations: about(
			"XKarpenterCluster {{ $labels.cluster }} has audited placement for a day instead of enforcing it.",
			"Its spec.placement.mode is Audit: outside organizations' and the platform's namespaces, pods that could run on organizations' nodes are admitted. status.placementAudit names what Enforce would refuse (kiso_cluster_placement_audit_refusal); exempt or fix it, then set spec.placement.mode: Enforce."),
	},
	{
		Alert:  "KisoRolloutBlocked",
		Expr:   `max by (cluster, organization) (kiso_rollout_organization_state{state="blocked"}) > 0`,
		For:    "5m",
		Labels: severity(severityWarning),
		Annotations: about(
			"Organization {{ $labels.organization }} holds the staged rollout of cluster {{ $labels.cluster }} past its deadline.",
			"Its wave opened longer than spec.rollout.progressDeadline ago and its pools are not done on the new revision: the XKarpenterCluster's RolledOut condition says why; spec.rollout.skip lets the rollout go on without it."),
	},
	{
		Alert:  "KisoWarnModeWouldRefusePods",
		Expr:   `max by (cluster, organization, xr) (kiso_organization_warned_pods) > 0`,
		For:    "30m",
		Labels: severity(severityInfo),
		Annotations: about(
			"{{ $value }} pods of organization {{ $labels.organization }} select none of its pools: Enforce mode would refuse them.",
			"Placement is in Warn mode: the claim's PlacementEnforced condition lists the pods; give them the organization's placement (or set spec.placement.inject) before switching to Enforce."),
	},
}
