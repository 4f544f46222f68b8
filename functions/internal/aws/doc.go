// Package aws holds the AWS pieces kiso's functions share: partitions and
// ARNs, IAM policy documents that always render to the same JSON, and the
// node role's trust policy and AWS-managed policies as AWS's Karpenter
// template writes them, and tags validated as AWS validates them.
package aws
