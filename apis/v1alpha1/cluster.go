package v1alpha1

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

// XKarpenterClusterSpec asks for everything Karpenter needs on AWS for one
// EKS cluster.
type XKarpenterClusterSpec struct {
	// ClusterName is the EKS cluster's name. It scopes the controller's
	// policy and names the interruption queue.
	ClusterName string `json:"clusterName"`

	// Region is the cluster's AWS region.
	Region string `json:"region"`

	// AccountID is the cluster's 12-digit AWS account ID.
	AccountID string `json:"accountId"`

	// Partition is aws (default), aws-cn or aws-us-gov.
	Partition Partition `json:"partition,omitempty"`

	// ProviderConfigName is the provider-aws ProviderConfig every managed
	// resource uses; default "default".
	ProviderConfigName string `json:"providerConfigName,omitempty"`

	// Tags go on every AWS resource kiso creates, beside kiso's own.
	Tags map[string]string `json:"tags,omitempty"`

	// Karpenter says where Karpenter's controller runs.
	Karpenter KarpenterInstall `json:"karpenter,omitempty"`

	// Controller sets how the controller gets its AWS identity.
	Controller ControllerIdentity `json:"controller,omitempty"`

	// NodeRole says whether kiso creates the nodes' role or uses an existing
	// instance profile.
	NodeRole NodeRole `json:"nodeRole,omitempty"`

	// PermissionsBoundary is a policy ARN set as the permissions boundary of
	// every role kiso creates.
	PermissionsBoundary string `json:"permissionsBoundary,omitempty"`

	// Naming sets the names and IAM path of the AWS resources kiso creates.
	Naming Naming `json:"naming,omitempty"`

	// Interruption sets up the interruption queue and its EventBridge rules.
	Interruption Interruption `json:"interruption,omitempty"`

	// Features turns on Karpenter AWS feature gates that need permissions.
	Features Features `json:"features,omitempty"`

	// Monitoring ships alerting rules for Karpenter.
	Monitoring Monitoring `json:"monitoring,omitempty"`
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

// Naming is how kiso names the AWS resources it creates. kiso's names never
// match those AWS's getting-started template or eksctl give, so a cluster set
// up with them is never adopted by accident; taking it over is TakeOver.
type Naming struct {
	// Prefix starts the name of every role, policy, instance profile, queue
	// and rule kiso creates (<prefix>-karpenter-controller, ...); default
	// kiso-<clusterName>. A permissions boundary that scopes queues and rules
	// to <cluster>-* is met with prefix <cluster>.
	Prefix string `json:"prefix,omitempty"`

	// IAMPath is the path of every role, policy and instance profile kiso
	// creates; default /kiso/<clusterName>/. Organizations' node roles live
	// under <iamPath>organizations/, where the controller may pass them.
	IAMPath string `json:"iamPath,omitempty"`

	// TakeOver, AWSGettingStarted, gives the controller role, node role,
	// instance profile, controller policies and queue the names (and the
	// path /) AWS's getting-started template gives them, so kiso manages the
	// ones that template created; kiso then never deletes them from AWS
	// (deletionPolicy Orphan). Prefix and IAMPath still name the rest.
	TakeOver TakeOver `json:"takeOver,omitempty"`
}

// KarpenterInstall is where Karpenter's controller runs.
type KarpenterInstall struct {
	// Namespace of Karpenter's controller; default kube-system.
	Namespace string `json:"namespace,omitempty"`

	// ServiceAccount of Karpenter's controller; default karpenter.
	ServiceAccount string `json:"serviceAccount,omitempty"`
}

// ControllerIdentity is how the controller's pods assume its role.
type ControllerIdentity struct {
	// Identity is PodIdentity (default) or IRSA.
	Identity IdentityMode `json:"identity,omitempty"`

	// OIDCProviderARN is the cluster's IAM OIDC provider, required with IRSA,
	// e.g. arn:aws:iam::111122223333:oidc-provider/oidc.eks.eu-west-3.amazonaws.com/id/EXAMPLE.
	OIDCProviderARN string `json:"oidcProviderArn,omitempty"`
}

// NodeRole is the IAM identity of the nodes Karpenter launches.
type NodeRole struct {
	// ExistingInstanceProfile, when set, is used instead of creating a node
	// role, instance profile and access entry: for clusters whose IAM
	// permissions boundary forbids Crossplane to create them.
	ExistingInstanceProfile *ExistingInstanceProfile `json:"existingInstanceProfile,omitempty"`
}

// ExistingInstanceProfile is an instance profile (and its role) made
// outside kiso, which Karpenter's EC2NodeClasses name.
type ExistingInstanceProfile struct {
	// Name of the instance profile.
	Name string `json:"name"`

	// RoleARN of the role in the instance profile: the only role the
	// controller may pass to EC2.
	RoleARN string `json:"roleArn"`
}

// Interruption configures Karpenter's interruption handling.
type Interruption struct {
	// Enabled creates the SQS queue, its policy and the EventBridge rules;
	// default true.
	Enabled *bool `json:"enabled,omitempty"`
}

// Features are Karpenter AWS feature gates that change the controller policy.
type Features struct {
	// RebootForRepair adds ec2:RebootInstances, which Karpenter's
	// awsFeatureGates.rebootForRepair needs.
	RebootForRepair bool `json:"rebootForRepair,omitempty"`
}

// Monitoring configures the alerting rules kiso ships.
type Monitoring struct {
	// PrometheusRule composes a monitoring.coreos.com/v1 PrometheusRule with
	// Karpenter alerts in Karpenter's namespace; default true.
	PrometheusRule *bool `json:"prometheusRule,omitempty"`

	// Labels go on the PrometheusRule, e.g. the labels your Prometheus'
	// ruleSelector matches.
	Labels map[string]string `json:"labels,omitempty"`
}

// XKarpenterClusterStatus holds what Karpenter's Helm chart and the
// isolation function need.
type XKarpenterClusterStatus struct {
	// Helm holds Helm values for Karpenter's chart.
	Helm *HelmValues `json:"helm,omitempty"`

	// ControllerRoleARN is the controller's IAM role.
	ControllerRoleARN string `json:"controllerRoleArn,omitempty"`

	// ControllerRoleResource is the Kubernetes name of the controller role's
	// managed resource (an iam.aws.upbound.io Role). The isolation function
	// names it in a Crossplane Usage, so tenant NodePools keep Karpenter's
	// permissions until their last node is gone.
	ControllerRoleResource string `json:"controllerRoleResource,omitempty"`

	// NodeRoleName is the role EC2NodeClasses name in spec.role.
	NodeRoleName string `json:"nodeRoleName,omitempty"`

	// NodeRoleARN is the ARN of that role.
	NodeRoleARN string `json:"nodeRoleArn,omitempty"`

	// InstanceProfileName is the nodes' instance profile, for EC2NodeClasses
	// that name spec.instanceProfile.
	InstanceProfileName string `json:"instanceProfileName,omitempty"`

	// NodeRolePath is the IAM path under which per-organization node roles
	// live; the controller may pass any role under it. Absent with an
	// existing instance profile: then no other role may be passed.
	NodeRolePath string `json:"nodeRolePath,omitempty"`

	// QueueName is the interruption queue; absent when interruption is off.
	QueueName string `json:"queueName,omitempty"`

	// NamePrefix starts every AWS name kiso gives in this cluster, the
	// organizations' node roles included.
	NamePrefix string `json:"namePrefix,omitempty"`
}

// HelmValues mirrors the keys of Karpenter's chart kiso knows values for.
type HelmValues struct {
	Settings       HelmSettings        `json:"settings"`
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
