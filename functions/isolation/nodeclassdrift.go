package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/kiso-dev/kiso/functions/internal/placement"
)

// A NodeClass change replaces a pool's nodes, whatever the provider, and a
// rollout wave waits for it. Karpenter replaces a node when its NodePool's
// template changes (static drift: the NodeClaim's karpenter.sh/nodepool-hash
// differs from the NodePool's), but whether a NodeClass change drifts a node
// is up to the provider: AWS compares a hash of the EC2NodeClass, KWOK never
// drifts. So kiso puts a hash of the pool's NodeClass spec, as it renders it,
// on the pool's node template: a change of the reference NodeClass, or of
// what the organization sets there (tags, node role), is a template change,
// Karpenter replaces the nodes, and the cluster's rollout sees them launched
// from an older template until they are.
//
// A pool composed before this mark existed has no mark: adding one to every
// pool at once would replace every node of the fleet on upgrade. Such a pool
// records the hash it was on when first seen (NodeClassBaseline, on the
// NodePool's own metadata, which Karpenter does not hash) and takes the mark
// only once its NodeClass differs from that.

// nodeClassHashLen is how many hex digits of the spec's SHA-256 the mark keeps.
const nodeClassHashLen = 16

// nodeClassHash is the mark of a NodeClass spec.
func nodeClassHash(nodeClass *unstructured.Unstructured) (string, error) {
	// encoding/json writes map keys sorted: the same spec hashes the same.
	b, err := json.Marshal(nodeClass.Object["spec"])
	if err != nil {
		return "", errors.Wrapf(err, "cannot hash the spec of %s %q", nodeClass.GetKind(), nodeClass.GetName())
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:nodeClassHashLen], nil
}

// markNodeClass puts the mark of the pool's rendered NodeClass on its
// rendered NodePool, given the pool's observed NodePool (nil if not composed
// yet).
func markNodeClass(np, observed, nodeClass *unstructured.Unstructured, keys placement.Keys) error {
	a := placement.NewRolloutAnnotations(keys.Domain)
	hash, err := nodeClassHash(nodeClass)
	if err != nil {
		return err
	}
	mark := func() error {
		// The spec shares what it did not change with the reference (and every pool cloned from it): write a copy.
		spec, ok := np.Object["spec"].(map[string]any)
		if !ok {
			return errors.Errorf("NodePool %q has no spec", np.GetName())
		}
		w := newWriter(spec)
		w.set(hash, "template", "metadata", "annotations", a.NodeClass)
		return errors.Wrapf(w.err, "cannot mark NodePool %q with its NodeClass", np.GetName())
	}
	if observed == nil {
		return mark()
	}
	if _, marked, _ := unstructured.NestedString(observed.Object, "spec", "template", "metadata", "annotations", a.NodeClass); marked {
		return mark()
	}
	baseline, known := observed.GetAnnotations()[a.NodeClassBaseline]
	if !known {
		baseline = hash
	}
	an := np.GetAnnotations()
	if an == nil {
		an = map[string]string{}
	}
	an[a.NodeClassBaseline] = baseline
	np.SetAnnotations(an)
	if baseline != hash {
		return mark()
	}
	return nil
}

// observedNodePool is a pool's observed NodePool, nil if not composed yet.
func observedNodePool(oc resource.ObservedComposed, ok bool) *unstructured.Unstructured {
	if !ok || oc.Resource == nil {
		return nil
	}
	return &oc.Resource.Unstructured
}
