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

// XKarpenterIsolationSpec is one organization's request for dedicated
// Karpenter capacity. It is the single source of truth for every pool the
// organization gets: stacks are listed here, never configured elsewhere.
type XKarpenterIsolationSpec struct {
	// Organization is the pool identity: it names pools and is the value of
	// the organization node label and taint.
	Organization string `json:"organization"`

	// Customer is a cost identity: a tag and a node label, never a taint.
	Customer string `json:"customer,omitempty"`

	// Isolation is organization (one shared pool) or stack (one pool per stack).
	Isolation IsolationMode `json:"isolation,omitempty"`

	// Stacks are the organization's stacks and the namespaces their pods run in.
	Stacks []Stack `json:"stacks,omitempty"`

	// NodeClassRef names the cluster-scoped reference NodeClass to clone.
	NodeClassRef NodeClassReference `json:"nodeClassRef"`

	// NodePoolRef names the reference NodePool to clone.
	NodePoolRef NodePoolReference `json:"nodePoolRef"`

	// Pool is what the organization may set on each of its pools.
	Pool *PoolSettings `json:"pool,omitempty"`

	// Tags are extra cost-allocation tags for the organization's AWS resources.
	Tags map[string]string `json:"tags,omitempty"`

	// Placement says how the organization's pods are kept on its pools.
	Placement *Placement `json:"placement,omitempty"`

	// ClusterRef names the XKarpenterCluster whose Karpenter runs the
	// organization's pools: its account, partition, node-role path,
	// permissions boundary and tags apply to the organization.
	ClusterRef *ClusterReference `json:"clusterRef,omitempty"`

	// NodeRole is Shared (the NodeClass keeps the reference's node identity)
	// or Dedicated (an IAM role and instance profile of the organization's
	// own, so its nodes can be granted its own ECR repositories or KMS keys
	// and nothing else). Dedicated needs clusterRef and an EC2NodeClass.
	NodeRole NodeRoleMode `json:"nodeRole,omitempty"`
}

// ClusterReference names an XKarpenterCluster.
type ClusterReference struct {
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
type Placement struct {
	// Enforce makes the cluster's admission policies refuse a pod in the
	// organization's namespaces unless it selects its own pool. Pods elsewhere
	// are kept off the organization's nodes whatever it says. Default true.
	Enforce *bool `json:"enforce,omitempty"`

	// Inject makes the cluster's MutatingAdmissionPolicy add the node
	// selector and tolerations the organization's pods lack, where the
	// apiserver serves one (condition PlacementInjected says).
	Inject bool `json:"inject,omitempty"`
}

// A Stack is one of the organization's workloads.
type Stack struct {
	// Name is unique within the organization.
	Name string `json:"name"`

	// Namespaces its pods run in; default <organization>-<name>.
	Namespaces []string `json:"namespaces,omitempty"`

	// Pool overrides spec.pool for this stack's own pool (stack isolation only).
	Pool *PoolSettings `json:"pool,omitempty"`
}

// NodeClassReference names a cluster-scoped Karpenter NodeClass of any provider.
type NodeClassReference struct {
	// APIVersion of the NodeClass; default karpenter.k8s.aws/v1.
	APIVersion string `json:"apiVersion,omitempty"`

	// Kind of the NodeClass; default EC2NodeClass.
	Kind string `json:"kind,omitempty"`

	// Name of the reference NodeClass.
	Name string `json:"name"`
}

// NodePoolReference names a karpenter.sh/v1 NodePool.
type NodePoolReference struct {
	// Name of the reference NodePool.
	Name string `json:"name"`
}

// PoolSettings are the NodePool fields an organization may set. Unset fields
// keep the reference NodePool's values.
type PoolSettings struct {
	// Limits cap the pool's total resources; keys set here replace the
	// reference's value for that key, other keys of the reference stay.
	Limits map[string]intstr.IntOrString `json:"limits,omitempty"`

	// ExpireAfter is how long a node lives before Karpenter replaces it.
	ExpireAfter string `json:"expireAfter,omitempty"`

	// TerminationGracePeriod bounds a node's drain, so PodDisruptionBudgets
	// that never allow an eviction cannot hang it forever.
	TerminationGracePeriod string `json:"terminationGracePeriod,omitempty"`

	// Disruption sets consolidation and disruption budgets.
	Disruption *Disruption `json:"disruption,omitempty"`

	// Weight orders this pool among pools that fit a pod.
	Weight *int32 `json:"weight,omitempty"`
}

// Disruption mirrors the NodePool's spec.disruption.
type Disruption struct {
	ConsolidationPolicy string   `json:"consolidationPolicy,omitempty"`
	ConsolidateAfter    string   `json:"consolidateAfter,omitempty"`
	Budgets             []Budget `json:"budgets,omitempty"`
}

// A Budget mirrors one entry of a NodePool's spec.disruption.budgets.
type Budget struct {
	Nodes    string   `json:"nodes"`
	Schedule string   `json:"schedule,omitempty"`
	Duration string   `json:"duration,omitempty"`
	Reasons  []string `json:"reasons,omitempty"`
}

// XKarpenterIsolationStatus tells a tenant what its pods must carry and which
// pools serve them.
type XKarpenterIsolationStatus struct {
	// Pools are the NodePools (and NodeClasses of the same name) kiso renders.
	Pools []PoolStatus `json:"pools,omitempty"`

	// Stacks say, per stack, where its pods land and what they must carry.
	Stacks []StackStatus `json:"stacks,omitempty"`

	// Usage sums what the pools report: the organization's nodes and what
	// they hold, against the sum of its pools' limits.
	Usage *Usage `json:"usage,omitempty"`
}

// Usage is what an organization's pools use in all, as Karpenter counts it.
type Usage struct {
	// Nodes is how many nodes the organization's pools have.
	Nodes int64 `json:"nodes"`

	// Resources sums the pools' resources (cpu, memory).
	Resources map[string]string `json:"resources,omitempty"`

	// Limits sums the pools' limits, for each resource every pool caps.
	Limits map[string]string `json:"limits,omitempty"`
}

// PoolStatus describes one rendered pool and what it uses.
type PoolStatus struct {
	Name      string   `json:"name"`
	NodeClass string   `json:"nodeClass"`
	Stacks    []string `json:"stacks,omitempty"`
	Ready     bool     `json:"ready"`

	// Nodes is how many nodes the pool has, as Karpenter counts them in its
	// NodePool's status.
	Nodes *int64 `json:"nodes,omitempty"`

	// Resources is what the pool's nodes hold in all (cpu, memory), as
	// Karpenter counts it in its NodePool's status.
	Resources map[string]string `json:"resources,omitempty"`

	// Limits cap what the pool's nodes may hold in all: its NodePool's
	// spec.limits. A resource not listed is not capped.
	Limits map[string]string `json:"limits,omitempty"`
}

// StackStatus is what a stack's pods need to land on its pool.
type StackStatus struct {
	Name         string            `json:"name"`
	Pool         string            `json:"pool"`
	Namespaces   []string          `json:"namespaces"`
	NodeSelector map[string]string `json:"nodeSelector"`
	Tolerations  []Toleration      `json:"tolerations"`
}

// Toleration is the subset of a core/v1 Toleration kiso hands out.
type Toleration struct {
	Key      string `json:"key"`
	Operator string `json:"operator"`
	Value    string `json:"value"`
	Effect   string `json:"effect"`
}
