package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// XKarpenterCluster kind.
const ClusterKind = "XKarpenterCluster"

// Partition is an AWS partition: it decides ARNs and some service principals.
type Partition string

// AWS partitions kiso renders for.
const (
	PartitionAWS      Partition = "aws"
	PartitionChina    Partition = "aws-cn"
	PartitionGovCloud Partition = "aws-us-gov"
)

// IdentityMode is how Karpenter's controller pods get AWS credentials.
type IdentityMode string

// Identity modes.
const (
	// IdentityPodIdentity uses an EKS Pod Identity association (the default,
	// as in Karpenter's getting-started guide).
	IdentityPodIdentity IdentityMode = "PodIdentity"
	// IdentityIRSA uses IAM roles for service accounts: the role trusts the
	// cluster's OIDC provider.
	IdentityIRSA IdentityMode = "IRSA"
)

// XKarpenterClusterSpec is Karpenter's AWS prerequisites for one EKS cluster, as AWS's getting-started
// CloudFormation template for Karpenter 1.15 makes them.
//
// +kubebuilder:validation:XValidation:rule="size(self.clusterName) <= {{MaxQueueNameLength}} || (has(self.interruption) && has(self.interruption.enabled) && !self.interruption.enabled) || !has(self.naming) || !has(self.naming.takeOver) || self.naming.takeOver != 'AWSGettingStarted'",message="must be at most {{MaxQueueNameLength}} characters while spec.interruption.enabled is true and spec.naming.takeOver is AWSGettingStarted: AWS's template names the interruption queue after the cluster, and SQS refuses longer queue names",fieldPath=".clusterName"
// +kubebuilder:validation:XValidation:rule="!has(self.controller) || !has(self.controller.identity) || self.controller.identity != 'IRSA' || has(self.controller.oidcProviderArn)",message="IRSA trusts the cluster's IAM OIDC provider; set spec.controller.oidcProviderArn",fieldPath=".controller.oidcProviderArn"
type XKarpenterClusterSpec struct {
	// ClusterName is the EKS cluster's name. It scopes the controller's policy and starts the default name
	// prefix (kiso-<clusterName>) of the AWS resources kiso creates.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=100
	// +kubebuilder:validation:Pattern=`^[0-9A-Za-z][A-Za-z0-9_-]*$`
	ClusterName string `json:"clusterName"`

	// Region is the cluster's AWS region, e.g. eu-west-3. It must be in spec.partition.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:Pattern=`^[a-z]{2}(-[a-z]+)+-[0-9]+$`
	Region string `json:"region"`

	// AccountID is the cluster's 12-digit AWS account ID.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:Pattern=`^[0-9]{12}$`
	AccountID string `json:"accountId"`

	// Partition is the AWS partition; ARNs and service principals follow it.
	// +kubebuilder:validation:Enum=aws;aws-cn;aws-us-gov
	// +kubebuilder:default=aws
	Partition Partition `json:"partition,omitempty"`

	// ProviderConfigName is the provider-aws ProviderConfig every managed resource uses.
	// +kubebuilder:default=default
	// +kubebuilder:validation:MaxLength=253
	ProviderConfigName string `json:"providerConfigName,omitempty"`

	// Tags go on every AWS resource kiso creates. kiso adds kiso.dev/cluster=<clusterName> and
	// app.kubernetes.io/managed-by=kiso; provider-aws adds crossplane-kind, crossplane-name and
	// crossplane-providerconfig. AWS allows 50 in all, of at most 256 characters each.
	// +kubebuilder:validation:MaxProperties=45
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(self[k]) <= {{MaxTagValueLength}})",message="a tag value is at most {{MaxTagValueLength}} characters"
	Tags map[string]string `json:"tags,omitempty"`

	// WorkloadCluster says which cluster Karpenter and the tenants' pods run in, when it is not the one that runs
	// Crossplane. Unset, kiso composes every Kubernetes object directly, into the cluster that runs Crossplane.
	WorkloadCluster *WorkloadCluster `json:"workloadCluster,omitempty"`

	// Karpenter says where Karpenter's controller runs, and whether kiso installs it.
	// +kubebuilder:default={}
	Karpenter KarpenterInstall `json:"karpenter,omitempty"`

	// Controller says how Karpenter's controller gets its AWS identity.
	// +kubebuilder:default={}
	Controller ControllerIdentity `json:"controller,omitempty"`

	// NodeRole is the nodes' IAM identity. Unset, kiso creates <prefix>-karpenter-node (AWS's four managed
	// policies), its instance profile and its EC2_LINUX access entry.
	NodeRole NodeRole `json:"nodeRole,omitempty"`

	// PermissionsBoundary is a managed policy ARN set as the permissions boundary of every role kiso creates.
	PermissionsBoundary string `json:"permissionsBoundary,omitempty"`

	// Naming sets how kiso names the AWS resources it creates.
	// +kubebuilder:default={}
	Naming Naming `json:"naming,omitempty"`

	// Interruption is Karpenter's interruption handling.
	// +kubebuilder:default={}
	Interruption Interruption `json:"interruption,omitempty"`

	// Features are Karpenter AWS feature gates that need more permissions.
	// +kubebuilder:default={}
	Features Features `json:"features,omitempty"`

	// Monitoring is the alerting rules for Karpenter.
	// +kubebuilder:default={}
	Monitoring Monitoring `json:"monitoring,omitempty"`

	// OrganizationLimits is the most any organization bound to this cluster may ask for in its spec.limits, per
	// resource (cpu, memory, nodes, ...): a claim asking for more is refused (SpecValid=False, the field named), and
	// one that sets no limit on such a resource gets this one. Set it where tenants apply their own claims; which
	// references an organization may clone the platform says on each reference (annotation
	// <keyDomain>/organizations).
	// +kubebuilder:validation:MaxProperties=20
	OrganizationLimits map[string]intstr.IntOrString `json:"organizationLimits,omitempty"`

	// Placement is how the cluster's admission policies treat the pods of namespaces that are neither an
	// organization's nor the platform's.
	// +kubebuilder:default={}
	Placement ClusterPlacement `json:"placement,omitempty"`

	// Rollout stages a new revision of a reference NodeClass / NodePool across the organizations bound to this
	// cluster, in waves. Without it, a reference change reaches every organization at once.
	Rollout *Rollout `json:"rollout,omitempty"`

	// References are the reference pairs the cluster reads once for every organization bound to it, and shows
	// them in status.references: an organization whose class names one of them reads it there instead of
	// reading it itself. In a workload cluster (spec.workloadCluster) each organization's own read is an
	// observe-only managed resource per reference object, so listing the pairs organizations name saves two
	// managed resources per organization; an organization that names a pair not listed reads it itself, as
	// without this field.
	// +kubebuilder:validation:MaxItems=20
	References []ReferencePair `json:"references,omitempty"`
}

// ReferencePair names a reference NodeClass and NodePool, as an organization's claim names them.
type ReferencePair struct {
	// NodeClassRef is the cluster-scoped reference NodeClass, of any Karpenter provider.
	// +kubebuilder:validation:Required
	NodeClassRef NodeClassReference `json:"nodeClassRef"`

	// NodePoolRef is the reference karpenter.sh/v1 NodePool.
	// +kubebuilder:validation:Required
	NodePoolRef NodePoolReference `json:"nodePoolRef"`
}

// Rollout is how a new revision of a reference reaches the organizations bound to the cluster: wave by wave,
// each wave opening once the one before it is done (its pools Ready on the new revision, none of their nodes
// drifted) and has soaked. Organizations no wave names or counts in move after the last wave.
type Rollout struct {
	// Waves in order: a wave names organizations (canaries), or holds a cumulative percentage of the
	// organizations no wave names, picked by a stable hash of the organization's name.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:XValidation:rule="self.all(w, has(w.organizations) != has(w.percent))",message="a wave names organizations or sets percent, not both"
	Waves []Wave `json:"waves"`

	// Soak is how long a wave stays done before the next one opens, e.g. 30m.
	// +kubebuilder:default="10m"
	// +kubebuilder:validation:Pattern=`^([0-9]+(s|m|h))+$`
	Soak string `json:"soak,omitempty"`

	// Paused stops the rollout where it is: no further wave opens. Organizations already moved stay moved.
	Paused bool `json:"paused,omitempty"`

	// ProgressDeadline is how long a wave may take, from when it opens until every node of its pools is
	// replaced, before the cluster says RolledOut=False, reason Blocked, naming each organization that holds it
	// and why (nodes not replaced because of a disruption budget or a do-not-disrupt pod, a pool not Ready).
	// The default, 2h, lets Karpenter replace a pool of a hundred nodes under its default budget of 10% at a
	// time, a few minutes per node; set it to what your largest pool needs.
	// +kubebuilder:default="2h"
	// +kubebuilder:validation:Pattern=`^([0-9]+(s|m|h))+$`
	ProgressDeadline string `json:"progressDeadline,omitempty"`

	// Skip lets the rollout go on without these organizations: they hold no wave and stay on the revision they
	// are on until removed from the list (status.rollouts[].skipped lists them).
	// +kubebuilder:validation:MaxItems=100
	// +listType=set
	Skip []string `json:"skip,omitempty"`
}

// Wave is one step of a rollout.
type Wave struct {
	// Organizations are moved in this wave by name, e.g. canaries.
	// +kubebuilder:validation:MaxItems=100
	// +listType=set
	Organizations []string `json:"organizations,omitempty"`

	// Percent of the organizations no wave names that have moved once this wave is done, cumulative: 50 then
	// 100 moves half, then the rest.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	Percent *int32 `json:"percent,omitempty"`

	// Soak overrides the rollout's soak for this wave.
	// +kubebuilder:validation:Pattern=`^([0-9]+(s|m|h))+$`
	Soak string `json:"soak,omitempty"`
}

// TakeOver names an existing setup whose AWS resources kiso may take over.
type TakeOver string

// Setups kiso can take over.
const (
	// TakeOverNone: kiso's own names, never another tool's (the default).
	TakeOverNone TakeOver = ""
	// TakeOverAWSGettingStarted: the roles, policies and queue AWS's Karpenter
	// getting-started template created for the cluster, by their names.
	TakeOverAWSGettingStarted TakeOver = "AWSGettingStarted"
)

// Naming is how kiso names the AWS resources it creates. kiso's names never match those AWS's
// getting-started template or eksctl give, so an existing setup is never adopted by accident; taking one over
// is takeOver.
//
// +kubebuilder:validation:XValidation:rule="!has(self.takeOver) || size(self.takeOver) == 0 || !has(self.iamPath)",message="takeOver AWSGettingStarted uses AWS's names and the path / for what it takes over; iamPath is only for kiso's own names"
type Naming struct {
	// Prefix starts the name of every role, policy, instance profile, queue and rule kiso creates
	// (<prefix>-karpenter-controller, <prefix>-karpenter-node, <prefix>-karpenter-interruption, ...). Default
	// kiso-<clusterName>. A permissions boundary that scopes queues and rules to <cluster>-* is met with prefix
	// <cluster>.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=40
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9][A-Za-z0-9_-]*$`
	Prefix string `json:"prefix,omitempty"`

	// IAMPath is the IAM path of every role, policy and instance profile kiso creates. Default
	// /kiso/<clusterName>/. Organizations' node roles live under <iamPath>organizations/, the only roles
	// besides the node role the controller may pass.
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^/([A-Za-z0-9+=,.@_-]+/)*$`
	IAMPath string `json:"iamPath,omitempty"`

	// TakeOver, AWSGettingStarted, takes over the controller role, node role, instance profile, controller
	// policies and queue that AWS's Karpenter getting-started template created, by their names (path /); kiso
	// then never deletes them from AWS (deletionPolicy Orphan). Unset, kiso creates its own and never touches
	// another tool's. Prefix and IAMPath still name the rest.
	// +kubebuilder:validation:Enum=AWSGettingStarted
	TakeOver TakeOver `json:"takeOver,omitempty"`
}

// KarpenterInstall is where Karpenter's controller runs.
type KarpenterInstall struct {
	// Namespace of Karpenter's controller, which also receives the PrometheusRule.
	// +kubebuilder:default=kube-system
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`

	// ServiceAccount of Karpenter's controller.
	// +kubebuilder:default=karpenter
	// +kubebuilder:validation:MaxLength=253
	ServiceAccount string `json:"serviceAccount,omitempty"`

	// Install, when set, installs Karpenter's chart with provider-helm (a Release into the workload cluster, or
	// into the cluster that runs Crossplane without spec.workloadCluster), with the values kiso knows, and its
	// CRDs from Karpenter's karpenter-crd chart (a second Release, same repository and version, deployed first),
	// so that a new version upgrades them. kiso never deletes Karpenter's CRDs: the CRD Release is orphaned when
	// the cluster is deleted or Install unset. Unset, the cluster installs Karpenter itself, with the values in
	// status.helm.
	Install *ChartInstall `json:"install,omitempty"`
}

// WorkloadCluster is a cluster Crossplane reaches through provider-kubernetes and provider-helm.
type WorkloadCluster struct {
	// ProviderConfigName names the provider-kubernetes ProviderConfig (kubernetes.crossplane.io) that reaches
	// the workload cluster, and provider-helm's ProviderConfig (helm.crossplane.io) of the same name. Every
	// Kubernetes object kiso composes for this cluster and its organizations is an Object with it. A DNS label:
	// it starts the names of those Objects.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	ProviderConfigName string `json:"providerConfigName"`
}

// ChartInstall is how kiso installs Karpenter's Helm charts.
type ChartInstall struct {
	// Version of Karpenter's chart and of its CRD chart (karpenter-crd).
	// +kubebuilder:default="1.15.0"
	// +kubebuilder:validation:Pattern=`^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`
	Version string `json:"version,omitempty"`

	// Repository holds both charts, an OCI repository (oci://) or a chart repository (https://).
	// +kubebuilder:default="oci://public.ecr.aws/karpenter"
	// +kubebuilder:validation:Pattern=`^(oci|https?)://`
	Repository string `json:"repository,omitempty"`

	// Values are merged over the values kiso sets on Karpenter's chart (settings.clusterName,
	// settings.interruptionQueue, the IRSA role annotation, the service account's name), key by key; a value
	// given here wins. The CRD chart takes kiso's values only.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	Values *apiextensionsv1.JSON `json:"values,omitempty"`
}

// ControllerIdentity is how the controller's pods assume its role.
type ControllerIdentity struct {
	// Identity is PodIdentity, which composes an EKS Pod Identity association (the cluster needs the
	// eks-pod-identity-agent add-on), or IRSA, which makes the role trust the cluster's OIDC provider;
	// status.helm then gives the service account annotation.
	// +kubebuilder:validation:Enum=PodIdentity;IRSA
	// +kubebuilder:default=PodIdentity
	Identity IdentityMode `json:"identity,omitempty"`

	// OIDCProviderARN is, with IRSA, the cluster's IAM OIDC provider,
	// arn:<partition>:iam::<account>:oidc-provider/<issuer>.
	OIDCProviderARN string `json:"oidcProviderArn,omitempty"`
}

// NodeRole is the IAM identity of the nodes Karpenter launches.
type NodeRole struct {
	// ExistingInstanceProfile is used instead of creating a node role, instance profile and access entry, for
	// clusters whose permissions boundary forbids Crossplane to create them. The controller may then pass this
	// profile's role only.
	ExistingInstanceProfile *ExistingInstanceProfile `json:"existingInstanceProfile,omitempty"`
}

// ExistingInstanceProfile is an instance profile (and its role) made
// outside kiso, which Karpenter's EC2NodeClasses name.
type ExistingInstanceProfile struct {
	// Name is the instance profile's name, for EC2NodeClasses' spec.instanceProfile.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MaxLength=128
	Name string `json:"name"`

	// RoleARN is the ARN of the role in the instance profile: the only role the controller may pass to EC2.
	// +kubebuilder:validation:Required
	RoleARN string `json:"roleArn"`
}

// Interruption configures Karpenter's interruption handling.
type Interruption struct {
	// Enabled creates the interruption queue (<prefix>-karpenter-interruption), its policy, the five
	// EventBridge rules and their targets, and the controller's InterruptionPolicy.
	// +kubebuilder:default=true
	Enabled *bool `json:"enabled,omitempty"`
}

// Features are Karpenter AWS feature gates that change the controller policy.
type Features struct {
	// RebootForRepair adds ec2:RebootInstances to the controller policy, which Karpenter's
	// awsFeatureGates.rebootForRepair (alpha) needs.
	// +kubebuilder:default=false
	RebootForRepair bool `json:"rebootForRepair,omitempty"`
}

// ClusterPlacement is how the cluster's admission policies treat the pods of namespaces that are neither an
// organization's nor the platform's: other teams' monitoring, logging and security agents among them.
type ClusterPlacement struct {
	// Mode is Enforce, where admission refuses a pod there that could run on an organization's nodes (it
	// tolerates every taint, names a node in spec.nodeName, or tolerates or selects an organization's nodes), or
	// Audit, where it admits such a pod with the refusal as a warning and an audit annotation, and the cluster
	// names in status.placementAudit the DaemonSets whose pods Enforce would refuse. Install with Audit on a
	// cluster that already runs other teams' workloads, label the namespaces of the platform's agents
	// <keyDomain>/placement-exempt=true (or fix the workloads), then switch to Enforce. Organizations' own
	// namespaces are enforced in either mode; while the cluster audits, other pods are not kept off
	// organizations' nodes, and every organization says so (PlacementEnforced=False, ClusterAudits).
	// +kubebuilder:validation:Enum=Enforce;Audit
	// +kubebuilder:default=Enforce
	Mode ClusterPlacementMode `json:"mode,omitempty"`
}

// ClusterPlacementMode says what admission does with a pod outside organizations' and the platform's
// namespaces that could run on an organization's nodes.
type ClusterPlacementMode string

// Cluster placement modes.
const (
	ClusterPlacementEnforce ClusterPlacementMode = "Enforce"
	ClusterPlacementAudit   ClusterPlacementMode = "Audit"
)

// MaxListedAudit bounds how many workloads status.placementAudit names.
const MaxListedAudit = 50

// PlacementAudit is what the cluster's placement policy would refuse, in mode Audit.
type PlacementAudit struct {
	// WouldRefuse are the DaemonSets (up to 50) whose pods the policy would refuse in mode Enforce, with why, in
	// namespace and name order.
	// +kubebuilder:validation:MaxItems=50
	WouldRefuse []AuditedWorkload `json:"wouldRefuse,omitempty"`

	// Total is how many DaemonSets the policy would refuse the pods of, all of them counted.
	Total int32 `json:"total"`

	// DaemonSets is how many DaemonSets of the audited namespaces were read.
	DaemonSets int32 `json:"daemonSets"`
}

// AuditedWorkload is a workload whose pods the placement policy would refuse.
type AuditedWorkload struct {
	Namespace string `json:"namespace"`
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	// Reason is the first refusal its pods would get.
	Reason string `json:"reason"`
}

// Monitoring configures the alerting rules kiso ships.
type Monitoring struct {
	// PrometheusRule composes a monitoring.coreos.com/v1 PrometheusRule with five Karpenter alerts in
	// Karpenter's namespace (prometheus-operator's CRD must be installed).
	// +kubebuilder:default=true
	PrometheusRule *bool `json:"prometheusRule,omitempty"`

	// Labels go on the PrometheusRule, e.g. the ones your Prometheus' ruleSelector matches.
	Labels map[string]string `json:"labels,omitempty"`
}

// XKarpenterClusterStatus holds the values Karpenter's Helm chart and EC2NodeClasses need. They are known from
// the spec and set at once; the XR's Ready condition says when AWS has caught up.
type XKarpenterClusterStatus struct {
	// Helm holds Helm values for Karpenter's chart.
	Helm *HelmValues `json:"helm,omitempty"`

	// ControllerRoleARN is the controller's IAM role.
	ControllerRoleARN string `json:"controllerRoleArn,omitempty"`

	// ControllerRoleResource is the Kubernetes name of the controller role's
	// managed resource (an iam.aws.upbound.io Role). Once it is set, the
	// cluster has been rendered and organizations may bind to it; the cluster
	// keeps the role with a Crossplane Usage of its own for as long as it
	// exists, and tenant NodeClasses keep the cluster until their last node
	// is gone.
	ControllerRoleResource string `json:"controllerRoleResource,omitempty"`

	// KarpenterReleaseResource is the Kubernetes name of the provider-helm Release that installs Karpenter, with
	// spec.karpenter.install. The cluster keeps the Release with a Crossplane Usage of its own, and while any
	// tenant NodeClass uses the cluster even once spec.karpenter.install is dropped, so Karpenter stays
	// installed until the last tenant pool, and its last node, is gone.
	KarpenterReleaseResource string `json:"karpenterReleaseResource,omitempty"`

	// NodeRoleName is the node role, for EC2NodeClasses' spec.role.
	NodeRoleName string `json:"nodeRoleName,omitempty"`

	// NodeRoleARN is the ARN of that role.
	NodeRoleARN string `json:"nodeRoleArn,omitempty"`

	// InstanceProfileName is the node role's instance profile, for EC2NodeClasses' spec.instanceProfile.
	InstanceProfileName string `json:"instanceProfileName,omitempty"`

	// NodeRolePath is the IAM path (<iamPath>organizations/) of per-organization node roles, which the
	// controller may pass to EC2. Absent with an existing instance profile, where no other role may be passed.
	NodeRolePath string `json:"nodeRolePath,omitempty"`

	// QueueName is the interruption queue's name; absent when interruption is disabled.
	QueueName string `json:"queueName,omitempty"`

	// NamePrefix starts every AWS name kiso gives in this cluster, the
	// organizations' node roles included.
	NamePrefix string `json:"namePrefix,omitempty"`

	// Rollout summarizes spec.rollout at a glance, e.g. "wave 2/3: 4/10 on 1a2b3c4d5e".
	Rollout string `json:"rollout,omitempty"`

	// Rollouts are, per reference the bound organizations clone, the revision rolling out and how far it got.
	Rollouts []ReferenceRollout `json:"rollouts,omitempty"`

	// PlacementAudit is, in spec.placement.mode Audit, what the placement policy would refuse in mode Enforce.
	PlacementAudit *PlacementAudit `json:"placementAudit,omitempty"`

	// NodeClaimsUnreadAt is when the cluster's NodeClaims last made the request a rollout is judged on more than
	// Crossplane can send the function (RFC 3339): that reconcile failed, so for an hour from then no NodeClaim is
	// read, an open wave is held (its nodes unknown) until its progress deadline says so, and then they are read
	// again.
	NodeClaimsUnreadAt string `json:"nodeClaimsUnreadAt,omitempty"`

	// Placement is what the cluster's placement policy says it enforces, as last observed in the apiserver it is
	// composed in; absent until the policy is there. Organizations of a workload cluster read it from the cluster's
	// view instead of each reading the policy there through a managed resource of its own.
	Placement *PlacementPolicyStatus `json:"placement,omitempty"`

	// References are the pairs of spec.references as last read where the organizations' pools are, for the
	// organizations to clone: each once the cluster has read it, whether or not it exists.
	References []PublishedReference `json:"references,omitempty"`
}

// PublishedReference is one pair of spec.references as the cluster read it.
type PublishedReference struct {
	// Reference names the pair, as status.rollouts[].reference does.
	Reference string `json:"reference"`
	// NodeClass and NodePool are the objects as read, in JSON: kind, name, labels and spec. Empty when the
	// object does not exist.
	NodeClass string `json:"nodeClass,omitempty"`
	NodePool  string `json:"nodePool,omitempty"`
}

// PlacementPolicyStatus is what the cluster's placement policy says it enforces: the annotations organizations
// read from it.
type PlacementPolicyStatus struct {
	// Cluster is the XKarpenterCluster that composed the policy.
	Cluster string `json:"cluster"`

	// KeyDomain is the domain of the label and taint keys the policy checks.
	KeyDomain string `json:"keyDomain"`

	// PlatformNamespaces are the namespaces whose pods the policy lets run on any node.
	PlatformNamespaces []string `json:"platformNamespaces,omitempty"`

	// InjectAPIVersion is the MutatingAdmissionPolicy API the apiserver serves; absent if none.
	InjectAPIVersion string `json:"injectAPIVersion,omitempty"`

	// Mode is Audit while the policy only warns about pods outside organizations' and the platform's namespaces
	// (the cluster's spec.placement.mode); absent while it enforces.
	Mode ClusterPlacementMode `json:"mode,omitempty"`
}

// ReferenceRollout is the state of one reference's rollout. The cluster function keeps it from one reconcile to
// the next; losing it restarts the rollout at its first wave, which moves no organization back.
type ReferenceRollout struct {
	// Reference names the reference NodeClass and NodePool, e.g. EC2NodeClass.v1.karpenter.k8s.aws/default,NodePool/default.
	Reference string `json:"reference"`

	// Revision is the reference's current revision: a hash of the specs kiso clones.
	Revision string `json:"revision"`

	// Wave is the index of the open wave; organizations of this wave and the ones before it may move.
	// len(spec.rollout.waves) is the last, implicit wave of everyone else; one past it, the rollout is done.
	Wave int32 `json:"wave"`

	// WaveDoneAt is when the open wave was first seen done (RFC 3339); it soaks from then.
	WaveDoneAt string `json:"waveDoneAt,omitempty"`

	// Organizations counts the organizations on each revision.
	Organizations []RevisionCount `json:"organizations,omitempty"`

	// Waiting is how many organizations wait for a wave.
	Waiting int32 `json:"waiting"`

	// HeldBy says which organization holds the open wave up, and why.
	HeldBy string `json:"heldBy,omitempty"`

	// WaveOpenedAt is when the open wave opened (RFC 3339); spec.rollout.progressDeadline counts from then.
	WaveOpenedAt string `json:"waveOpenedAt,omitempty"`

	// Skipped lists the organizations spec.rollout.skip names that are not on this revision: they hold no wave.
	Skipped []string `json:"skipped,omitempty"`

	// Released is the last revision whose rollout was done (every wave moved, and soaked): a pool composed for
	// the first time while its organization waits for its wave starts on the revision its organization's other
	// pools are on, else on this one, never on a revision still held back.
	Released string `json:"released,omitempty"`

	// Snapshots are the specs of each revision an organization is still on, and of the released one, so that an
	// organization waiting for its wave keeps being rendered from its own revision and a new pool from the
	// released one.
	Snapshots []ReferenceSnapshot `json:"snapshots,omitempty"`
}

// RevisionCount is how many organizations are on one revision.
type RevisionCount struct {
	Revision      string `json:"revision"`
	Organizations int32  `json:"organizations"`
}

// ReferenceSnapshot is one revision of a reference: the specs kiso clones, as JSON.
type ReferenceSnapshot struct {
	Revision  string `json:"revision"`
	NodeClass string `json:"nodeClass"`
	NodePool  string `json:"nodePool"`
	// Inherited is what every pool inherited from the cluster at this revision (its tags), as JSON; absent from a
	// snapshot kept before revisions covered it, whose pools are rendered with what the cluster has now.
	Inherited string `json:"inherited,omitempty"`
}

// HelmValues are Helm values for Karpenter's chart: the keys kiso knows values for.
type HelmValues struct {
	// Settings are the chart's settings.* values.
	Settings HelmSettings `json:"settings"`
	// ServiceAccount is the chart's serviceAccount.* values (IRSA only).
	ServiceAccount *HelmServiceAccount `json:"serviceAccount,omitempty"`
}

// HelmSettings are the chart's settings.* values.
type HelmSettings struct {
	ClusterName       string `json:"clusterName"`
	InterruptionQueue string `json:"interruptionQueue,omitempty"`
}

// HelmServiceAccount is the chart's serviceAccount.* values (IRSA only).
type HelmServiceAccount struct {
	Annotations map[string]string `json:"annotations,omitempty"`
}
