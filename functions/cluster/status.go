package main

import (
	"github.com/kiso-dev/kiso/apis/v1alpha1"
)

// irsaRoleAnnotation is the service account annotation EKS's pod identity
// webhook reads in IRSA mode.
const irsaRoleAnnotation = "eks.amazonaws.com/role-arn"

// buildStatus is what Karpenter's Helm chart and the isolation function
// need. Every value is known from the spec, so it is set from the first
// reconcile; the XR's Ready condition says when AWS has caught up.
func buildStatus(p plan) v1alpha1.XKarpenterClusterStatus {
	st := v1alpha1.XKarpenterClusterStatus{
		Helm: &v1alpha1.HelmValues{Settings: v1alpha1.HelmSettings{
			ClusterName:       p.Cluster,
			InterruptionQueue: p.QueueName,
		}},
		ControllerRoleARN:      p.ControllerRoleARN,
		ControllerRoleResource: p.ControllerRoleResource,
		NodeRoleName:           p.NodeRoleName,
		NodeRoleARN:            p.NodeRoleARN,
		InstanceProfileName:    p.InstanceProfileName,
		NodeRolePath:           p.NodeRolePath,
		QueueName:              p.QueueName,
		NamePrefix:             p.NamePrefix,
	}
	if p.Spec.Karpenter.Install != nil {
		st.KarpenterReleaseResource = p.releaseName()
	}
	if !p.PodIdentity {
		st.Helm.ServiceAccount = &v1alpha1.HelmServiceAccount{Annotations: map[string]string{irsaRoleAnnotation: p.ControllerRoleARN}}
	}
	return st
}
