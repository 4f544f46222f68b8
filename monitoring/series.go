package monitoring

// A Family is one series family a kiso function exports, a gauge: its name, help and label names in order.
type Family struct {
	Name, Help string
	Labels     []string
}

// Label names kiso's series share.
const (
	// LabelCluster is the XKarpenterCluster's name: the organization's spec.clusterRef.name, "" when unbound.
	LabelCluster = "cluster"
	// LabelOrganization is the organization's spec.organization, as its pools and nodes name it.
	LabelOrganization = "organization"
	// LabelXR is the composite resource's name: two claims of one organization are two XRs.
	LabelXR = "xr"
)

// The isolation function's series, one set per XKarpenterIsolation.
var (
	OrganizationReady = Family{
		Name:   "kiso_organization_ready",
		Help:   "1 if the organization's XR is Ready as Crossplane last wrote it and the function's last call for it had no Fatal result, else 0.",
		Labels: []string{LabelCluster, LabelOrganization, LabelXR},
	}
	OrganizationCondition = Family{
		Name:   "kiso_organization_condition",
		Help:   "1 for each condition of the organization's XR: those Crossplane last wrote, overlaid by those the function's last call set.",
		Labels: []string{LabelCluster, LabelOrganization, LabelXR, "type", "status", "reason"},
	}
	OrganizationWarnedPods = Family{
		Name:   "kiso_organization_warned_pods",
		Help:   "In placement mode Warn, the pods of the organization's namespaces that select none of its pools: what Enforce would refuse (status.warnedPods).",
		Labels: []string{LabelCluster, LabelOrganization, LabelXR},
	}
	PoolInfo = Family{
		Name:   "kiso_pool_info",
		Help:   "1 for each NodePool kiso composes for an organization; stack is set in stack isolation. Join Karpenter's per-nodepool series on nodepool.",
		Labels: []string{LabelCluster, LabelOrganization, "stack", "nodepool"},
	}
	NamespaceInfo = Family{
		Name:   "kiso_namespace_info",
		Help:   "1 for each namespace an organization's stacks list. Join per-namespace series (Karpenter's pod state) on namespace.",
		Labels: []string{LabelCluster, LabelOrganization, "stack", "namespace"},
	}
)

// The cluster function's series, one set per XKarpenterCluster.
var (
	ClusterReady = Family{
		Name:   "kiso_cluster_ready",
		Help:   "1 if the cluster's XR is Ready as Crossplane last wrote it and the function's last call for it had no Fatal result, else 0.",
		Labels: []string{LabelCluster},
	}
	ClusterCondition = Family{
		Name:   "kiso_cluster_condition",
		Help:   "1 for each condition of the cluster's XR: those Crossplane last wrote, overlaid by those the function's last call set.",
		Labels: []string{LabelCluster, "type", "status", "reason"},
	}
	RolloutOrganizationState = Family{
		Name: "kiso_rollout_organization_state",
		Help: "1 for the state of each organization in the cluster's staged rollout (spec.rollout): done, waiting (for a later wave), " +
			"progressing (its wave is open), blocked (its wave is open past spec.rollout.progressDeadline and it is not done) or skipped.",
		Labels: []string{LabelCluster, LabelOrganization, "state"},
	}
	PlacementAuditRefusal = Family{
		Name: "kiso_cluster_placement_audit_refusal",
		Help: "1 for each workload whose pods the cluster's placement policy would refuse in spec.placement.mode Enforce, while it audits " +
			"(the first 50, in namespace and name order; status.placementAudit.total counts them all).",
		Labels: []string{LabelCluster, "namespace", "kind", "name"},
	}
)

// Rollout states of an organization (RolloutOrganizationState's state label).
const (
	RolloutDone        = "done"
	RolloutWaiting     = "waiting"
	RolloutProgressing = "progressing"
	RolloutBlocked     = "blocked"
	RolloutSkipped     = "skipped"
)

// IsolationFamilies and ClusterFamilies are every family each function exports.
var (
	IsolationFamilies = []Family{OrganizationReady, OrganizationCondition, OrganizationWarnedPods, PoolInfo, NamespaceInfo}
	ClusterFamilies   = []Family{ClusterReady, ClusterCondition, RolloutOrganizationState, PlacementAuditRefusal}
)
