package main

import (
	"k8s.io/utils/ptr"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/placement"
)

// tagCluster is kiso's tag, besides its managed-by key (placement.ManagedByLabel, as on Kubernetes objects),
// on every AWS resource it creates: a cost report or a boundary can find kiso's resources, and those of one
// cluster.
const tagCluster = "kiso.dev/cluster"

// reservedTagKeys are set by kiso, or by provider-aws on every resource it
// creates; a user tag with one of these keys would be overwritten.
var reservedTagKeys = []string{tagCluster, placement.ManagedByLabel, "crossplane-kind", "crossplane-name", "crossplane-providerconfig"}

// maxUserTags is what spec.tags may hold: AWS allows 50 tags per IAM, SQS,
// EventBridge and EKS resource; kiso adds two and provider-aws three
// (crossplane-kind, -name, -providerconfig).
const maxUserTags = v1alpha1.MaxPropertiesXKarpenterClusterSpecTags

// awsTags are the user's tags plus kiso's.
func awsTags(spec v1alpha1.XKarpenterClusterSpec) map[string]*string {
	out := make(map[string]*string, len(spec.Tags)+2)
	for k, v := range spec.Tags {
		out[k] = ptr.To(v)
	}
	out[tagCluster] = ptr.To(spec.ClusterName)
	out[placement.ManagedByLabel] = ptr.To(placement.ManagedByValue)
	return out
}
