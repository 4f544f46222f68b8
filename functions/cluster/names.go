package main

import (
	"strings"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/aws"
	"github.com/kiso-dev/kiso/functions/internal/names"
)

// AWS's name limits.
const (
	maxRoleName   = 64
	maxPolicyName = 128
	maxRuleName   = 64
	maxQueueName  = v1alpha1.MaxQueueNameLength
	// maxObjectName keeps composed objects' Kubernetes names usable as label
	// values too.
	maxObjectName = names.MaxLabelValue
)

// joinAWS joins the parts of an AWS name with "-", shortened with a hash
// when longer than maxLen.
func joinAWS(maxLen int, parts ...string) string { return names.Join(maxLen, parts...) }

// defaultNamePrefix starts kiso's AWS names unless the spec sets a prefix:
// no name AWS's template or eksctl gives starts with "kiso-", so kiso never
// takes over what another tool created.
func defaultNamePrefix(cluster string) string { return "kiso-" + cluster }

// defaultIAMPath is the IAM path of kiso's roles, policies and instance
// profiles unless the spec sets one.
func defaultIAMPath(cluster string) string { return "/kiso/" + cluster + "/" }

// organizationsPath is where organizations' node roles live, under the
// cluster's path: the controller may pass any role there, and no role of the
// cluster's own (the controller's included) lives there.
func organizationsPath(iamPath string) string { return iamPath + "organizations/" }

// awsNames are the AWS names of a cluster's resources: kiso's own
// (<prefix>-karpenter-...), or, taking over AWS's getting-started setup, the
// names that template gives.
type awsNames struct {
	prefix   string
	cluster  string
	takeOver bool
}

// controllerRole is <prefix>-karpenter-controller; AWS's getting-started
// guide (eksctl) names it <cluster>-karpenter.
func (n awsNames) controllerRole() string {
	if n.takeOver {
		return joinAWS(maxRoleName, n.cluster, "karpenter")
	}
	return joinAWS(maxRoleName, n.prefix, "karpenter", "controller")
}

// nodeRole is <prefix>-karpenter-node; AWS's template names it
// KarpenterNodeRole-<cluster>. The instance profile has the same name.
func (n awsNames) nodeRole() string {
	if n.takeOver {
		return joinAWS(maxRoleName, "KarpenterNodeRole", n.cluster)
	}
	return joinAWS(maxRoleName, n.prefix, "karpenter", "node")
}

// policy is <prefix>-karpenter-<key>; AWS's template names it
// KarpenterController<Name>Policy-<cluster>.
func (n awsNames) policy(mp managedPolicy) string {
	if n.takeOver {
		return joinAWS(maxPolicyName, "KarpenterController"+mp.Name+"Policy", n.cluster)
	}
	return joinAWS(maxPolicyName, n.prefix, "karpenter", mp.Key)
}

// queue is <prefix>-karpenter-interruption; AWS's template names it after
// the cluster.
func (n awsNames) queue() string {
	if n.takeOver {
		return joinAWS(maxQueueName, n.cluster)
	}
	return joinAWS(maxQueueName, n.prefix, "karpenter", "interruption")
}

// rule is <prefix>-karpenter-<rule> in every case: AWS's template leaves
// rule names to CloudFormation, so there is nothing to take over.
func (n awsNames) rule(r rule) string { return joinAWS(maxRuleName, n.prefix, "karpenter", r.Key) }

// objectName is a composed object's Kubernetes name: the cluster name made
// DNS-1123 (lowercase, hashed if that changed it), then "karpenter" and the
// parts. The AWS name is set separately, so it keeps the cluster's case.
func (p plan) objectName(parts ...string) string {
	return names.Join(maxObjectName, append([]string{p.objectBase, "karpenter"}, parts...)...)
}

// Composed resource names: the keys of desired state, stable and readable.
const (
	crControllerRole   = resource.Name("controller-role")
	crQueue            = resource.Name("queue")
	crQueuePolicy      = resource.Name("queue-policy")
	crPodIdentity      = resource.Name("pod-identity-association")
	crPrometheusRule   = resource.Name("prometheus-rule")
	crControllerPolicy = "controller-policy-"
	crControllerAttach = "controller-policy-attachment-"
	crRule             = "rule-"
	crTarget           = "target-"
	crUsage            = "usage-"
)

// nameAWSObjects names what the cluster creates in AWS, from the spec's naming (a prefix and IAM path of the
// platform's, or the defaults derived from the cluster's name; AWS's getting-started names under takeOver) and an
// existing instance profile, whose role the cluster uses instead of creating one.
func (p *plan) nameAWSObjects(naming v1alpha1.Naming, existing *v1alpha1.ExistingInstanceProfile) {
	p.NamePrefix = naming.Prefix
	if p.NamePrefix == "" {
		p.NamePrefix = defaultNamePrefix(p.Cluster)
	}
	iamPath := naming.IAMPath
	if iamPath == "" {
		iamPath = defaultIAMPath(p.Cluster)
	}
	p.TakeOver = naming.TakeOver == v1alpha1.TakeOverAWSGettingStarted
	p.IAMPath = iamPath
	if p.TakeOver {
		// What AWS's template created lives at the root path.
		p.IAMPath = "/"
	}
	p.names = awsNames{prefix: p.NamePrefix, cluster: p.Cluster, takeOver: p.TakeOver}

	p.ControllerRoleName = p.names.controllerRole()
	p.ControllerRoleResource = p.objectName("controller")
	p.ControllerRoleARN = aws.RoleARN(p.Partition, p.Account, p.IAMPath, p.ControllerRoleName)

	if ex := existing; ex != nil {
		p.NodeRoleARN = ex.RoleARN
		p.NodeRoleName = roleNameOf(ex.RoleARN)
		p.InstanceProfileName = ex.Name
	} else {
		p.CreateNodeRole = true
		p.NodeRoleName = p.names.nodeRole()
		p.NodeRoleARN = aws.RoleARN(p.Partition, p.Account, p.IAMPath, p.NodeRoleName)
		p.InstanceProfileName = p.NodeRoleName
		p.NodeRolePath = organizationsPath(iamPath)
	}
	if p.Interruption {
		p.QueueName = p.names.queue()
		p.QueueARN = aws.ARN{Partition: p.Partition, Service: "sqs", Region: p.Region, Account: p.Account, Resource: p.QueueName}.String()
	}
}

// roleNameOf is the name of a role from its ARN: the part after the last "/"
// (a role ARN is arn:<partition>:iam::<account>:role/<path><name>).
func roleNameOf(roleARN string) string {
	return roleARN[strings.LastIndex(roleARN, "/")+1:]
}
