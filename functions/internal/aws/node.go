package aws

import (
	"github.com/kiso-dev/kiso/apis/v1alpha1"
)

// NodeTrust is a node role's trust policy: AWS's template trusts
// ec2.${AWS::URLSuffix}.
func NodeTrust(partition v1alpha1.Partition) PolicyDocument {
	return PolicyDocument{Version: PolicyVersion, Statement: []Statement{{
		Effect:    Allow,
		Principal: &Principal{Service: Values{"ec2." + URLSuffix(partition)}},
		Action:    Values{"sts:AssumeRole"},
	}}}
}

// NodePolicies are the AWS-managed policies AWS's template attaches to the
// node role, keyed by the suffix of the names of the composed resources
// that attach them.
var NodePolicies = []struct{ Key, Name string }{
	{"worker-node", "AmazonEKSWorkerNodePolicy"},
	{"cni", "AmazonEKS_CNI_Policy"},
	{"ecr-pull", "AmazonEC2ContainerRegistryPullOnly"},
	{"ssm", "AmazonSSMManagedInstanceCore"},
}

// ManagedPolicyARN is the ARN of an AWS-managed policy in a partition.
func ManagedPolicyARN(partition v1alpha1.Partition, name string) string {
	return ARN{Partition: partition, Service: ServiceIAM, Account: "aws", Resource: "policy/" + name}.String()
}
