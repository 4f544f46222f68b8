package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/aws"
)

func TestControllerTrustPolicies(t *testing.T) {
	irsa := func(partition v1alpha1.Partition, oidc string) v1alpha1.XKarpenterClusterSpec {
		s := validSpec()
		s.Partition = partition
		s.Controller = v1alpha1.ControllerIdentity{Identity: v1alpha1.IdentityIRSA, OIDCProviderARN: oidc}
		s.Karpenter = v1alpha1.KarpenterInstall{Namespace: "karpenter", ServiceAccount: "karpenter-controller"}
		return s
	}
	cases := map[string]struct {
		reason string
		got    aws.PolicyDocument
		want   string
	}{
		"PodIdentity": {
			reason: "EKS's Pod Identity agent assumes the role and tags the session.",
			got:    controllerTrust(validSpec()),
			want:   `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"pods.eks.amazonaws.com"},"Action":["sts:AssumeRole","sts:TagSession"]}]}`,
		},
		"IRSA": {
			reason: "IRSA trusts the OIDC provider, for the controller's service account only and the STS audience.",
			got:    controllerTrust(irsa(v1alpha1.PartitionAWS, "arn:aws:iam::111122223333:oidc-provider/oidc.eks.eu-west-3.amazonaws.com/id/EXAMPLED539D4633E53DE1B71EXAMPLE")),
			want: `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Federated":"arn:aws:iam::111122223333:oidc-provider/oidc.eks.eu-west-3.amazonaws.com/id/EXAMPLED539D4633E53DE1B71EXAMPLE"},` +
				`"Action":"sts:AssumeRoleWithWebIdentity","Condition":{"StringEquals":{` +
				`"oidc.eks.eu-west-3.amazonaws.com/id/EXAMPLED539D4633E53DE1B71EXAMPLE:aud":"sts.amazonaws.com",` +
				`"oidc.eks.eu-west-3.amazonaws.com/id/EXAMPLED539D4633E53DE1B71EXAMPLE:sub":"system:serviceaccount:karpenter:karpenter-controller"}}}]}`,
		},
		"IRSAInChina": {
			reason: "The issuer is whatever follows oidc-provider/, in China too.",
			got:    controllerTrust(irsa(v1alpha1.PartitionChina, "arn:aws-cn:iam::111122223333:oidc-provider/oidc.eks.cn-north-1.amazonaws.com.cn/id/EXAMPLE")),
			want: `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Federated":"arn:aws-cn:iam::111122223333:oidc-provider/oidc.eks.cn-north-1.amazonaws.com.cn/id/EXAMPLE"},` +
				`"Action":"sts:AssumeRoleWithWebIdentity","Condition":{"StringEquals":{` +
				`"oidc.eks.cn-north-1.amazonaws.com.cn/id/EXAMPLE:aud":"sts.amazonaws.com",` +
				`"oidc.eks.cn-north-1.amazonaws.com.cn/id/EXAMPLE:sub":"system:serviceaccount:karpenter:karpenter-controller"}}}]}`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.got.JSON()); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
