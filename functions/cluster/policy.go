package main

import (
	"github.com/kiso-dev/kiso/apis/v1alpha1"
)

// A managedPolicy is one of the six controller policies of Karpenter's
// getting-started CloudFormation template (v1.15), named as AWS names them.
type managedPolicy struct {
	// Key names its composed resources: controller-policy-<key>.
	Key string
	// Name is the part of AWS's name KarpenterController<Name>Policy-<cluster>.
	Name     string
	Document PolicyDocument
}

// passedToEC2 are the services the controller may pass a node role to:
// exactly AWS's list, which names the China endpoint in every partition.
var passedToEC2 = Values{"ec2.amazonaws.com", "ec2.amazonaws.com.cn"}

// controllerPolicies returns Karpenter's controller policies, statement for
// statement as in AWS's template, in AWS's order, with the cluster, region,
// account and partition filled in. Two choices are kiso's: iam:PassRole is
// allowed on the roles in p.PassRoleResources only, and ec2:RebootInstances
// only with features.rebootForRepair. InterruptionPolicy exists only when
// interruption is enabled.
func controllerPolicies(p plan) []managedPolicy {
	part, region, account, cluster := p.Partition, p.Region, p.Account, p.Cluster
	ec2 := func(resource string) string { return arn(part, "ec2", region, "*", resource) }
	ec2NoAccount := func(resource string) string { return arn(part, "ec2", region, "", resource) }
	instanceProfiles := arn(part, "iam", "", account, "instance-profile/*")
	clusterARN := arn(part, "eks", region, account, "cluster/"+cluster)

	owned := "kubernetes.io/cluster/" + cluster
	taggedResources := Values{ec2("fleet/*"), ec2("instance/*"), ec2("volume/*"), ec2("network-interface/*"), ec2("launch-template/*"), ec2("spot-instances-request/*")}

	deletion := Values{"ec2:TerminateInstances", "ec2:DeleteLaunchTemplate"}
	if p.Spec.Features.RebootForRepair {
		deletion = Values{"ec2:TerminateInstances", "ec2:RebootInstances", "ec2:DeleteLaunchTemplate"}
	}

	policies := []managedPolicy{
		{Key: "node-lifecycle", Name: "NodeLifecycle", Document: PolicyDocument{Version: policyVersion, Statement: []Statement{
			statement("AllowScopedEC2InstanceAccessActions",
				Values{"ec2:RunInstances", "ec2:CreateFleet"},
				Values{ec2NoAccount("image/*"), ec2NoAccount("snapshot/*"), ec2("security-group/*"), ec2("subnet/*"), ec2("capacity-reservation/*"), ec2("placement-group/*")},
				nil),
			statement("AllowScopedEC2LaunchTemplateAccessActions",
				Values{"ec2:RunInstances", "ec2:CreateFleet"},
				Values{ec2("launch-template/*")},
				Condition{
					"StringEquals": {"aws:ResourceTag/" + owned: {"owned"}},
					"StringLike":   {"aws:ResourceTag/karpenter.sh/nodepool": {"*"}},
				}),
			statement("AllowScopedEC2InstanceActionsWithTags",
				Values{"ec2:RunInstances", "ec2:CreateFleet", "ec2:CreateLaunchTemplate"},
				taggedResources,
				Condition{
					"StringEquals": {"aws:RequestTag/" + owned: {"owned"}, "aws:RequestTag/eks:eks-cluster-name": {cluster}},
					"StringLike":   {"aws:RequestTag/karpenter.sh/nodepool": {"*"}},
				}),
			statement("AllowScopedResourceCreationTagging",
				Values{"ec2:CreateTags"},
				taggedResources,
				Condition{
					"StringEquals": {
						"aws:RequestTag/" + owned:             {"owned"},
						"aws:RequestTag/eks:eks-cluster-name": {cluster},
						"ec2:CreateAction":                    {"RunInstances", "CreateFleet", "CreateLaunchTemplate"},
					},
					"StringLike": {"aws:RequestTag/karpenter.sh/nodepool": {"*"}},
				}),
			statement("AllowScopedResourceTagging",
				Values{"ec2:CreateTags"},
				Values{ec2("instance/*")},
				Condition{
					"StringEquals":              {"aws:ResourceTag/" + owned: {"owned"}},
					"StringLike":                {"aws:ResourceTag/karpenter.sh/nodepool": {"*"}},
					"StringEqualsIfExists":      {"aws:RequestTag/eks:eks-cluster-name": {cluster}},
					"ForAllValues:StringEquals": {"aws:TagKeys": {"eks:eks-cluster-name", "karpenter.sh/nodeclaim", "Name"}},
				}),
			statement("AllowScopedDeletion",
				deletion,
				Values{ec2("instance/*"), ec2("launch-template/*")},
				Condition{
					"StringEquals": {"aws:ResourceTag/" + owned: {"owned"}},
					"StringLike":   {"aws:ResourceTag/karpenter.sh/nodepool": {"*"}},
				}),
		}}},
		{Key: "iam-integration", Name: "IAMIntegration", Document: PolicyDocument{Version: policyVersion, Statement: []Statement{
			statement("AllowPassingInstanceRole",
				Values{"iam:PassRole"},
				p.PassRoleResources,
				Condition{"StringEquals": {"iam:PassedToService": passedToEC2}}),
			statement("AllowScopedInstanceProfileCreationActions",
				Values{"iam:CreateInstanceProfile"},
				Values{instanceProfiles},
				Condition{
					"StringEquals": {
						"aws:RequestTag/" + owned:                      {"owned"},
						"aws:RequestTag/eks:eks-cluster-name":          {cluster},
						"aws:RequestTag/topology.kubernetes.io/region": {region},
					},
					"StringLike": {"aws:RequestTag/karpenter.k8s.aws/ec2nodeclass": {"*"}},
				}),
			statement("AllowScopedInstanceProfileTagActions",
				Values{"iam:TagInstanceProfile"},
				Values{instanceProfiles},
				Condition{
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
			statement("AllowScopedInstanceProfileActions",
				Values{"iam:AddRoleToInstanceProfile", "iam:RemoveRoleFromInstanceProfile", "iam:DeleteInstanceProfile"},
				Values{instanceProfiles},
				Condition{
					"StringEquals": {
						"aws:ResourceTag/" + owned:                      {"owned"},
						"aws:ResourceTag/topology.kubernetes.io/region": {region},
					},
					"StringLike": {"aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass": {"*"}},
				}),
		}}},
		{Key: "eks-integration", Name: "EKSIntegration", Document: PolicyDocument{Version: policyVersion, Statement: []Statement{
			statement("AllowAPIServerEndpointDiscovery", Values{"eks:DescribeCluster"}, Values{clusterARN}, nil),
		}}},
	}
	if p.Interruption {
		policies = append(policies, managedPolicy{Key: "interruption", Name: "Interruption", Document: PolicyDocument{Version: policyVersion, Statement: []Statement{
			statement("AllowInterruptionQueueActions",
				Values{"sqs:DeleteMessage", "sqs:GetQueueUrl", "sqs:ReceiveMessage"},
				Values{p.QueueARN},
				nil),
		}}})
	}
	return append(policies,
		managedPolicy{Key: "zonal-shift", Name: "ZonalShift", Document: PolicyDocument{Version: policyVersion, Statement: []Statement{
			statement("AllowZonalShiftStatusReadOnly",
				Values{"arc-zonal-shift:GetManagedResource"},
				Values{"*"},
				Condition{"StringEquals": {"arc-zonal-shift:ResourceIdentifier": {clusterARN}}}),
		}}},
		managedPolicy{Key: "resource-discovery", Name: "ResourceDiscovery", Document: PolicyDocument{Version: policyVersion, Statement: []Statement{
			statement("AllowRegionalReadActions",
				Values{
					"ec2:DescribeCapacityReservations", "ec2:DescribeImages", "ec2:DescribeInstances", "ec2:DescribeInstanceStatus",
					"ec2:DescribeInstanceTypeOfferings", "ec2:DescribeInstanceTypes", "ec2:DescribeLaunchTemplates",
					"ec2:DescribePlacementGroups", "ec2:DescribeSecurityGroups", "ec2:DescribeSpotPriceHistory", "ec2:DescribeSubnets",
				},
				Values{"*"},
				Condition{"StringEquals": {"aws:RequestedRegion": {region}}}),
			statement("AllowSSMReadActions", Values{"ssm:GetParameter"}, Values{arn(part, "ssm", region, "", "parameter/aws/service/*")}, nil),
			statement("AllowPricingReadActions", Values{"pricing:GetProducts"}, Values{"*"}, nil),
			statement("AllowUnscopedInstanceProfileListAction", Values{"iam:ListInstanceProfiles"}, Values{"*"}, nil),
			statement("AllowInstanceProfileReadActions", Values{"iam:GetInstanceProfile"}, Values{instanceProfiles}, nil),
		}}},
	)
}

// policyName is AWS's name for a controller policy, shortened with a hash
// when the cluster name makes it longer than IAM allows.
func policyName(mp managedPolicy, cluster string) string {
	return joinAWS(maxPolicyName, "KarpenterController"+mp.Name+"Policy", cluster)
}

// passRoleResources are the roles the controller may pass to EC2: the
// cluster's node role and every role under kiso's per-organization path, or
// with an existing instance profile that profile's role only.
func passRoleResources(p plan) Values {
	if p.Spec.NodeRole.ExistingInstanceProfile != nil {
		return Values{p.NodeRoleARN}
	}
	return Values{p.NodeRoleARN, arn(p.Partition, "iam", "", p.Account, "role"+p.NodeRolePath+"*")}
}

// managedPolicyARN is the ARN of an AWS-managed policy in a partition.
func managedPolicyARN(part v1alpha1.Partition, name string) string {
	return arn(part, "iam", "", "aws", "policy/"+name)
}
