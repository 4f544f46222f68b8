package main

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/crossplane/function-sdk-go/errors"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/nodeidentity"
	"github.com/kiso-dev/kiso/functions/internal/placement"
)

// nodeClassGVK is the GroupVersionKind of the NodeClass the spec clones.
func nodeClassGVK(ref v1alpha1.NodeClassReference) schema.GroupVersionKind {
	return schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
}

// isEC2NodeClass reports whether the reference is AWS's EC2NodeClass, the
// only NodeClass with tags.
func isEC2NodeClass(ref v1alpha1.NodeClassReference) bool {
	gvk := nodeClassGVK(ref)
	return gvk.Group == "karpenter.k8s.aws" && gvk.Kind == "EC2NodeClass"
}

// nodeAccount is what an organization's EC2NodeClasses take from its cluster and its node role: the tags the
// cluster gives every EC2 resource, and the organization's dedicated identity, nil for none.
type nodeAccount struct {
	Inherited map[string]string
	Identity  *nodeidentity.Identity
}

// renderNodeClass clones the reference NodeClass's spec whole (fields kiso
// does not know included) for one pool. On an EC2NodeClass it merges the
// cluster's tags and the pool's cost tags into spec.tags (every other tag of
// the reference stays) and, with a dedicated identity, names its instance
// profile instead of the reference's role or profile: Karpenter accepts
// exactly one of the two.
func renderNodeClass(ref *unstructured.Unstructured, p pool, keys placement.Keys, from nodeAccount) (*unstructured.Unstructured, error) {
	gvk, inherited, identity := nodeClassGVK(p.Class.NodeClassRef), from.Inherited, from.Identity
	spec, err := clonedSpec(ref)
	if err != nil {
		return nil, err
	}
	nc := newObject(gvk.GroupVersion().String(), gvk.Kind, p, keys)
	nc.Object["spec"] = spec
	if p.Tags == nil {
		return nc, nil
	}
	tags, _, err := unstructured.NestedStringMap(spec, "tags")
	if err != nil {
		return nil, errors.Wrapf(err, "cannot read spec.tags of %s %q", ref.GetKind(), ref.GetName())
	}
	if tags == nil {
		// A reference without spec.tags still gets the cluster's tags.
		tags = make(map[string]string, len(inherited))
	}
	for k, v := range inherited {
		if _, own := p.Tags[k]; !own {
			tags[k] = v
		}
	}
	// The clone's top level is its own (clonedSpec): tags, role and
	// instanceProfile are set on it directly.
	spec["tags"] = toAnyMap(mergeStringMap(tags, keys.Managed(), p.Tags))
	if identity != nil {
		delete(spec, "role")
		spec["instanceProfile"] = identity.ProfileName
	}
	return nc, nil
}
