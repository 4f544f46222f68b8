package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/utils/ptr"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
)

func TestValidateSpec(t *testing.T) {
	cases := map[string]struct {
		reason string
		mutate func(*v1alpha1.XKarpenterClusterSpec)
		want   []string
	}{
		"ValidSpecPasses": {
			reason: "The defaulted minimal spec has no errors.",
			mutate: func(*v1alpha1.XKarpenterClusterSpec) {},
		},
		"CompleteSpecPasses": {
			reason: "Every optional field set to a valid value.",
			mutate: func(s *v1alpha1.XKarpenterClusterSpec) {
				s.Partition, s.Region = v1alpha1.PartitionGovCloud, "us-gov-west-1"
				s.Tags = map[string]string{"team": "platform", "cost-center": "42"}
				s.Controller = v1alpha1.ControllerIdentity{Identity: v1alpha1.IdentityIRSA, OIDCProviderARN: "arn:aws-us-gov:iam::111122223333:oidc-provider/oidc.eks.us-gov-west-1.amazonaws.com/id/EXAMPLE"}
				s.NodeRole.ExistingInstanceProfile = &v1alpha1.ExistingInstanceProfile{Name: "bootstrap-nodes", RoleARN: "arn:aws-us-gov:iam::111122223333:role/socle/prod/bootstrap-nodes"}
				s.PermissionsBoundary = "arn:aws-us-gov:iam::111122223333:policy/boundaries/crossplane"
				s.Monitoring.Labels = map[string]string{"release": "kube-prometheus-stack"}
			},
		},
		"RequiredFields": {
			reason: "Cluster name, region and account say which cluster this is.",
			mutate: func(s *v1alpha1.XKarpenterClusterSpec) { s.ClusterName, s.Region, s.AccountID = "", "", "" },
			want:   []string{"spec.clusterName: Required value", "spec.region: Required value", "spec.accountId: Required value"},
		},
		"WorkloadClusterWithoutProviderConfig": {
			reason: "The workload cluster's ProviderConfig starts the names of the Objects that reach it.",
			mutate: func(s *v1alpha1.XKarpenterClusterSpec) { s.WorkloadCluster = &v1alpha1.WorkloadCluster{} },
			want:   []string{`spec.workloadCluster.providerConfigName: Invalid value: "": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`},
		},
		"AccountIDNotTwelveDigits": {
			reason: "An AWS account ID is exactly 12 digits.",
			mutate: func(s *v1alpha1.XKarpenterClusterSpec) { s.AccountID = "1234" },
			want:   []string{`spec.accountId: Invalid value: "1234": must be 12 digits`},
		},
		"UnknownPartition": {
			reason: "ARNs and service principals are only known for AWS's three partitions.",
			mutate: func(s *v1alpha1.XKarpenterClusterSpec) { s.Partition = "aws-iso" },
			want:   []string{`spec.partition: Unsupported value: "aws-iso": supported values: "aws", "aws-cn", "aws-us-gov"`},
		},
		"RegionOutsidePartition": {
			reason: "A China region in the aws partition would render ARNs that match nothing.",
			mutate: func(s *v1alpha1.XKarpenterClusterSpec) { s.Region = "cn-north-1" },
			want:   []string{`spec.region: Invalid value: "cn-north-1": is in partition aws-cn, not aws; set spec.partition to aws-cn`},
		},
		"RegionNotARegion": {
			reason: "A region is e.g. eu-west-3, not an availability zone.",
			mutate: func(s *v1alpha1.XKarpenterClusterSpec) { s.Region = "eu-west-3a" },
			want:   []string{`spec.region: Invalid value: "eu-west-3a": must be an AWS region, e.g. eu-west-3`},
		},
		"ClusterNameTooLongForQueue": {
			reason: "Taking over AWS's setup, the queue is named after the cluster and SQS allows 80 characters, EKS 100.",
			mutate: func(s *v1alpha1.XKarpenterClusterSpec) {
				s.ClusterName, s.Naming.TakeOver = strings.Repeat("c", 81), v1alpha1.TakeOverAWSGettingStarted
			},
			want: []string{`spec.clusterName: Invalid value: "` + strings.Repeat("c", 81) + `": must be at most 80 characters while spec.interruption.enabled is true and spec.naming.takeOver is AWSGettingStarted: AWS's template names the interruption queue after the cluster, and SQS refuses longer queue names`},
		},
		"LongClusterNameWithKisosQueueName": {
			reason: "kiso's own queue name is shortened with a hash, so any cluster name EKS allows works.",
			mutate: func(s *v1alpha1.XKarpenterClusterSpec) { s.ClusterName = strings.Repeat("c", 100) },
		},
		"LongClusterNameWithoutQueue": {
			reason: "Without interruption there is no queue, so EKS's limit of 100 applies.",
			mutate: func(s *v1alpha1.XKarpenterClusterSpec) {
				s.ClusterName = strings.Repeat("c", 100)
				s.Interruption.Enabled = ptr.To(false)
			},
		},
		"ClusterNameTooLongForEKS": {
			reason: "No EKS cluster has a name over 100 characters.",
			mutate: func(s *v1alpha1.XKarpenterClusterSpec) {
				s.ClusterName = strings.Repeat("c", 101)
				s.Interruption.Enabled = ptr.To(false)
			},
			want: []string{"spec.clusterName: Too long: may not be more than 100 bytes"},
		},
		"ClusterNameWithOtherCharacters": {
			reason: "A dot is neither in an EKS cluster name nor in an SQS queue name.",
			mutate: func(s *v1alpha1.XKarpenterClusterSpec) { s.ClusterName = "prod.eu" },
			want:   []string{`spec.clusterName: Invalid value: "prod.eu": must start with a letter or digit and hold only letters, digits, '-' and '_', as an EKS cluster name does`},
		},
		"BadTags": {
			reason: "Tags follow AWS's rules, and kiso's own keys are not the user's to set.",
			mutate: func(s *v1alpha1.XKarpenterClusterSpec) {
				s.Tags = map[string]string{"aws:owner": "me", "kiso.dev/cluster": "other", "team": "a|b"}
			},
			want: []string{
				"spec.tags[aws:owner]: Forbidden: tag keys starting with aws: are reserved by AWS",
				`spec.tags[team]: Invalid value: "a|b": a tag value may hold only letters, digits, spaces and _ . : / = + - @`,
				"spec.tags[kiso.dev/cluster]: Forbidden: kiso or provider-aws sets this tag on every resource",
			},
		},
		"TooManyTags": {
			reason: "AWS allows 50 tags per resource; kiso and provider-aws use five.",
			mutate: func(s *v1alpha1.XKarpenterClusterSpec) {
				s.Tags = map[string]string{}
				for i := range 46 {
					s.Tags["t"+strings.Repeat("x", i)] = "v"
				}
			},
			want: []string{"spec.tags: Too many: 46: must have at most 45 items"},
		},
		"IRSANeedsTheOIDCProvider": {
			reason: "IRSA's trust policy names the cluster's OIDC provider.",
			mutate: func(s *v1alpha1.XKarpenterClusterSpec) { s.Controller.Identity = v1alpha1.IdentityIRSA },
			want:   []string{"spec.controller.oidcProviderArn: Required value: IRSA trusts the cluster's IAM OIDC provider"},
		},
		"OIDCProviderOfAnotherAccount": {
			reason: "A role trusts an OIDC provider of its own account.",
			mutate: func(s *v1alpha1.XKarpenterClusterSpec) {
				s.Controller = v1alpha1.ControllerIdentity{Identity: v1alpha1.IdentityIRSA, OIDCProviderARN: "arn:aws:iam::999999999999:oidc-provider/oidc.eks.eu-west-3.amazonaws.com/id/EXAMPLE"}
			},
			want: []string{`spec.controller.oidcProviderArn: Invalid value: "arn:aws:iam::999999999999:oidc-provider/oidc.eks.eu-west-3.amazonaws.com/id/EXAMPLE": must be in the cluster's partition aws and account 111122223333`},
		},
		"OIDCProviderNotAnOIDCProvider": {
			reason: "A role ARN is no OIDC provider.",
			mutate: func(s *v1alpha1.XKarpenterClusterSpec) {
				s.Controller = v1alpha1.ControllerIdentity{Identity: v1alpha1.IdentityIRSA, OIDCProviderARN: "arn:aws:iam::111122223333:role/oidc"}
			},
			want: []string{`spec.controller.oidcProviderArn: Invalid value: "arn:aws:iam::111122223333:role/oidc": must be an IAM OIDC provider ARN, arn:<partition>:iam::<account>:oidc-provider/<issuer>`},
		},
		"OIDCProviderWithPodIdentity": {
			reason: "An OIDC provider with Pod Identity is a half-done switch to IRSA; say so rather than ignore it.",
			mutate: func(s *v1alpha1.XKarpenterClusterSpec) {
				s.Controller.OIDCProviderARN = "arn:aws:iam::111122223333:oidc-provider/oidc.eks.eu-west-3.amazonaws.com/id/EXAMPLE"
			},
			want: []string{"spec.controller.oidcProviderArn: Forbidden: only with spec.controller.identity IRSA; Pod Identity needs no OIDC provider"},
		},
		"UnknownIdentity": {
			reason: "Pod Identity or IRSA.",
			mutate: func(s *v1alpha1.XKarpenterClusterSpec) { s.Controller.Identity = "Kiam" },
			want:   []string{`spec.controller.identity: Unsupported value: "Kiam": supported values: "PodIdentity", "IRSA"`},
		},
		"ExistingInstanceProfileIncomplete": {
			reason: "The controller may pass only the profile's role, so kiso must know it.",
			mutate: func(s *v1alpha1.XKarpenterClusterSpec) {
				s.NodeRole.ExistingInstanceProfile = &v1alpha1.ExistingInstanceProfile{Name: "bootstrap nodes"}
			},
			want: []string{
				`spec.nodeRole.existingInstanceProfile.name: Invalid value: "bootstrap nodes": an instance profile name holds only letters, digits and + = , . @ _ -`,
				"spec.nodeRole.existingInstanceProfile.roleArn: Required value: the role in the instance profile, which the controller may pass to EC2",
			},
		},
		"ExistingRoleOfAnotherPartition": {
			reason: "The role must be one this account's EC2 can use.",
			mutate: func(s *v1alpha1.XKarpenterClusterSpec) {
				s.NodeRole.ExistingInstanceProfile = &v1alpha1.ExistingInstanceProfile{Name: "nodes", RoleARN: "arn:aws-cn:iam::111122223333:role/nodes"}
			},
			want: []string{`spec.nodeRole.existingInstanceProfile.roleArn: Invalid value: "arn:aws-cn:iam::111122223333:role/nodes": must be in the cluster's partition aws and account 111122223333`},
		},
		"PermissionsBoundaryNotAPolicy": {
			reason: "A permissions boundary is a managed policy.",
			mutate: func(s *v1alpha1.XKarpenterClusterSpec) {
				s.PermissionsBoundary = "arn:aws:iam::111122223333:role/boundary"
			},
			want: []string{`spec.permissionsBoundary: Invalid value: "arn:aws:iam::111122223333:role/boundary": must be a managed policy ARN, arn:<partition>:iam::<account>:policy/<name>`},
		},
		"AWSManagedPermissionsBoundary": {
			reason: "An AWS-managed policy may be a boundary too.",
			mutate: func(s *v1alpha1.XKarpenterClusterSpec) {
				s.PermissionsBoundary = "arn:aws:iam::aws:policy/PowerUserAccess"
			},
		},
		"PermissionsBoundaryKisoMayRewrite": {
			reason: "A boundary under the IAM path kiso writes its policies to bounds nothing: the provider may rewrite it.",
			mutate: func(s *v1alpha1.XKarpenterClusterSpec) {
				s.PermissionsBoundary = "arn:aws:iam::111122223333:policy/kiso/prod/boundary"
			},
			want: []string{`spec.permissionsBoundary: Forbidden: arn:aws:iam::111122223333:policy/kiso/prod/boundary is under /kiso/, where kiso writes its own policies: a boundary the provider may rewrite bounds nothing; keep it on a path of its own (docs/install.md: policy/kiso-boundary/kiso-roles)`},
		},
		"PermissionsBoundaryUnderTheNamedIAMPath": {
			reason: "With naming.iamPath, that path is where kiso writes.",
			mutate: func(s *v1alpha1.XKarpenterClusterSpec) {
				s.Naming.IAMPath = "/platform/karpenter/"
				s.PermissionsBoundary = "arn:aws:iam::111122223333:policy/platform/karpenter/boundary"
			},
			want: []string{`spec.permissionsBoundary: Forbidden: arn:aws:iam::111122223333:policy/platform/karpenter/boundary is under /platform/karpenter/, where kiso writes its own policies: a boundary the provider may rewrite bounds nothing; keep it on a path of its own (docs/install.md: policy/kiso-boundary/kiso-roles)`},
		},
		"BadKubernetesNames": {
			reason: "Namespace, service account and ProviderConfig are Kubernetes names.",
			mutate: func(s *v1alpha1.XKarpenterClusterSpec) {
				s.Karpenter = v1alpha1.KarpenterInstall{Namespace: "Kube_System", ServiceAccount: "karpenter!"}
				s.ProviderConfigName = "AWS"
			},
			want: []string{
				`spec.providerConfigName: Invalid value: "AWS": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
				`spec.karpenter.namespace: Invalid value: "Kube_System": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
				`spec.karpenter.serviceAccount: Invalid value: "karpenter!": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
			},
		},
		"MonitoringLabelManagedBy": {
			reason: "kiso's managed-by label marks every object it composes.",
			mutate: func(s *v1alpha1.XKarpenterClusterSpec) {
				s.Monitoring.Labels = map[string]string{"app.kubernetes.io/managed-by": "helm"}
			},
			want: []string{"spec.monitoring.labels[app.kubernetes.io/managed-by]: Forbidden: kiso sets this label on every object it composes"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := validSpec()
			tc.mutate(&spec)
			var got []string
			for _, e := range validateSpec(spec) {
				got = append(got, e.Error())
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nvalidateSpec(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
