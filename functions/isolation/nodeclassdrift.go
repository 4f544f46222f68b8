package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/kiso-dev/kiso/functions/internal/fnstate"
	"github.com/kiso-dev/kiso/functions/internal/placement"
	"github.com/kiso-dev/kiso/functions/internal/remote"
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
//
// The mark never runs ahead of the NodeClass: a node launched from the old
// NodeClass under the new mark would never be replaced. The NodeClass carries
// its own hash (the same annotation, on its metadata, which no provider
// hashes), and the pool's mark is the hash its NodeClass carries where
// Karpenter reads it: as observed, or in a workload cluster as the provider
// last observed it there. A NodeClass change reaches the mark in the
// reconcile after it is applied; one never applied (refused, or not yet
// observed there) never moves it.

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

// appliedNodeClass is what a pool's NodeClass says of itself where Karpenter reads it.
type appliedNodeClass struct {
	// Composed is true once the NodeClass is composed (a new pool's is created with its NodePool).
	Composed bool
	// Hash is the mark it carries there; "" when it carries none (composed before NodeClasses were marked)
	// or the provider has not observed it in the workload cluster yet.
	Hash string
}

// nodeClassApplied reads a pool's NodeClass from what Crossplane observed: itself, or the Object holding it.
func nodeClassApplied(observed fnstate.Observed, name resource.Name, keys placement.Keys) appliedNodeClass {
	oc, ok := observed.Get(name)
	if !ok || oc.Resource == nil {
		return appliedNodeClass{}
	}
	out := appliedNodeClass{Composed: true}
	if there, ok := remote.WhereItRuns(oc.Resource); ok {
		out.Hash = there.GetAnnotations()[placement.NewRolloutAnnotations(keys.Domain).NodeClass]
	}
	return out
}

// markNodeClass marks the pool's rendered NodeClass with the hash of its
// spec, and its rendered NodePool's node template with the hash of the
// NodeClass in force (see above), given the pool's observed NodePool (nil if
// not composed yet).
//
// While the mark lags the rendered NodeClass, the NodePool keeps the revision
// it was observed on: its revision annotation says which revision the nodes
// Karpenter launches from it are on, and until the mark moves they are the
// old NodeClass's. Were it to move first, the cluster's rollout would see the
// pool on the new revision with nothing drifted, and judge its wave done
// before Karpenter had a template to replace a node for.
func markNodeClass(np, observed, nodeClass *unstructured.Unstructured, applied appliedNodeClass, keys placement.Keys) error {
	a := placement.NewRolloutAnnotations(keys.Domain)
	hash, err := nodeClassHash(nodeClass)
	if err != nil {
		return err
	}

	setAnnotation(nodeClass, a.NodeClass, hash)
	current, marked := "", false
	baseline, known := "", false
	if observed != nil {
		current, marked, _ = unstructured.NestedString(observed.Object, "spec", "template", "metadata", "annotations", a.NodeClass)
		baseline, known = observed.GetAnnotations()[a.NodeClassBaseline]
	}
	// The hash of the NodeClass in force: the rendered one's only for a NodeClass created with its pool.
	in := hash
	switch {
	case !applied.Composed:
	case applied.Hash != "":
		in = applied.Hash
	case marked:
		in = current
	case known:
		in = baseline
	}
	if observed != nil && in != hash {
		keepObservedRevision(np, observed, a)
	}
	mark := func() error {
		// The spec shares what it did not change with the reference (and every pool cloned from it): write a copy.
		spec, ok := np.Object["spec"].(map[string]any)
		if !ok {
			return errors.Errorf("NodePool %q has no spec", np.GetName())
		}
		w := newWriter(spec)
		w.set(in, "template", "metadata", "annotations", a.NodeClass)
		return errors.Wrapf(w.err, "cannot mark NodePool %q with its NodeClass", np.GetName())
	}
	if observed == nil || marked {
		return mark()
	}
	if !known {
		baseline = in
	}
	setAnnotation(np, a.NodeClassBaseline, baseline)
	if baseline != in {
		return mark()
	}
	return nil
}

// keepObservedRevision sets a rendered NodePool's revision annotation back to the observed NodePool's, where it
// has one.
func keepObservedRevision(np, observed *unstructured.Unstructured, a placement.RolloutAnnotations) {
	if rev, ok := observed.GetAnnotations()[a.Revision]; ok {
		setAnnotation(np, a.Revision, rev)
	}
}

// setAnnotation sets one annotation of a rendered object.
func setAnnotation(u *unstructured.Unstructured, key, value string) {
	an := u.GetAnnotations()
	if an == nil {
		an = map[string]string{}
	}
	an[key] = value
	u.SetAnnotations(an)
}

// observedNodePool is a pool's observed NodePool, nil if not composed yet.
func observedNodePool(oc resource.ObservedComposed, ok bool) *unstructured.Unstructured {
	if !ok || oc.Resource == nil {
		return nil
	}
	return &oc.Resource.Unstructured
}
