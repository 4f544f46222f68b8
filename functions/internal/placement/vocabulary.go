package placement

// The label and annotation keys of kiso's that are not placement keys live here too, so that every key kiso
// writes on an object has one home: Keys (placement.go) for what the admission policies read, these for the rest.

// ManagedByLabel, set to ManagedByValue, marks every object kiso composes;
// the same key tags every AWS resource kiso creates.
const (
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedByValue = "kiso"
)

// RolloutAnnotations are the annotations kiso sets on every pool's NodeClass and NodePool, under the
// function input's key domain. The cluster function reads them to tell how
// far a rollout got; they are never read to decide what to render.
type RolloutAnnotations struct {
	// Cluster names the XKarpenterCluster the organization is bound to.
	Cluster string
	// Reference names the reference pair the pool is cloned from (rollout.Reference.String).
	Reference string
	// Revision is the revision of that pair the pool is rendered from.
	Revision string
	// NodeClass, on a NodePool's node template, is a hash of the reference
	// NodeClass spec the pool's NodeClass is cloned from: Karpenter hashes
	// the template, so a NodeClass change drifts the pool's nodes for every
	// provider (see rollout.NodeClassMark).
	NodeClass string
	// NodeClassBaseline, on a NodePool, is the NodeClass hash a pool composed
	// before NodeClass marks existed was on when first seen.
	NodeClassBaseline string
}

// NewRolloutAnnotations returns the annotation keys under a key domain.
func NewRolloutAnnotations(domain string) RolloutAnnotations {
	return RolloutAnnotations{
		Cluster:           domain + "/cluster",
		Reference:         domain + "/cloned-from",
		Revision:          domain + "/revision",
		NodeClass:         domain + "/nodeclass",
		NodeClassBaseline: domain + "/nodeclass-baseline",
	}
}
