package main

import (
	"github.com/kiso-dev/kiso/functions/internal/aws"
)

// A managedPolicy is one of the six controller policies of Karpenter's
// getting-started CloudFormation template (v1.15), named as AWS names them.
type managedPolicy struct {
	// Key names its composed resources: controller-policy-<key>.
	Key string
	// Name is the part of AWS's name KarpenterController<Name>Policy-<cluster>.
	Name     string
	Document aws.PolicyDocument
}

// passedToEC2 are the services the controller may pass a node role to:
// exactly AWS's list, which names the China endpoint in every partition.
var passedToEC2 = aws.Values{"ec2.amazonaws.com", "ec2.amazonaws.com.cn"}

// controllerPolicies returns Karpenter's controller policies, statement for
// statement as in AWS's template, in AWS's order, with the cluster, region,
// account and partition filled in. Two choices are kiso's: iam:PassRole is
// allowed on the roles in p.PassRoleResources only, and ec2:RebootInstances
// only with features.rebootForRepair. InterruptionPolicy exists only when
// interruption is enabled.
func controllerPolicies(p plan) []managedPolicy {
	part, region, account, cluster := p.Partition, p.Region, p.Account, p.Cluster
	ec2 := func(resource string) string {
		return aws.ARN{Partition: part, Service: "ec2", Region: region, Account: "*", Resource: resource}.String()
	}
	ec2NoAccount := func(resource string) string {
		return aws.ARN{Partition: part, Service: "ec2", Region: region, Resource: resource}.String()
	}
	instanceProfiles := aws.ARN{Partition: part, Service: aws.ServiceIAM, Account: account, Resource: "instance-profile/*"}.String()
	clusterARN := aws.ARN{Partition: part, Service: "eks", Region: region, Account: account, Resource: "cluster/" + cluster}.String()

	owned := "kubernetes.io/cluster/" + cluster
	taggedResources := aws.Values{ec2("fleet/*"), ec2("instance/*"), ec2("volume/*"), ec2("network-interface/*"), ec2("launch-template/*"), ec2("spot-instances-request/*")}

	deletion := aws.Values{"ec2:TerminateInstances", "ec2:DeleteLaunchTemplate"}
	if p.Spec.Features.RebootForRepair {
		deletion = aws.Values{"ec2:TerminateInstances", "ec2:RebootInstances", "ec2:DeleteLaunchTemplate"}
	}

	policies := []managedPolicy{
		{Key: "node-lifecycle", Name: "NodeLifecycle", Document: aws.PolicyDocument{Version: aws.PolicyVersion, Statement: []aws.Statement{
			aws.AllowStatement("AllowScopedEC2InstanceAccessActions",
				aws.Values{"ec2:RunInstances", "ec2:CreateFleet"},
				aws.Values{ec2NoAccount("image/*"), ec2NoAccount("snapshot/*"), ec2("security-group/*"), ec2("subnet/*"), ec2("capacity-reservation/*"), ec2("placement-group/*")},
				nil),
			aws.AllowStatement("AllowScopedEC2LaunchTemplateAccessActions",
				aws.Values{"ec2:RunInstances", "ec2:CreateFleet"},
				aws.Values{ec2("launch-template/*")},
				aws.Condition{
					"StringEquals": {"aws:ResourceTag/" + owned: {"owned"}},
					"StringLike":   {"aws:ResourceTag/karpenter.sh/nodepool": {"*"}},
				}),
			aws.AllowStatement("AllowScopedEC2InstanceActionsWithTags",
				aws.Values{"ec2:RunInstances", "ec2:CreateFleet", "ec2:CreateLaunchTemplate"},
				taggedResources,
				aws.Condition{
					"StringEquals": {"aws:RequestTag/" + owned: {"owned"}, "aws:RequestTag/eks:eks-cluster-name": {cluster}},
					"StringLike":   {"aws:RequestTag/karpenter.sh/nodepool": {"*"}},
				}),
			aws.AllowStatement("AllowScopedResourceCreationTagging",
				aws.Values{"ec2:CreateTags"},
				taggedResources,
				aws.Condition{
					"StringEquals": {
						"aws:RequestTag/" + owned:             {"owned"},
						"aws:RequestTag/eks:eks-cluster-name": {cluster},
						"ec2:CreateAction":                    {"RunInstances", "CreateFleet", "CreateLaunchTemplate"},
					},
					"StringLike": {"aws:RequestTag/karpenter.sh/nodepool": {"*"}},
				}),
			aws.AllowStatement("AllowScopedResourceTagging",
				aws.Values{"ec2:CreateTags"},
				aws.Values{ec2("instance/*")},
				aws.Condition{
					"StringEquals":              {"aws:ResourceTag/" + owned: {"owned"}},
					"StringLike":                {"aws:ResourceTag/karpenter.sh/nodepool": {"*"}},
					"StringEqualsIfExists":      {"aws:RequestTag/eks:eks-cluster-name": {cluster}},
					"ForAllValues:StringEquals": {"aws:TagKeys": {"eks:eks-cluster-name", "karpenter.sh/nodeclaim", "Name"}},
				}),
			aws.AllowStatement("AllowScopedDeletion",
				deletion,
				aws.Values{ec2("instance/*"), ec2("launch-template/*")},
				aws.Condition{
					"StringEquals": {"aws:ResourceTag/" + owned: {"owned"}},
					"StringLike":   {"aws:ResourceTag/karpenter.sh/nodepool": {"*"}},
				}),
		}}},
		{Key: "iam-integration", Name: "IAMIntegration", Document: aws.PolicyDocument{Version: aws.PolicyVersion, Statement: []aws.Statement{
			aws.AllowStatement("AllowPassingInstanceRole",
				aws.Values{"iam:PassRole"},
				p.PassRoleResources,
				aws.Condition{"StringEquals": {"iam:PassedToService": passedToEC2}}),
			aws.AllowStatement("AllowScopedInstanceProfileCreationActions",
				aws.Values{"iam:CreateInstanceProfile"},
				aws.Values{instanceProfiles},
				aws.Condition{
					"StringEquals": {
						"aws:RequestTag/" + owned:                      {"owned"},
						"aws:RequestTag/eks:eks-cluster-name":          {cluster},
						"aws:RequestTag/topology.kubernetes.io/region": {region},
					},
					"StringLike": {"aws:RequestTag/karpenter.k8s.aws/ec2nodeclass": {"*"}},
				}),
			aws.AllowStatement("AllowScopedInstanceProfileTagActions",
				aws.Values{"iam:TagInstanceProfile"},
				aws.Values{instanceProfiles},
				aws.Condition{
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
			aws.AllowStatement("AllowScopedInstanceProfileActions",
				aws.Values{"iam:AddRoleToInstanceProfile", "iam:RemoveRoleFromInstanceProfile", "iam:DeleteInstanceProfile"},
				aws.Values{instanceProfiles},
				aws.Condition{
					"StringEquals": {
						"aws:ResourceTag/" + owned:                      {"owned"},
						"aws:ResourceTag/topology.kubernetes.io/region": {region},
					},
					"StringLike": {"aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass": {"*"}},
				}),
		}}},
		{Key: "eks-integration", Name: "EKSIntegration", Document: aws.PolicyDocument{Version: aws.PolicyVersion, Statement: []aws.Statement{
			aws.AllowStatement("AllowAPIServerEndpointDiscovery", aws.Values{"eks:DescribeCluster"}, aws.Values{clusterARN}, nil),
		}}},
	}
	if p.Interruption {
		policies = append(policies, managedPolicy{Key: "interruption", Name: "Interruption", Document: aws.PolicyDocument{Version: aws.PolicyVersion, Statement: []aws.Statement{
			aws.AllowStatement("AllowInterruptionQueueActions",
				aws.Values{"sqs:DeleteMessage", "sqs:GetQueueUrl", "sqs:ReceiveMessage"},
				aws.Values{p.QueueARN},
				nil),
		}}})
	}
	return append(policies,
		managedPolicy{Key: "zonal-shift", Name: "ZonalShift", Document: aws.PolicyDocument{Version: aws.PolicyVersion, Statement: []aws.Statement{
			aws.AllowStatement("AllowZonalShiftStatusReadOnly",
				aws.Values{"arc-zonal-shift:GetManagedResource"},
				aws.Values{"*"},
				aws.Condition{"StringEquals": {"arc-zonal-shift:ResourceIdentifier": {clusterARN}}}),
		}}},
		managedPolicy{Key: "resource-discovery", Name: "ResourceDiscovery", Document: aws.PolicyDocument{Version: aws.PolicyVersion, Statement: []aws.Statement{
			aws.AllowStatement("AllowRegionalReadActions",
				aws.Values{
					"ec2:DescribeCapacityReservations", "ec2:DescribeImages", "ec2:DescribeInstances", "ec2:DescribeInstanceStatus",
					"ec2:DescribeInstanceTypeOfferings", "ec2:DescribeInstanceTypes", "ec2:DescribeLaunchTemplates",
					"ec2:DescribePlacementGroups", "ec2:DescribeSecurityGroups", "ec2:DescribeSpotPriceHistory", "ec2:DescribeSubnets",
				},
				aws.Values{"*"},
				aws.Condition{"StringEquals": {"aws:RequestedRegion": {region}}}),
			aws.AllowStatement("AllowSSMReadActions", aws.Values{"ssm:GetParameter"}, aws.Values{aws.ARN{Partition: part, Service: "ssm", Region: region, Resource: "parameter/aws/service/*"}.String()}, nil),
			aws.AllowStatement("AllowPricingReadActions", aws.Values{"pricing:GetProducts"}, aws.Values{"*"}, nil),
			aws.AllowStatement("AllowUnscopedInstanceProfileListAction", aws.Values{"iam:ListInstanceProfiles"}, aws.Values{"*"}, nil),
			aws.AllowStatement("AllowInstanceProfileReadActions", aws.Values{"iam:GetInstanceProfile"}, aws.Values{instanceProfiles}, nil),
		}}},
	)
}

// passRoleResources are the roles the controller may pass to EC2: the
// cluster's node role and every role under the organizations' path, or
// with an existing instance profile that profile's role only.
func passRoleResources(p plan) aws.Values {
	if p.Spec.NodeRole.ExistingInstanceProfile != nil {
		return aws.Values{p.NodeRoleARN}
	}
	return aws.Values{p.NodeRoleARN, aws.RoleARN(p.Partition, p.Account, p.NodeRolePath, "*")}
}
