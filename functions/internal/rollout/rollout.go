// Package rollout is what both functions must agree on to stage a new
// revision of a reference NodeClass and NodePool across the organizations
// bound to a cluster: what a revision is, how a pool says which one it was
// rendered from, and which wave an organization belongs to. The cluster
// function decides which wave is open; the isolation function moves an
// organization's pools once its wave is.
package rollout

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/crossplane/function-sdk-go/errors"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
)

// Reference is a reference pair: the NodeClass and the NodePool an
// organization's pools clone. A rollout is per pair.
type Reference struct {
	NodeClass    schema.GroupVersionKind
	NodeClassRef string
	NodePool     string
}

// NodePoolGVK is Karpenter's NodePool kind, the only one there is, whatever the provider.
var NodePoolGVK = schema.GroupVersionKind{Group: "karpenter.sh", Version: "v1", Kind: "NodePool"}

// nodePoolKind is NodePoolGVK's kind.
const nodePoolKind = "NodePool"

// String is how a pair reads in annotations and in the cluster's status:
// EC2NodeClass.v1.karpenter.k8s.aws/default,NodePool/default.
func (r Reference) String() string {
	return fmt.Sprintf("%s.%s.%s/%s,%s/%s", r.NodeClass.Kind, r.NodeClass.Version, r.NodeClass.Group, r.NodeClassRef, nodePoolKind, r.NodePool)
}

// ParseReference reads a pair back from its String.
func ParseReference(s string) (Reference, error) {
	nc, np, ok := strings.Cut(s, ",")
	if !ok {
		return Reference{}, errors.Errorf("reference %q is not <NodeClass>,<NodePool>", s)
	}
	kvg, ncName, ok := strings.Cut(nc, "/")
	if !ok || ncName == "" {
		return Reference{}, errors.Errorf("reference %q: %q is not <Kind>.<version>.<group>/<name>", s, nc)
	}
	parts := strings.SplitN(kvg, ".", 3)
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return Reference{}, errors.Errorf("reference %q: %q is not <Kind>.<version>.<group>", s, kvg)
	}
	npName, ok := strings.CutPrefix(np, nodePoolKind+"/")
	if !ok || npName == "" {
		return Reference{}, errors.Errorf("reference %q: %q is not NodePool/<name>", s, np)
	}
	return Reference{NodeClass: schema.GroupVersionKind{Group: parts[2], Version: parts[1], Kind: parts[0]}, NodeClassRef: ncName, NodePool: npName}, nil
}

// ReferenceOf is the pair a class of an organization's spec names.
func ReferenceOf(nodeClass v1alpha1.NodeClassReference, nodePool v1alpha1.NodePoolReference) Reference {
	return Reference{
		NodeClass:    schema.FromAPIVersionAndKind(nodeClass.APIVersion, nodeClass.Kind),
		NodeClassRef: nodeClass.Name,
		NodePool:     nodePool.Name,
	}
}

// revisionLen is how many hex digits of the specs' SHA-256 a revision keeps:
// enough that two revisions of one reference never collide by chance.
const revisionLen = 10

// A Revision is one version of a reference pair: the two specs kiso clones,
// as the apiserver returned them, and what every pool inherits from the
// cluster. Two pairs with the same specs and inheritance are the same
// revision, so reverting a reference returns to the revision it had.
type Revision struct {
	ID        string
	NodeClass map[string]any
	NodePool  map[string]any
	// Inherited is what the cluster's pools inherited at this revision; nil
	// for a snapshot kept before revisions covered it, whose pools are
	// rendered with what the cluster has now, as they were then.
	Inherited *Inherited
}

// Inherited is what every pool of a cluster inherits from the cluster and
// Karpenter hashes into a node's identity: the cluster's tags an EC2NodeClass
// may carry. Being part of a revision, an edit of the cluster's tags is a new
// revision of each reference pair, staged in waves as an edit of the pair is;
// an organization waiting for its wave keeps the tags it has.
type Inherited struct {
	Tags map[string]string `json:"tags,omitempty"`
}

// InheritedFrom is what a cluster's pools inherit from its spec.tags: the
// tags Karpenter's EC2NodeClass allows.
func InheritedFrom(tags map[string]string) Inherited {
	out := Inherited{Tags: make(map[string]string, len(tags))}
	for k, v := range tags {
		if !ReservedTag(k) {
			out.Tags[k] = v
		}
	}
	return out
}

// reservedTagKeys are tag keys Karpenter's EC2NodeClass CRD refuses.
var reservedTagKeys = []string{"eks:eks-cluster-name", "karpenter.sh/nodepool", "karpenter.sh/nodeclaim", "karpenter.k8s.aws/ec2nodeclass"}

// ReservedTag reports whether Karpenter's EC2NodeClass refuses a tag key.
func ReservedTag(k string) bool {
	return slices.Contains(reservedTagKeys, k) || strings.HasPrefix(k, "kubernetes.io/cluster")
}

// Current is the revision of the reference objects as they are now, with
// what the cluster's pools inherit now.
func Current(nodeClass, nodePool *unstructured.Unstructured, inherited Inherited) (Revision, error) {
	nc, _, err := unstructured.NestedMap(nodeClass.Object, "spec")
	if err != nil {
		return Revision{}, errors.Wrapf(err, "cannot read the spec of %s %q", nodeClass.GetKind(), nodeClass.GetName())
	}
	np, _, err := unstructured.NestedMap(nodePool.Object, "spec")
	if err != nil {
		return Revision{}, errors.Wrapf(err, "cannot read the spec of NodePool %q", nodePool.GetName())
	}
	return newRevision(nc, np, &inherited)
}

func newRevision(nc, np map[string]any, inherited *Inherited) (Revision, error) {
	// encoding/json writes map keys sorted: the same specs hash the same.
	// Nothing inherited hashes as before revisions covered it, so a cluster
	// without tags keeps its revisions across the upgrade that added it.
	hashed := []any{nc, np}
	if inherited != nil && len(inherited.Tags) > 0 {
		hashed = append(hashed, inherited)
	}
	b, err := json.Marshal(hashed)
	if err != nil {
		return Revision{}, errors.Wrap(err, "cannot hash the reference's specs")
	}
	sum := sha256.Sum256(b)
	return Revision{ID: hex.EncodeToString(sum[:])[:revisionLen], NodeClass: nc, NodePool: np, Inherited: inherited}, nil
}

// Snapshot keeps a revision's specs, and what its pools inherit, in the cluster's status.
func (r Revision) Snapshot() (v1alpha1.ReferenceSnapshot, error) {
	nc, err := json.Marshal(r.NodeClass)
	if err != nil {
		return v1alpha1.ReferenceSnapshot{}, errors.Wrap(err, "cannot write the NodeClass spec")
	}
	np, err := json.Marshal(r.NodePool)
	if err != nil {
		return v1alpha1.ReferenceSnapshot{}, errors.Wrap(err, "cannot write the NodePool spec")
	}
	s := v1alpha1.ReferenceSnapshot{Revision: r.ID, NodeClass: string(nc), NodePool: string(np)}
	if r.Inherited != nil {
		in, err := json.Marshal(r.Inherited)
		if err != nil {
			return v1alpha1.ReferenceSnapshot{}, errors.Wrap(err, "cannot write what the pools inherit")
		}
		s.Inherited = string(in)
	}
	return s, nil
}

// FromSnapshot reads a revision back from the cluster's status. A snapshot
// whose specs do not hash to its revision is refused: rendering a pool from
// it would claim a revision it is not.
func FromSnapshot(s v1alpha1.ReferenceSnapshot) (Revision, error) {
	var nc, np map[string]any
	if err := json.Unmarshal([]byte(s.NodeClass), &nc); err != nil {
		return Revision{}, errors.Wrapf(err, "cannot read the NodeClass spec of snapshot %s", s.Revision)
	}
	if err := json.Unmarshal([]byte(s.NodePool), &np); err != nil {
		return Revision{}, errors.Wrapf(err, "cannot read the NodePool spec of snapshot %s", s.Revision)
	}
	var inherited *Inherited
	if s.Inherited != "" {
		inherited = &Inherited{}
		if err := json.Unmarshal([]byte(s.Inherited), inherited); err != nil {
			return Revision{}, errors.Wrapf(err, "cannot read what the pools of snapshot %s inherit", s.Revision)
		}
	}
	r, err := newRevision(nc, np, inherited)
	if err != nil {
		return Revision{}, err
	}
	if r.ID != s.Revision {
		return Revision{}, errors.Errorf("snapshot %s holds revision %s", s.Revision, r.ID)
	}
	return r, nil
}

// Objects returns the revision as reference objects to clone: the named
// objects with the revision's specs.
func (r Revision) Objects(ref Reference) (nodeClass, nodePool *unstructured.Unstructured) {
	nodeClass = &unstructured.Unstructured{Object: map[string]any{"spec": r.NodeClass}}
	nodeClass.SetGroupVersionKind(ref.NodeClass)
	nodeClass.SetName(ref.NodeClassRef)
	nodePool = &unstructured.Unstructured{Object: map[string]any{"spec": r.NodePool}}
	nodePool.SetGroupVersionKind(NodePoolGVK)
	nodePool.SetName(ref.NodePool)
	return nodeClass, nodePool
}

// WaveOf is the index of the wave an organization moves in: the wave that
// names it, else the first percentage wave its bucket falls under, else
// len(waves), the implicit last wave of everyone else.
func WaveOf(organization string, waves []v1alpha1.Wave) int {
	for i, w := range waves {
		for _, o := range w.Organizations {
			if o == organization {
				return i
			}
		}
	}
	b := Bucket(organization)
	for i, w := range waves {
		if w.Percent != nil && b < int(*w.Percent) {
			return i
		}
	}
	return len(waves)
}

// Bucket places an organization in [0, 100) by a hash of its name, so that a
// percentage wave's members never change between reconciles or replicas.
func Bucket(organization string) int {
	sum := sha256.Sum256([]byte(organization))
	return int(binary.BigEndian.Uint64(sum[:8]) % 100)
}

// Find returns the rollout state of a reference in a cluster's status, or nil.
func Find(rollouts []v1alpha1.ReferenceRollout, ref string) *v1alpha1.ReferenceRollout {
	for i := range rollouts {
		if rollouts[i].Reference == ref {
			return &rollouts[i]
		}
	}
	return nil
}
