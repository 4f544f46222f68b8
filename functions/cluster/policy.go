package main

import (
	"github.com/kiso-dev/kiso/functions/internal/awsiam"
)

// A managedPolicy is one of the six controller policies of Karpenter's
// getting-started CloudFormation template (v1.15), named as AWS names them.
type managedPolicy struct {
	// Key names its composed resources: controller-policy-<key>.
	Key string
	// Name is the part of AWS's name KarpenterController<Name>Policy-<cluster>.
	Name     string
	Document awsiam.PolicyDocument
}

// passedToEC2 are the services the controller may pass a node role to:
// exactly AWS's list, which names the China endpoint in every partition.
var passedToEC2 = awsiam.Values{"ec2.amazonaws.com", "ec2.amazonaws.com.cn"}

// controllerPolicies returns Karpenter's controller policies, statement for
// statement as in AWS's template, in AWS's order, with the cluster, region,
// account and partition filled in. Two choices are kiso's: iam:PassRole is
// allowed on the roles in p.PassRoleResources only, and ec2:RebootInstances
// only with features.rebootForRepair. InterruptionPolicy exists only when
// interruption is enabled.
func controllerPolicies(p plan) []managedPolicy {
	part, region, account, cluster := p.Partition, p.Region, p.Account, p.Cluster
	ec2 := func(resource string) string { return awsiam.ARN(part, "ec2", region, "*", resource) }
	ec2NoAccount := func(resource string) string { return awsiam.ARN(part, "ec2", region, "", resource) }
	instanceProfiles := awsiam.ARN(part, "iam", "", account, "instance-profile/*")
	clusterARN := awsiam.ARN(part, "eks", region, account, "cluster/"+cluster)

	owned := "kubernetes.io/cluster/" + cluster
	taggedResources := awsiam.Values{ec2("fleet/*"), ec2("instance/*"), ec2("volume/*"), ec2("network-interface/*"), ec2("launch-template/*"), ec2("spot-instances-request/*")}

	deletion := awsiam.Values{"ec2:TerminateInstances", "ec2:DeleteLaunchTemplate"}
	if p.Spec.Features.RebootForRepair {
		deletion = awsiam.Values{"ec2:TerminateInstances", "ec2:RebootInstances", "ec2:DeleteLaunchTemplate"}
	}

	policies := []managedPolicy{
		{Key: "node-lifecycle", Name: "NodeLifecycle", Document: awsiam.PolicyDocument{Version: awsiam.PolicyVersion, Statement: []awsiam.Statement{
			awsiam.AllowStatement("AllowScopedEC2InstanceAccessActions",
				awsiam.Values{"ec2:RunInstances", "ec2:CreateFleet"},
				awsiam.Values{ec2NoAccount("image/*"), ec2NoAccount("snapshot/*"), ec2("security-group/*"), ec2("subnet/*"), ec2("capacity-reservation/*"), ec2("placement-group/*")},
				nil),
			awsiam.AllowStatement("AllowScopedEC2LaunchTemplateAccessActions",
				awsiam.Values{"ec2:RunInstances", "ec2:CreateFleet"},
				awsiam.Values{ec2("launch-template/*")},
				awsiam.Condition{
					"StringEquals": {"aws:ResourceTag/" + owned: {"owned"}},
					"StringLike":   {"aws:ResourceTag/karpenter.sh/nodepool": {"*"}},
				}),
			awsiam.AllowStatement("AllowScopedEC2InstanceActionsWithTags",
				awsiam.Values{"ec2:RunInstances", "ec2:CreateFleet", "ec2:CreateLaunchTemplate"},
				taggedResources,
				awsiam.Condition{
					"StringEquals": {"aws:RequestTag/" + owned: {"owned"}, "aws:RequestTag/eks:eks-cluster-name": {cluster}},
					"StringLike":   {"aws:RequestTag/karpenter.sh/nodepool": {"*"}},
				}),
			awsiam.AllowStatement("AllowScopedResourceCreationTagging",
				awsiam.Values{"ec2:CreateTags"},
				taggedResources,
				awsiam.Condition{
					"StringEquals": {
						"aws:RequestTag/" + owned:             {"owned"},
						"aws:RequestTag/eks:eks-cluster-name": {cluster},
						"ec2:CreateAction":                    {"RunInstances", "CreateFleet", "CreateLaunchTemplate"},
					},
					"StringLike": {"aws:RequestTag/karpenter.sh/nodepool": {"*"}},
				}),
			awsiam.AllowStatement("AllowScopedResourceTagging",
				awsiam.Values{"ec2:CreateTags"},
				awsiam.Values{ec2("instance/*")},
				awsiam.Condition{
					"StringEquals":              {"aws:ResourceTag/" + owned: {"owned"}},
					"StringLike":                {"aws:ResourceTag/karpenter.sh/nodepool": {"*"}},
					"StringEqualsIfExists":      {"aws:RequestTag/eks:eks-cluster-name": {cluster}},
					"ForAllValues:StringEquals": {"aws:TagKeys": {"eks:eks-cluster-name", "karpenter.sh/nodeclaim", "Name"}},
				}),
			awsiam.AllowStatement("AllowScopedDeletion",
				deletion,
				awsiam.Values{ec2("instance/*"), ec2("launch-template/*")},
				awsiam.Condition{
					"StringEquals": {"aws:ResourceTag/" + owned: {"owned"}},
					"StringLike":   {"aws:ResourceTag/karpenter.sh/nodepool": {"*"}},
				}),
		}}},
		{Key: "iam-integration", Name: "IAMIntegration", Document: awsiam.PolicyDocument{Version: awsiam.PolicyVersion, Statement: []awsiam.Statement{
			awsiam.AllowStatement("AllowPassingInstanceRole",
				awsiam.Values{"iam:PassRole"},
				p.PassRoleResources,
				awsiam.Condition{"StringEquals": {"iam:PassedToService": passedToEC2}}),
			awsiam.AllowStatement("AllowScopedInstanceProfileCreationActions",
				awsiam.Values{"iam:CreateInstanceProfile"},
				awsiam.Values{instanceProfiles},
				awsiam.Condition{
					"StringEquals": {
						"aws:RequestTag/" + owned:                      {"owned"},
						"aws:RequestTag/eks:eks-cluster-name":          {cluster},
						"aws:RequestTag/topology.kubernetes.io/region": {region},
					},
					"StringLike": {"aws:RequestTag/karpenter.k8s.aws/ec2nodeclass": {"*"}},
				}),
			awsiam.AllowStatement("AllowScopedInstanceProfileTagActions",
				awsiam.Values{"iam:TagInstanceProfile"},
				awsiam.Values{instanceProfiles},
				awsiam.Condition{
					"StringEquals": {
						"aws:ResourceTag/" + owned:                      {"owned"},
						"aws:ResourceTag/topology.kubernetes.io/region": {region},
						"aws:RequestTag/" + owned:                       {"owned"},
						"aws:RequestTag/eks:eks-cluster-name":           {cluster},
						"aws:RequestTag/topology.kubernetes.io/region":  {region},
					},
					"StringLike": {
						"aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass": {"*"},
						"aws:RequestTag/karpenter.k8s.aws/ec2nodeclass":  {"*"},
					},
				}),
			awsiam.AllowStatement("AllowScopedInstanceProfileActions",
				awsiam.Values{"iam:AddRoleToInstanceProfile", "iam:RemoveRoleFromInstanceProfile", "iam:DeleteInstanceProfile"},
				awsiam.Values{instanceProfiles},
				awsiam.Condition{
					"StringEquals": {
						"aws:ResourceTag/" + owned:                      {"owned"},
						"aws:ResourceTag/topology.kubernetes.io/region": {region},
					},
					"StringLike": {"aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass": {"*"}},
				}),
		}}},
		{Key: "eks-integration", Name: "EKSIntegration", Document: awsiam.PolicyDocument{Version: awsiam.PolicyVersion, Statement: []awsiam.Statement{
			awsiam.AllowStatement("AllowAPIServerEndpointDiscovery", awsiam.Values{"eks:DescribeCluster"}, awsiam.Values{clusterARN}, nil),
		}}},
	}
	if p.Interruption {
		policies = append(policies, managedPolicy{Key: "interruption", Name: "Interruption", Document: awsiam.PolicyDocument{Version: awsiam.PolicyVersion, Statement: []awsiam.Statement{
			awsiam.AllowStatement("AllowInterruptionQueueActions",
				awsiam.Values{"sqs:DeleteMessage", "sqs:GetQueueUrl", "sqs:ReceiveMessage"},
				awsiam.Values{p.QueueARN},
				nil),
		}}})
	}
	return append(policies,
		managedPolicy{Key: "zonal-shift", Name: "ZonalShift", Document: awsiam.PolicyDocument{Version: awsiam.PolicyVersion, Statement: []awsiam.Statement{
			awsiam.AllowStatement("AllowZonalShiftStatusReadOnly",
				awsiam.Values{"arc-zonal-shift:GetManagedResource"},
				awsiam.Values{"*"},
				awsiam.Condition{"StringEquals": {"arc-zonal-shift:ResourceIdentifier": {clusterARN}}}),
		}}},
		managedPolicy{Key: "resource-discovery", Name: "ResourceDiscovery", Document: awsiam.PolicyDocument{Version: awsiam.PolicyVersion, Statement: []awsiam.Statement{
			awsiam.AllowStatement("AllowRegionalReadActions",
				awsiam.Values{
					"ec2:DescribeCapacityReservations", "ec2:DescribeImages", "ec2:DescribeInstances", "ec2:DescribeInstanceStatus",
					"ec2:DescribeInstanceTypeOfferings", "ec2:DescribeInstanceTypes", "ec2:DescribeLaunchTemplates",
					"ec2:DescribePlacementGroups", "ec2:DescribeSecurityGroups", "ec2:DescribeSpotPriceHistory", "ec2:DescribeSubnets",
				},
				awsiam.Values{"*"},
				awsiam.Condition{"StringEquals": {"aws:RequestedRegion": {region}}}),
			awsiam.AllowStatement("AllowSSMReadActions", awsiam.Values{"ssm:GetParameter"}, awsiam.Values{awsiam.ARN(part, "ssm", region, "", "parameter/aws/service/*")}, nil),
			awsiam.AllowStatement("AllowPricingReadActions", awsiam.Values{"pricing:GetProducts"}, awsiam.Values{"*"}, nil),
			awsiam.AllowStatement("AllowUnscopedInstanceProfileListAction", awsiam.Values{"iam:ListInstanceProfiles"}, awsiam.Values{"*"}, nil),
			awsiam.AllowStatement("AllowInstanceProfileReadActions", awsiam.Values{"iam:GetInstanceProfile"}, awsiam.Values{instanceProfiles}, nil),
		}}},
	)
}

// passRoleResources are the roles the controller may pass to EC2: the
// cluster's node role and every role under the organizations' path, or
// with an existing instance profile that profile's role only.
func passRoleResources(p plan) awsiam.Values {
	if p.Spec.NodeRole.ExistingInstanceProfile != nil {
		return awsiam.Values{p.NodeRoleARN}
	}
	return awsiam.Values{p.NodeRoleARN, awsiam.ARN(p.Partition, "iam", "", p.Account, "role"+p.NodeRolePath+"*")}
}
