package main

import (
	"encoding/json"

	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/resource"

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
		ControllerRoleARN:   p.ControllerRoleARN,
		NodeRoleName:        p.NodeRoleName,
		NodeRoleARN:         p.NodeRoleARN,
		InstanceProfileName: p.InstanceProfileName,
		NodeRolePath:        p.NodeRolePath,
		QueueName:           p.QueueName,
	}
	if !p.PodIdentity {
		st.Helm.ServiceAccount = &v1alpha1.HelmServiceAccount{Annotations: map[string]string{irsaRoleAnnotation: p.ControllerRoleARN}}
	}
	return st
}

// setStatus writes the status into the desired XR.
func setStatus(xr *resource.Composite, st v1alpha1.XKarpenterClusterStatus) error {
	b, err := json.Marshal(st)
	if err != nil {
		return errors.Wrap(err, "cannot encode status")
	}
	fields := map[string]any{}
	if err := json.Unmarshal(b, &fields); err != nil {
		return errors.Wrap(err, "cannot decode status")
	}
	for k, v := range fields {
		if err := xr.Resource.SetValue("status."+k, v); err != nil {
			return errors.Wrapf(err, "cannot set status.%s", k)
		}
	}
	return nil
}
