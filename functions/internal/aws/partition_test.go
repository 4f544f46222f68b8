package aws

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
)

func TestPartitionOfRegion(t *testing.T) {
	cases := map[string]struct {
		reason string
		region string
		want   v1alpha1.Partition
	}{
		"Commercial": {reason: "A region with neither prefix is in the aws partition.", region: "eu-west-3", want: v1alpha1.PartitionAWS},
		"China":      {reason: "cn- regions are in aws-cn.", region: "cn-north-1", want: v1alpha1.PartitionChina},
		"GovCloud":   {reason: "us-gov- regions are in aws-us-gov.", region: "us-gov-west-1", want: v1alpha1.PartitionGovCloud},
		"USEast":     {reason: "us- alone is not GovCloud.", region: "us-east-1", want: v1alpha1.PartitionAWS},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := PartitionOfRegion(tc.region); got != tc.want {
				t.Errorf("%s\nPartitionOfRegion(%q): %q, want %q", tc.reason, tc.region, got, tc.want)
			}
		})
	}
}

func TestURLSuffix(t *testing.T) {
	got := map[v1alpha1.Partition]string{}
	for _, p := range Partitions {
		got[v1alpha1.Partition(p)] = URLSuffix(v1alpha1.Partition(p))
	}
	want := map[v1alpha1.Partition]string{
		v1alpha1.PartitionAWS:      "amazonaws.com",
		v1alpha1.PartitionChina:    "amazonaws.com.cn",
		v1alpha1.PartitionGovCloud: "amazonaws.com",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("URL suffix of every partition: -want, +got:\n%s", diff)
	}
}

func TestARN(t *testing.T) {
	cases := map[string]struct {
		reason string
		got    string
		want   string
	}{
		"IAMHasNoRegion": {
			reason: "An IAM ARN leaves the region empty.",
			got:    ARN{Partition: v1alpha1.PartitionAWS, Service: ServiceIAM, Account: "111122223333", Resource: "role/KarpenterNodeRole-prod"}.String(),
			want:   "arn:aws:iam::111122223333:role/KarpenterNodeRole-prod",
		},
		"Regional": {
			reason: "A regional ARN names its partition, region and account.",
			got:    ARN{Partition: v1alpha1.PartitionGovCloud, Service: "sqs", Region: "us-gov-west-1", Account: "111122223333", Resource: "prod"}.String(),
			want:   "arn:aws-us-gov:sqs:us-gov-west-1:111122223333:prod",
		},
		"RoleUnderAPath": {
			reason: "A role's ARN holds its path between role and its name.",
			got:    RoleARN(v1alpha1.PartitionChina, "111122223333", "/kiso/", "KarpenterNodeRole-prod"),
			want:   "arn:aws-cn:iam::111122223333:role/kiso/KarpenterNodeRole-prod",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("%s\ngot %q, want %q", tc.reason, tc.got, tc.want)
			}
		})
	}
}
