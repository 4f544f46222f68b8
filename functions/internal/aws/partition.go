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

// ServiceIAM is IAM's service in an ARN.
const ServiceIAM = "iam"

// An ARN names an AWS resource. IAM ARNs have no region; AWS-managed policies have the account "aws".
type ARN struct {
	Partition                          v1alpha1.Partition
	Service, Region, Account, Resource string
}

// RoleARN is the ARN of the IAM role name under path ("/" or "/kiso/"): IAM is global, so it names no region.
func RoleARN(partition v1alpha1.Partition, account, path, name string) string {
	return ARN{Partition: partition, Service: ServiceIAM, Account: account, Resource: "role" + path + name}.String()
}

// String is the ARN as AWS writes it.
func (a ARN) String() string {
	return "arn:" + string(a.Partition) + ":" + a.Service + ":" + a.Region + ":" + a.Account + ":" + a.Resource
}
