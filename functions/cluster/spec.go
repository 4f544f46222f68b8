package main

import (
	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/aws"
	"github.com/kiso-dev/kiso/functions/internal/fnstate"
	"github.com/kiso-dev/kiso/functions/internal/names"
)

// decodeSpec reads the XR's spec and applies the defaults the XRD declares,
// so the function behaves the same whether or not the API server defaulted it.
func decodeSpec(xr *resource.Composite) (v1alpha1.XKarpenterClusterSpec, error) {
	spec := v1alpha1.XKarpenterClusterSpec{}
	if err := fnstate.Decode(xr.Resource.Object, "spec", &spec); err != nil {
		return spec, errors.Wrap(err, "cannot read the XR")
	}
	spec.Default()
	return spec, nil
}

// plan is everything derived from a valid, defaulted spec: AWS names and
// ARNs, what to render, the tags. Every renderer reads it; none recomputes.
type plan struct {
	Spec v1alpha1.XKarpenterClusterSpec

	Partition v1alpha1.Partition
	Cluster   string
	Region    string
	Account   string

	ControllerRoleName string
	ControllerRoleARN  string
	// ControllerRoleResource is the Kubernetes name of the controller's Role
	// managed resource.
	ControllerRoleResource string

	// CreateNodeRole is false with an existing instance profile.
	CreateNodeRole      bool
	NodeRoleName        string
	NodeRoleARN         string
	InstanceProfileName string
	// NodeRolePath is the IAM path of per-organization node roles
	// (<iamPath>organizations/), "" when the cluster uses an existing
	// instance profile.
	NodeRolePath      string
	PassRoleResources aws.Values

	Interruption bool
	QueueName    string
	QueueARN     string

	PodIdentity    bool
	PrometheusRule bool

	// Tags go on every AWS resource that takes tags.
	Tags map[string]*string

	// NamePrefix starts every AWS name kiso gives; IAMPath is the path of
	// the cluster's roles, policies and instance profile.
	NamePrefix string
	IAMPath    string
	// TakeOver: the names are those of AWS's getting-started template, and
	// nothing is ever deleted from AWS.
	TakeOver bool
	names    awsNames

	// objectBase starts every composed object's Kubernetes name.
	objectBase string
}

// newPlan derives the plan from a valid, defaulted spec.
func newPlan(spec v1alpha1.XKarpenterClusterSpec) plan {
	p := plan{
		Spec:           spec,
		Partition:      spec.Partition,
		Cluster:        spec.ClusterName,
		Region:         spec.Region,
		Account:        spec.AccountID,
		Interruption:   *spec.Interruption.Enabled,
		PodIdentity:    spec.Controller.Identity == v1alpha1.IdentityPodIdentity,
		PrometheusRule: *spec.Monitoring.PrometheusRule,
		Tags:           awsTags(spec),
		objectBase:     names.Lower(spec.ClusterName),
	}
	p.nameAWSObjects(spec.Naming, spec.NodeRole.ExistingInstanceProfile)
	p.PassRoleResources = passRoleResources(p)
	return p
}
