package v1alpha1

import "k8s.io/utils/ptr"

// Default sets, on every field still unset, the default its kubebuilder marker declares (the constants of
// zz_generated.schema.go), so a function reads the same spec whether or not an API server defaulted it: a
// cluster XR the isolation function requires, a unit test's XR. An object default ({}) needs nothing here:
// the Go field is a struct value.
func (s *XKarpenterClusterSpec) Default() {
	if s.Partition == "" {
		s.Partition = DefaultXKarpenterClusterSpecPartition
	}
	if s.ProviderConfigName == "" {
		s.ProviderConfigName = DefaultXKarpenterClusterSpecProviderConfigName
	}
	if s.Karpenter.Namespace == "" {
		s.Karpenter.Namespace = DefaultKarpenterInstallNamespace
	}
	if s.Karpenter.ServiceAccount == "" {
		s.Karpenter.ServiceAccount = DefaultKarpenterInstallServiceAccount
	}
	if s.Controller.Identity == "" {
		s.Controller.Identity = DefaultControllerIdentityIdentity
	}
	if s.Interruption.Enabled == nil {
		s.Interruption.Enabled = ptr.To(DefaultInterruptionEnabled)
	}
	if s.Placement.Mode == "" {
		s.Placement.Mode = DefaultClusterPlacementMode
	}
	if s.Monitoring.PrometheusRule == nil {
		s.Monitoring.PrometheusRule = ptr.To(DefaultMonitoringPrometheusRule)
	}
	if s.Rollout != nil && s.Rollout.Soak == "" {
		s.Rollout.Soak = DefaultRolloutSoak
	}
	if s.Rollout != nil && s.Rollout.ProgressDeadline == "" {
		s.Rollout.ProgressDeadline = DefaultRolloutProgressDeadline
	}
	if i := s.Karpenter.Install; i != nil && i.Version == "" {
		i.Version = DefaultChartInstallVersion
	}
	if i := s.Karpenter.Install; i != nil && i.Repository == "" {
		i.Repository = DefaultChartInstallRepository
	}
	for i := range s.References {
		s.References[i].NodeClassRef.Default()
	}
}

// Remote reports whether the cluster is a workload cluster Crossplane reaches through provider-kubernetes, and
// names its ProviderConfig.
func (s *XKarpenterClusterSpec) Remote() (providerConfig string, remote bool) {
	if s.WorkloadCluster == nil {
		return "", false
	}
	return s.WorkloadCluster.ProviderConfigName, true
}

// Default sets, on every field still unset, the default its kubebuilder marker declares; see
// XKarpenterClusterSpec.Default.
func (s *XKarpenterIsolationSpec) Default() {
	if s.Isolation == "" {
		s.Isolation = DefaultXKarpenterIsolationSpecIsolation
	}
	s.NodeClassRef.Default()
	if s.NodeRole == "" {
		s.NodeRole = DefaultXKarpenterIsolationSpecNodeRole
	}
	for i := range s.Classes {
		s.Classes[i].NodeClassRef.Default()
	}
	if s.Placement != nil && s.Placement.Enforce == nil {
		s.Placement.Enforce = ptr.To(DefaultPlacementEnforce)
	}
	if s.Placement != nil && s.Placement.Mode == "" {
		s.Placement.Mode = DefaultPlacementMode
	}
}

// Default sets the NodeClass reference's API version and kind its markers default.
func (r *NodeClassReference) Default() {
	if r.APIVersion == "" {
		r.APIVersion = DefaultNodeClassReferenceAPIVersion
	}
	if r.Kind == "" {
		r.Kind = DefaultNodeClassReferenceKind
	}
}

// Enforced reports whether placement is enforced: Enforce, or its default when the spec has no placement.
func (p *Placement) Enforced() bool {
	if p == nil || p.Enforce == nil {
		return DefaultPlacementEnforce
	}
	return *p.Enforce
}

// Warned reports whether placement is enforced in Warn mode: a pod that does not select the organization's
// pool is admitted with a warning instead of refused.
func (p *Placement) Warned() bool {
	return p.Enforced() && p != nil && p.Mode == PlacementWarn
}
