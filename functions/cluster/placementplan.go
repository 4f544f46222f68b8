package main

import (
	"slices"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/placement"
)

// alwaysPlatformNamespaces hold Kubernetes' own pods.
var alwaysPlatformNamespaces = []string{"kube-system"}

// placementPlan is what the policies need: the keys, and the namespaces whose
// pods are the platform's.
type placementPlan struct {
	Cluster         string
	KeyDomain       string
	OrganizationKey string
	StackKey        string
	// NodeOrganizationKey and NodeStackKey are the node labels pods select,
	// which no kubelet may set on itself.
	NodeOrganizationKey string
	NodeStackKey        string
	PlatformNamespaces  []string
	// Schedulers may bind pods outside platform namespaces.
	Schedulers []string
	// InjectAPIVersion is the MutatingAdmissionPolicy API the apiserver
	// serves, or empty.
	InjectAPIVersion string
	// Mode is the cluster's spec.placement.mode: in Audit, PolicyName only
	// warns outside organizations' namespaces.
	Mode v1alpha1.ClusterPlacementMode
}

// audits reports whether the cluster's placement policy only warns outside organizations' namespaces.
func (pp placementPlan) audits() bool { return pp.Mode == v1alpha1.ClusterPlacementAudit }

// newPlacementPlan plans the policies, checking keys, as require begins; resolve sets the MutatingAdmissionPolicy API once the
// apiserver has said.
func newPlacementPlan(cluster string, spec v1alpha1.XKarpenterClusterSpec, in Input, keys placement.Keys) placementPlan {
	karpenterNamespace := spec.Karpenter.Namespace
	nss := append(append([]string{}, alwaysPlatformNamespaces...), karpenterNamespace)
	nss = append(nss, in.PlatformNamespaces...)
	slices.Sort(nss)
	return placementPlan{
		Cluster:             cluster,
		KeyDomain:           keys.Domain,
		OrganizationKey:     keys.Organization,
		StackKey:            keys.Stack,
		NodeOrganizationKey: keys.NodeOrganization,
		NodeStackKey:        keys.NodeStack,
		PlatformNamespaces:  slices.Compact(nss),
		Schedulers:          in.Schedulers,
		Mode:                spec.Placement.Mode,
	}
}
