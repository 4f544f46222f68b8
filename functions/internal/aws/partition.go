package aws

import (
	"strings"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
)

// Partitions are the AWS partitions kiso renders for, in the order error
// messages list them.
var Partitions = v1alpha1.EnumXKarpenterClusterSpecPartition

// URLSuffix is CloudFormation's AWS::URLSuffix for a partition. AWS's
// template trusts ec2.${AWS::URLSuffix} in the node role, which makes the
// EC2 service principal ec2.amazonaws.com.cn in China.
func URLSuffix(p v1alpha1.Partition) string {
	if p == v1alpha1.PartitionChina {
		return "amazonaws.com.cn"
	}
	return "amazonaws.com"
}

// PartitionOfRegion returns the partition a region belongs to.
func PartitionOfRegion(region string) v1alpha1.Partition {
	switch {
	case strings.HasPrefix(region, "cn-"):
		return v1alpha1.PartitionChina
	case strings.HasPrefix(region, "us-gov-"):
		return v1alpha1.PartitionGovCloud
	default:
		return v1alpha1.PartitionAWS
	}
}

// ARN builds an ARN. IAM ARNs have no region; AWS-managed policies have the
// account "aws".
func ARN(partition v1alpha1.Partition, service, region, account, resource string) string {
	return "arn:" + string(partition) + ":" + service + ":" + region + ":" + account + ":" + resource
}
