package main

import (
	"slices"
	"strings"

	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/names"
	"github.com/kiso-dev/kiso/functions/internal/nodeidentity"
	"github.com/kiso-dev/kiso/functions/internal/ownership"
	"github.com/kiso-dev/kiso/functions/internal/placement"
	"github.com/kiso-dev/kiso/functions/internal/typed"
)

// maxRoleName is IAM's limit on role and instance profile names.
const maxRoleName = 64

// dedicatedIdentity is an organization's own node identity: a role (and
// instance profile of the same name) under the cluster's node-role path,
// which the controller's iam:PassRole already covers, bounded by the
// cluster's permissions boundary. IAM names are unique per account, so the
// name starts with the cluster's prefix: <prefix>-org-<organization>-node,
// which no name of the cluster's own (<prefix>-karpenter-...) can be.
func dedicatedIdentity(spec v1alpha1.XKarpenterIsolationSpec, c *boundCluster, tags map[string]string, keys placement.Keys) nodeidentity.Identity {
	name := names.Join(maxRoleName, c.Status.NamePrefix, "org", spec.Organization, "node")
	awsTags := make(map[string]*string, len(tags))
	for k, v := range tags {
		awsTags[k] = &v
	}
	return nodeidentity.Identity{
		ObjectName:          names.Join(names.MaxLabelValue, poolName(spec.Organization, "", ""), "node"),
		RoleName:            name,
		ProfileName:         name,
		Path:                c.Status.NodeRolePath,
		PermissionsBoundary: c.Spec.PermissionsBoundary,
		Partition:           c.Spec.Partition,
		Region:              c.Spec.Region,
		ClusterName:         c.Spec.ClusterName,
		ProviderConfigName:  c.Spec.ProviderConfigName,
		Tags:                awsTags,
		Labels:              map[string]string{placement.ManagedByLabel: placement.ManagedByValue, keys.Organization: spec.Organization},
	}
}

// organizationTags are the cost tags of an organization's IAM resources:
// the cluster's, the organization's own, and its identity.
func organizationTags(spec v1alpha1.XKarpenterIsolationSpec, c *boundCluster, keys placement.Keys) map[string]string {
	out := map[string]string{}
	for k, v := range c.Spec.Tags {
		out[k] = v
	}
	for k, v := range spec.Tags {
		out[k] = v
	}
	out[keys.Organization] = spec.Organization
	if spec.Customer != "" {
		out[keys.Customer] = spec.Customer
	}
	return out
}

// identityObjects converts an identity's managed resources for composing,
// each annotated with the instance profile's name: the cluster's deletion
// policy keeps every one of them while an EC2NodeClass names that profile,
// and so until its last node is gone (Karpenter keeps an EC2NodeClass while
// NodeClaims refer to it).
func identityObjects(id nodeidentity.Identity, keys placement.Keys) (map[resource.Name]*composed.Unstructured, error) {
	out := map[resource.Name]*composed.Unstructured{}
	for name, o := range id.Objects() {
		cd, err := typed.Composed(o)
		if err != nil {
			return nil, errors.Wrapf(err, "cannot convert %s", name)
		}
		annotations := cd.GetAnnotations()
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[keys.InstanceProfile] = id.ProfileName
		cd.SetAnnotations(annotations)
		out[name] = cd
	}
	return out, nil
}

// plannedIdentity lists a Dedicated identity's objects. Their Kubernetes
// names depend on the organization only, so they are known before the
// cluster is fetched.
func plannedIdentity(spec v1alpha1.XKarpenterIsolationSpec) []ownership.Object {
	if spec.NodeRole != v1alpha1.NodeRoleDedicated {
		return nil
	}
	keys := placement.NewKeys(DefaultKeyDomain)
	objects, err := identityObjects(dedicatedIdentity(spec, &boundCluster{}, nil, keys), keys)
	if err != nil {
		// The objects are typed and registered in the scheme; converting
		// them cannot fail.
		panic(err)
	}
	out := make([]ownership.Object, 0, len(objects))
	for name, o := range objects {
		out = append(out, ownership.Object{Resource: name, GVK: o.GetObjectKind().GroupVersionKind(), Name: o.GetName()})
	}
	slices.SortFunc(out, func(a, b ownership.Object) int { return strings.Compare(string(a.Resource), string(b.Resource)) })
	return out
}

// renderIdentity adds a Dedicated organization's node identity to objects, once its cluster is found, and
// returns it for the NodeClasses to name; nil for a Shared one.
func (r *call) renderIdentity(objects map[resource.Name]*composed.Unstructured) (*nodeidentity.Identity, error) {
	c := r.found.Cluster
	if c == nil || r.Spec.NodeRole != v1alpha1.NodeRoleDedicated {
		return nil, nil
	}
	id := dedicatedIdentity(r.Spec, c, organizationTags(r.Spec, c, r.keys), r.keys)
	ios, err := identityObjects(id, r.keys)
	if err != nil {
		return nil, err
	}
	for name, o := range ios {
		objects[name] = o
	}
	return &id, nil
}
