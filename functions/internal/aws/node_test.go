package aws

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
)

func TestNodeTrust(t *testing.T) {
	cases := map[string]struct {
		reason    string
		partition v1alpha1.Partition
		want      string
	}{
		"NodeRoleTrustsEC2": {
			reason:    "AWS's template trusts ec2.${AWS::URLSuffix}: ec2.amazonaws.com outside China.",
			partition: v1alpha1.PartitionAWS,
			want:      `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`,
		},
		"NodeRoleTrustsEC2InGovCloud": {
			reason:    "GovCloud's URL suffix is amazonaws.com.",
			partition: v1alpha1.PartitionGovCloud,
			want:      `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`,
		},
		"NodeRoleTrustsEC2InChina": {
			reason:    "China's URL suffix is amazonaws.com.cn.",
			partition: v1alpha1.PartitionChina,
			want:      `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com.cn"},"Action":"sts:AssumeRole"}]}`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, NodeTrust(tc.partition).JSON()); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestNodePoliciesAreAWSsManagedPolicies(t *testing.T) {
	want := map[v1alpha1.Partition][]string{
		v1alpha1.PartitionAWS: {
			"arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy", "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy",
			"arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryPullOnly", "arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore",
		},
		v1alpha1.PartitionChina: {
			"arn:aws-cn:iam::aws:policy/AmazonEKSWorkerNodePolicy", "arn:aws-cn:iam::aws:policy/AmazonEKS_CNI_Policy",
			"arn:aws-cn:iam::aws:policy/AmazonEC2ContainerRegistryPullOnly", "arn:aws-cn:iam::aws:policy/AmazonSSMManagedInstanceCore",
		},
	}
	for partition, w := range want {
		t.Run(string(partition), func(t *testing.T) {
			var got []string
			for _, np := range NodePolicies {
				got = append(got, ManagedPolicyARN(partition, np.Name))
			}
			if diff := cmp.Diff(w, got); diff != "" {
				t.Errorf("AWS-managed node policies, in AWS's order: -want, +got:\n%s", diff)
			}
		})
	}
}
