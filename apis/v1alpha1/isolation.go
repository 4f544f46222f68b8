package v1alpha1

import (
	"k8s.io/apimachinery/pkg/util/intstr"
)

// XKarpenterIsolation kinds.
const (
	IsolationKind      = "XKarpenterIsolation"
	IsolationClaimKind = "KarpenterIsolation"
)

// IsolationMode says how an organization's stacks share Karpenter capacity.
type IsolationMode string

// Isolation modes.
const (
	// IsolationOrganization gives every stack of the organization one shared pool.
	IsolationOrganization IsolationMode = "organization"
	// IsolationStack gives each stack a pool of its own.
	IsolationStack IsolationMode = "stack"
)

// XKarpenterIsolationSpec is one organization's request for dedicated Karpenter capacity. It is the single
// source of truth for every pool the organization gets.
//
// +kubebuilder:validation:XValidation:rule="!has(self.isolation) || self.isolation != 'stack' || !has(self.stacks) || size(self.stacks) <= {{MaxStackedStacks}}",message="stack isolation renders a pool per stack; at most {{MaxStackedStacks}} stacks fit one organization's desired state",fieldPath=".stacks"
type XKarpenterIsolationSpec struct {
	// Organization is the pool identity. It names the pools (kiso-<organization>, or
	// kiso-<organization>.<stack> in stack isolation) and is the value of the organization node label and taint.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Organization string `json:"organization"`

	// Customer is a cost identity, a tag and a node label for cost reports. Never a taint, so it never affects
	// scheduling.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`
	Customer string `json:"customer,omitempty"`

	// Isolation is organization, which gives every stack one shared pool, or stack, which gives each stack a
	// pool of its own.
	// +kubebuilder:validation:Enum=organization;stack
	// +kubebuilder:default=organization
	Isolation IsolationMode `json:"isolation,omitempty"`

	// Stacks are the organization's stacks and the namespaces their pods run in. At most 1000 with 1000
	// namespaces in all, and 200 with 600 namespaces in stack isolation (a pool per stack), so that an
	// organization's whole desired state stays well inside the 4 MiB gRPC message Crossplane receives from the
	// function.
	// +kubebuilder:validation:MaxItems=1000
	// +listType=map
	// +listMapKey=name
	Stacks []Stack `json:"stacks,omitempty"`

	// NodeClassRef is the cluster-scoped reference NodeClass to clone, of any Karpenter provider.
	// +kubebuilder:validation:Required
	NodeClassRef NodeClassReference `json:"nodeClassRef"`

	// NodePoolRef is the reference karpenter.sh/v1 NodePool to clone.
	// +kubebuilder:validation:Required
	NodePoolRef NodePoolReference `json:"nodePoolRef"`

	// Pool is the NodePool settings the organization may set. Unset fields keep the reference NodePool's
	// values.
	Pool *PoolSettings `json:"pool,omitempty"`

	// Classes are kinds of capacity the organization gets besides its default class (spec.nodeClassRef,
	// spec.nodePoolRef and spec.pool), e.g. gpu or arm64, each cloned from a reference pair of its own with pool
	// settings of its own. In organization isolation the organization gets a pool per class
	// (kiso.<organization>.<class>), in stack isolation each stack a pool per class it uses
	// (kiso.<organization>.<stack>.<class>, see stacks[].classes). A pod picks a class as Karpenter's users do:
	// by the labels and taints its reference NodePool gives its nodes, or by the node label <keyDomain>/class.
	// +kubebuilder:validation:MaxItems=10
	// +listType=map
	// +listMapKey=name
	Classes []CapacityClass `json:"classes,omitempty"`

	// Limits bound the organization's capacity summed over all its pools and classes (cpu, memory, nodes,
	// ...). kiso sets each pool's Karpenter limit to what the organization has left, from what Karpenter counts
	// its other pools hold, and recomputes it whenever Karpenter's count changes. A pool's own limits (spec.pool,
	// stacks[].pool, classes[].pool) may not be higher.
	// +kubebuilder:validation:MaxProperties=20
	Limits map[string]intstr.IntOrString `json:"limits,omitempty"`

	// Tags are extra cost-allocation tags for the organization's EC2 instances, volumes and instance profiles
	// (EC2NodeClass only), of at most 256 characters each.
	// +kubebuilder:validation:MaxProperties=40
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(self[k]) <= {{MaxTagValueLength}})",message="a tag value is at most {{MaxTagValueLength}} characters"
	Tags map[string]string `json:"tags,omitempty"`

	// Placement says how the organization's pods are kept on its pools, enforced at admission for every pod
	// (Deployments and Jobs alike) by Kubernetes-native admission policies.
	Placement *Placement `json:"placement,omitempty"`

	// ClusterRef is the XKarpenterCluster whose Karpenter runs the organization's pools. Its tags are
	// inherited, and a Dedicated node role is created in its account under its node-role path, with its
	// permissions boundary.
	ClusterRef *ClusterReference `json:"clusterRef,omitempty"`

	// NodeRole is Shared, which keeps the reference NodeClass's node identity, or Dedicated, which gives the
	// organization's nodes an IAM role and instance profile of their own, so they can be granted its own ECR
	// repositories or KMS keys and nothing else (needs clusterRef and an EC2NodeClass).
	// +kubebuilder:validation:Enum=Shared;Dedicated
	// +kubebuilder:default=Shared
	NodeRole NodeRoleMode `json:"nodeRole,omitempty"`
}

// ClusterReference names an XKarpenterCluster.
type ClusterReference struct {
	// Name of the XKarpenterCluster.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// NodeRoleMode says whose IAM identity an organization's nodes have.
type NodeRoleMode string

// Node role modes.
const (
	NodeRoleShared    NodeRoleMode = "Shared"
	NodeRoleDedicated NodeRoleMode = "Dedicated"
)

// Placement is enforced at admission for every pod, Deployments and Jobs
// alike, by Kubernetes-native admission policies: no webhook server to run.
// +kubebuilder:validation:XValidation:rule="!has(self.mode) || self.mode != 'Warn' || !has(self.enforce) || self.enforce",message="mode Warn needs enforce true: with enforce false no pool is required of the organization's pods, so there is nothing to warn about",fieldPath=".mode"
type Placement struct {
	// Enforce makes the cluster's admission policies refuse a pod in the organization's namespaces unless it
	// selects its own pool. Pods elsewhere are kept off the organization's nodes whatever this says; platform
	// namespaces (kube-system, Karpenter's, those the cluster lists and any labelled
	// <keyDomain>/placement-exempt) are left alone.
	// +kubebuilder:default=true
	Enforce *bool `json:"enforce,omitempty"`

	// Mode is Enforce, where a pod of the organization's namespaces that does not select its pool is refused,
	// or Warn, where it is admitted with the same refusal as a warning (kubectl prints it) and an audit
	// annotation: switch placement on for an organization that already runs pods, see what Enforce would
	// refuse, then switch to Enforce. Only what the organization's own pods must select is ever a warning:
	// other pods are kept off its nodes in either mode. Warn needs enforce true.
	// +kubebuilder:validation:Enum=Enforce;Warn
	// +kubebuilder:default=Enforce
	Mode PlacementMode `json:"mode,omitempty"`

	// Inject makes the cluster's MutatingAdmissionPolicy add the node selector and tolerations the
	// organization's pods lack, so teams change nothing; a selector a pod already sets is left as it is. Served
	// by Kubernetes 1.36+ (v1), or 1.34 and 1.35 with MutatingAdmissionPolicy enabled (v1beta1); condition
	// PlacementInjected says whether it applies.
	// +kubebuilder:default=false
	Inject bool `json:"inject,omitempty"`
}

// PlacementMode says what admission does with a pod of the organization that does not select its pool.
type PlacementMode string

// Placement modes.
const (
	PlacementEnforce PlacementMode = "Enforce"
	PlacementWarn    PlacementMode = "Warn"
)

// A Stack is one of the organization's workloads.
type Stack struct {
	// Name is unique within the organization; a DNS-1123 label.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// Namespaces whose pods belong to this stack. Default <organization>-<name>.
	// +kubebuilder:validation:MaxItems=100
	// +listType=set
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Namespaces []string `json:"namespaces,omitempty"`

	// Pool overrides spec.pool for this stack's own pool (stack isolation only). Unset fields keep spec.pool's,
	// then the reference NodePool's, values. It applies to the stack's pool of the default class.
	Pool *PoolSettings `json:"pool,omitempty"`

	// Classes are the classes (spec.classes) the stack gets a pool of, besides the default class's (stack
	// isolation only). Unset, every class; [] none.
	// +kubebuilder:validation:MaxItems=10
	// +listType=set
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Classes []string `json:"classes,omitempty"`
}

// DefaultClassName names, in status and messages, the class spec.nodeClassRef and spec.nodePoolRef give: no
// class of spec.classes may take it.
const DefaultClassName = "default"

// A CapacityClass is a kind of capacity of the organization: a reference pair of its own, and the settings of
// its pools.
// +kubebuilder:validation:XValidation:rule="self.name != '{{DefaultClassName}}'",message="{{DefaultClassName}} names the class spec.nodeClassRef and spec.nodePoolRef give",fieldPath=".name"
type CapacityClass struct {
	// Name is unique within the organization; a DNS-1123 label. It names the class's pools and is the value of
	// the node label <keyDomain>/class on their nodes.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// NodeClassRef is the cluster-scoped reference NodeClass the class's pools clone.
	// +kubebuilder:validation:Required
	NodeClassRef NodeClassReference `json:"nodeClassRef"`

	// NodePoolRef is the reference karpenter.sh/v1 NodePool the class's pools clone.
	// +kubebuilder:validation:Required
	NodePoolRef NodePoolReference `json:"nodePoolRef"`

	// Pool is the settings of the class's pools. Unset fields keep the class's reference NodePool's values;
	// spec.pool and stacks[].pool apply to the default class only.
	Pool *PoolSettings `json:"pool,omitempty"`
}

// NodeClassReference names a cluster-scoped Karpenter NodeClass of any provider.
type NodeClassReference struct {
	// APIVersion of the NodeClass.
	// +kubebuilder:default="karpenter.k8s.aws/v1"
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?/v[0-9a-z]+$`
	APIVersion string `json:"apiVersion,omitempty"`

	// Kind of the NodeClass, e.g. EC2NodeClass or RackspaceSpotNodeClass. Tags apply to EC2NodeClass only.
	// +kubebuilder:default=EC2NodeClass
	// +kubebuilder:validation:Pattern=`^[A-Z][A-Za-z0-9]*NodeClass$`
	Kind string `json:"kind,omitempty"`

	// Name of the reference NodeClass.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// NodePoolReference names a karpenter.sh/v1 NodePool.
type NodePoolReference struct {
	// Name of the reference NodePool.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// PoolSettings are the NodePool fields an organization may set. Unset fields
// keep the reference NodePool's values.
type PoolSettings struct {
	// Limits cap the pool's total resources (cpu, memory, nodes, ...). A key set here replaces the reference's
	// value for that key; other keys of the reference stay.
	Limits map[string]intstr.IntOrString `json:"limits,omitempty"`

	// ExpireAfter is how long a node lives before Karpenter replaces it, e.g. 720h, or Never.
	// +kubebuilder:validation:Pattern=`^(([0-9]+(s|m|h))+|Never)$`
	ExpireAfter string `json:"expireAfter,omitempty"`

	// TerminationGracePeriod is the longest a node drain may take, so PodDisruptionBudgets that never allow an
	// eviction cannot hang a node forever, e.g. 48h.
	// +kubebuilder:validation:Pattern=`^([0-9]+(s|m|h))+$`
	TerminationGracePeriod string `json:"terminationGracePeriod,omitempty"`

	// Disruption is consolidation and disruption budgets, as in a NodePool's spec.disruption.
	Disruption *Disruption `json:"disruption,omitempty"`

	// Weight is the pool's priority among pools that fit a pod.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	Weight *int32 `json:"weight,omitempty"`
}

// Disruption mirrors the NodePool's spec.disruption.
type Disruption struct {
	// ConsolidationPolicy says which nodes Karpenter may consolidate.
	// +kubebuilder:validation:Enum=WhenEmpty;WhenEmptyOrUnderutilized;Balanced
	ConsolidationPolicy string `json:"consolidationPolicy,omitempty"`

	// ConsolidateAfter is how long Karpenter waits before consolidating a node, e.g. 5m, or Never.
	// +kubebuilder:validation:Pattern=`^(([0-9]+(s|m|h))+|Never)$`
	ConsolidateAfter string `json:"consolidateAfter,omitempty"`

	// Budgets replace the reference's budgets when set.
	// +kubebuilder:validation:MaxItems=50
	Budgets []Budget `json:"budgets,omitempty"`
}

// A Budget mirrors one entry of a NodePool's spec.disruption.budgets.
type Budget struct {
	// Nodes is how many nodes may be disrupted at once: a count like 5 or a percentage like 10%.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:Pattern=`^((100|[0-9]{1,2})%|[0-9]+)$`
	Nodes string `json:"nodes"`

	// Schedule is a cron schedule from which the budget is active, for Duration.
	Schedule string `json:"schedule,omitempty"`

	// Duration is how long the budget is active from each Schedule, e.g. 8h or 1h30m.
	// +kubebuilder:validation:Pattern=`^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$`
	Duration string `json:"duration,omitempty"`

	// Reasons are the disruption reasons the budget applies to; unset, all.
	// +kubebuilder:validation:items:Enum=Underutilized;Empty;Drifted;Unhealthy
	Reasons []string `json:"reasons,omitempty"`
}

// XKarpenterIsolationStatus is what a tenant's pods carry and which pools serve them.
type XKarpenterIsolationStatus struct {
	// Pools are the NodePools (and NodeClasses of the same name) kiso renders.
	Pools []PoolStatus `json:"pools,omitempty"`

	// PoolNames lists the pools' names, comma-separated, for kubectl get: a printer column shows only the
	// first value a JSONPath finds, so .status.pools[*].name would show one pool of several.
	PoolNames string `json:"poolNames,omitempty"`

	// Revisions lists the revisions of the reference pair the pools are on, each once, comma-separated, for
	// kubectl get (more than one while a rollout moves the organization's pools).
	Revisions string `json:"revisions,omitempty"`

	// Stacks say, per stack, where its pods land and what they must carry.
	Stacks []StackStatus `json:"stacks,omitempty"`

	// Usage sums what the pools report: the organization's nodes and what
	// they hold, against the sum of its pools' limits.
	Usage *Usage `json:"usage,omitempty"`

	// Classes sums, per class, what its pools report, for kubectl get: the class, its nodes, and its CPUs
	// against the most its pools may hold now, e.g. default(2n,cpu=3/4),gpu(1n,cpu=1/4). Set when the spec names
	// classes.
	Classes string `json:"classes,omitempty"`

	// WarnedPods is, in placement mode Warn, how many pods in the organization's namespaces select none of its
	// pools: the pods Enforce would refuse. Switch to Enforce once it is 0.
	WarnedPods *int32 `json:"warnedPods,omitempty"`

	// WarnedPodsCountedAt is when warnedPods was counted (RFC 3339), and PodsCounted how many pods the
	// organization's namespaces held then. Warn mode counts at each change of a pod up to 1000 pods; above
	// that, once an hour.
	WarnedPodsCountedAt string `json:"warnedPodsCountedAt,omitempty"`
	PodsCounted         *int32 `json:"podsCounted,omitempty"`

	// WarnedPodsUnreadAt is when Warn mode last found the pods of the organization's namespaces more than
	// Crossplane can send the function in one request (RFC 3339): that reconcile failed, so for an hour from then
	// it counts none, keeps warnedPods from the last count that fitted, and then counts again.
	WarnedPodsUnreadAt string `json:"warnedPodsUnreadAt,omitempty"`
}

// Usage is what an organization's pools use in all, as Karpenter counts it.
type Usage struct {
	// Nodes is how many nodes the organization's pools have.
	Nodes int64 `json:"nodes"`

	// Resources sums the pools' resources (cpu, memory).
	Resources map[string]string `json:"resources,omitempty"`

	// Limits sums the pools' limits, for each resource every pool caps; spec.limits, for each resource it
	// bounds.
	Limits map[string]string `json:"limits,omitempty"`
}

// PoolStatus describes one rendered pool and what it uses.
type PoolStatus struct {
	Name      string   `json:"name"`
	NodeClass string   `json:"nodeClass"`
	Stacks    []string `json:"stacks,omitempty"`
	Ready     bool     `json:"ready"`

	// Class is the pool's class (spec.classes); unset for the default class.
	Class string `json:"class,omitempty"`

	// Nodes is how many nodes the pool has, as Karpenter counts them in its
	// NodePool's status.
	Nodes *int64 `json:"nodes,omitempty"`

	// Resources is what the pool's nodes hold in all (cpu, memory), as
	// Karpenter counts it in its NodePool's status.
	Resources map[string]string `json:"resources,omitempty"`

	// Limits cap what the pool's nodes may hold in all: its NodePool's
	// spec.limits. A resource not listed is not capped.
	Limits map[string]string `json:"limits,omitempty"`

	// Reference is the revision of the reference NodeClass and NodePool the pool is rendered from: a hash of
	// the specs kiso clones. It lags the reference's current revision while the pool waits for its rollout wave.
	Reference string `json:"reference,omitempty"`
}

// StackStatus is what a stack's pods need to land on its pool.
type StackStatus struct {
	Name         string            `json:"name"`
	Pool         string            `json:"pool"`
	Namespaces   []string          `json:"namespaces"`
	NodeSelector map[string]string `json:"nodeSelector"`
	Tolerations  []Toleration      `json:"tolerations"`

	// Classes say, in stack isolation, per class the stack has a pool of, what its pods select to run there:
	// the stack's node selector and the class's label; the taints of the class's reference NodePool, if any,
	// they tolerate too. Pool and NodeSelector above are the default class's. In organization isolation every
	// stack has every class (status.pools): its pods add <keyDomain>/class=<class> to NodeSelector.
	Classes []StackClassStatus `json:"classes,omitempty"`
}

// StackClassStatus is what a stack's pods need to land on its pool of one class.
type StackClassStatus struct {
	Name         string            `json:"name"`
	Pool         string            `json:"pool"`
	NodeSelector map[string]string `json:"nodeSelector"`
}

// Toleration is the subset of a core/v1 Toleration kiso hands out.
type Toleration struct {
	Key      string `json:"key"`
	Operator string `json:"operator"`
	Value    string `json:"value"`
	Effect   string `json:"effect"`
}
