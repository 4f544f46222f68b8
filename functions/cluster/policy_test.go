package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
)

// awsControllerPolicies is the controller policy of Karpenter's
// getting-started CloudFormation template for v1.15, transcribed statement
// for statement from website/content/en/v1.15/reference/cloudformation.md
// (aws/karpenter-provider-aws@d77d1a3a): the six AWS::IAM::ManagedPolicy
// resources, keyed by the <Name> of KarpenterController<Name>Policy, with
// CloudFormation's substitutions left in.
var awsControllerPolicies = map[string]string{
	"NodeLifecycle": `[
	{"Sid":"AllowScopedEC2InstanceAccessActions","Effect":"Allow",
	 "Resource":["arn:${AWS::Partition}:ec2:${AWS::Region}::image/*","arn:${AWS::Partition}:ec2:${AWS::Region}::snapshot/*",
	  "arn:${AWS::Partition}:ec2:${AWS::Region}:*:security-group/*","arn:${AWS::Partition}:ec2:${AWS::Region}:*:subnet/*",
	  "arn:${AWS::Partition}:ec2:${AWS::Region}:*:capacity-reservation/*","arn:${AWS::Partition}:ec2:${AWS::Region}:*:placement-group/*"],
	 "Action":["ec2:RunInstances","ec2:CreateFleet"]},
	{"Sid":"AllowScopedEC2LaunchTemplateAccessActions","Effect":"Allow",
	 "Resource":"arn:${AWS::Partition}:ec2:${AWS::Region}:*:launch-template/*",
	 "Action":["ec2:RunInstances","ec2:CreateFleet"],
	 "Condition":{"StringEquals":{"aws:ResourceTag/kubernetes.io/cluster/${ClusterName}":"owned"},
	  "StringLike":{"aws:ResourceTag/karpenter.sh/nodepool":"*"}}},
	{"Sid":"AllowScopedEC2InstanceActionsWithTags","Effect":"Allow",
	 "Resource":["arn:${AWS::Partition}:ec2:${AWS::Region}:*:fleet/*","arn:${AWS::Partition}:ec2:${AWS::Region}:*:instance/*",
	  "arn:${AWS::Partition}:ec2:${AWS::Region}:*:volume/*","arn:${AWS::Partition}:ec2:${AWS::Region}:*:network-interface/*",
	  "arn:${AWS::Partition}:ec2:${AWS::Region}:*:launch-template/*","arn:${AWS::Partition}:ec2:${AWS::Region}:*:spot-instances-request/*"],
	 "Action":["ec2:RunInstances","ec2:CreateFleet","ec2:CreateLaunchTemplate"],
	 "Condition":{"StringEquals":{"aws:RequestTag/kubernetes.io/cluster/${ClusterName}":"owned","aws:RequestTag/eks:eks-cluster-name":"${ClusterName}"},
	  "StringLike":{"aws:RequestTag/karpenter.sh/nodepool":"*"}}},
	{"Sid":"AllowScopedResourceCreationTagging","Effect":"Allow",
	 "Resource":["arn:${AWS::Partition}:ec2:${AWS::Region}:*:fleet/*","arn:${AWS::Partition}:ec2:${AWS::Region}:*:instance/*",
	  "arn:${AWS::Partition}:ec2:${AWS::Region}:*:volume/*","arn:${AWS::Partition}:ec2:${AWS::Region}:*:network-interface/*",
	  "arn:${AWS::Partition}:ec2:${AWS::Region}:*:launch-template/*","arn:${AWS::Partition}:ec2:${AWS::Region}:*:spot-instances-request/*"],
	 "Action":"ec2:CreateTags",
	 "Condition":{"StringEquals":{"aws:RequestTag/kubernetes.io/cluster/${ClusterName}":"owned","aws:RequestTag/eks:eks-cluster-name":"${ClusterName}",
	   "ec2:CreateAction":["RunInstances","CreateFleet","CreateLaunchTemplate"]},
	  "StringLike":{"aws:RequestTag/karpenter.sh/nodepool":"*"}}},
	{"Sid":"AllowScopedResourceTagging","Effect":"Allow",
	 "Resource":"arn:${AWS::Partition}:ec2:${AWS::Region}:*:instance/*",
	 "Action":"ec2:CreateTags",
	 "Condition":{"StringEquals":{"aws:ResourceTag/kubernetes.io/cluster/${ClusterName}":"owned"},
	  "StringLike":{"aws:ResourceTag/karpenter.sh/nodepool":"*"},
	  "StringEqualsIfExists":{"aws:RequestTag/eks:eks-cluster-name":"${ClusterName}"},
	  "ForAllValues:StringEquals":{"aws:TagKeys":["eks:eks-cluster-name","karpenter.sh/nodeclaim","Name"]}}},
	{"Sid":"AllowScopedDeletion","Effect":"Allow",
	 "Resource":["arn:${AWS::Partition}:ec2:${AWS::Region}:*:instance/*","arn:${AWS::Partition}:ec2:${AWS::Region}:*:launch-template/*"],
	 "Action":["ec2:TerminateInstances","ec2:RebootInstances","ec2:DeleteLaunchTemplate"],
	 "Condition":{"StringEquals":{"aws:ResourceTag/kubernetes.io/cluster/${ClusterName}":"owned"},
	  "StringLike":{"aws:ResourceTag/karpenter.sh/nodepool":"*"}}}]`,
	"IAMIntegration": `[
	{"Sid":"AllowPassingInstanceRole","Effect":"Allow",
	 "Resource":"${KarpenterNodeRole.Arn}",
	 "Action":"iam:PassRole",
	 "Condition":{"StringEquals":{"iam:PassedToService":["ec2.amazonaws.com","ec2.amazonaws.com.cn"]}}},
	{"Sid":"AllowScopedInstanceProfileCreationActions","Effect":"Allow",
	 "Resource":"arn:${AWS::Partition}:iam::${AWS::AccountId}:instance-profile/*",
	 "Action":["iam:CreateInstanceProfile"],
	 "Condition":{"StringEquals":{"aws:RequestTag/kubernetes.io/cluster/${ClusterName}":"owned","aws:RequestTag/eks:eks-cluster-name":"${ClusterName}",
	   "aws:RequestTag/topology.kubernetes.io/region":"${AWS::Region}"},
	  "StringLike":{"aws:RequestTag/karpenter.k8s.aws/ec2nodeclass":"*"}}},
	{"Sid":"AllowScopedInstanceProfileTagActions","Effect":"Allow",
	 "Resource":"arn:${AWS::Partition}:iam::${AWS::AccountId}:instance-profile/*",
	 "Action":["iam:TagInstanceProfile"],
	 "Condition":{"StringEquals":{"aws:ResourceTag/kubernetes.io/cluster/${ClusterName}":"owned","aws:ResourceTag/topology.kubernetes.io/region":"${AWS::Region}",
	   "aws:RequestTag/kubernetes.io/cluster/${ClusterName}":"owned","aws:RequestTag/eks:eks-cluster-name":"${ClusterName}",
	   "aws:RequestTag/topology.kubernetes.io/region":"${AWS::Region}"},
	  "StringLike":{"aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass":"*","aws:RequestTag/karpenter.k8s.aws/ec2nodeclass":"*"}}},
	{"Sid":"AllowScopedInstanceProfileActions","Effect":"Allow",
	 "Resource":"arn:${AWS::Partition}:iam::${AWS::AccountId}:instance-profile/*",
	 "Action":["iam:AddRoleToInstanceProfile","iam:RemoveRoleFromInstanceProfile","iam:DeleteInstanceProfile"],
	 "Condition":{"StringEquals":{"aws:ResourceTag/kubernetes.io/cluster/${ClusterName}":"owned","aws:ResourceTag/topology.kubernetes.io/region":"${AWS::Region}"},
	  "StringLike":{"aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass":"*"}}}]`,
	"EKSIntegration": `[
	{"Sid":"AllowAPIServerEndpointDiscovery","Effect":"Allow",
	 "Resource":"arn:${AWS::Partition}:eks:${AWS::Region}:${AWS::AccountId}:cluster/${ClusterName}",
	 "Action":"eks:DescribeCluster"}]`,
	"Interruption": `[
	{"Sid":"AllowInterruptionQueueActions","Effect":"Allow",
	 "Resource":"${KarpenterInterruptionQueue.Arn}",
	 "Action":["sqs:DeleteMessage","sqs:GetQueueUrl","sqs:ReceiveMessage"]}]`,
	"ZonalShift": `[
	{"Sid":"AllowZonalShiftStatusReadOnly","Effect":"Allow",
	 "Resource":"*",
	 "Action":["arc-zonal-shift:GetManagedResource"],
	 "Condition":{"StringEquals":{"arc-zonal-shift:ResourceIdentifier":"arn:${AWS::Partition}:eks:${AWS::Region}:${AWS::AccountId}:cluster/${ClusterName}"}}}]`,
	"ResourceDiscovery": `[
	{"Sid":"AllowRegionalReadActions","Effect":"Allow",
	 "Resource":"*",
	 "Action":["ec2:DescribeCapacityReservations","ec2:DescribeImages","ec2:DescribeInstances","ec2:DescribeInstanceStatus",
	  "ec2:DescribeInstanceTypeOfferings","ec2:DescribeInstanceTypes","ec2:DescribeLaunchTemplates","ec2:DescribePlacementGroups",
	  "ec2:DescribeSecurityGroups","ec2:DescribeSpotPriceHistory","ec2:DescribeSubnets"],
	 "Condition":{"StringEquals":{"aws:RequestedRegion":"${AWS::Region}"}}},
	{"Sid":"AllowSSMReadActions","Effect":"Allow",
	 "Resource":"arn:${AWS::Partition}:ssm:${AWS::Region}::parameter/aws/service/*",
	 "Action":"ssm:GetParameter"},
	{"Sid":"AllowPricingReadActions","Effect":"Allow","Resource":"*","Action":"pricing:GetProducts"},
	{"Sid":"AllowUnscopedInstanceProfileListAction","Effect":"Allow","Resource":"*","Action":"iam:ListInstanceProfiles"},
	{"Sid":"AllowInstanceProfileReadActions","Effect":"Allow",
	 "Resource":"arn:${AWS::Partition}:iam::${AWS::AccountId}:instance-profile/*",
	 "Action":"iam:GetInstanceProfile"}]`,
}

// awsStatements substitutes CloudFormation's parameters into AWS's
// statements of one policy and returns them in a canonical form.
func awsStatements(t *testing.T, policy string, sub map[string]string) []map[string]any {
	t.Helper()
	doc := awsControllerPolicies[policy]
	for k, v := range sub {
		doc = strings.ReplaceAll(doc, k, v)
	}
	var statements []map[string]any
	if err := json.Unmarshal([]byte(doc), &statements); err != nil {
		t.Fatalf("bad AWS statements of %s: %v", policy, err)
	}
	return canonical(statements)
}

// renderedStatements returns the statements kiso renders for a policy, in
// the same canonical form.
func renderedStatements(t *testing.T, mp managedPolicy) []map[string]any {
	t.Helper()
	var doc struct {
		Version   string
		Statement []map[string]any
	}
	if err := json.Unmarshal([]byte(mp.Document.JSON()), &doc); err != nil {
		t.Fatalf("rendered %s policy is not JSON: %v", mp.Name, err)
	}
	if doc.Version != "2012-10-17" {
		t.Errorf("%s: Version %q, want 2012-10-17", mp.Name, doc.Version)
	}
	return canonical(doc.Statement)
}

// canonical makes every single value a one-element list, as IAM reads
// "a" and ["a"] the same.
func canonical(statements []map[string]any) []map[string]any {
	var list func(v any) any
	list = func(v any) any {
		switch x := v.(type) {
		case string:
			return []any{x}
		case map[string]any:
			out := map[string]any{}
			for k, vv := range x {
				out[k] = list(vv)
			}
			return out
		default:
			return x
		}
	}
	for _, s := range statements {
		for _, k := range []string{"Action", "Resource", "Condition"} {
			if v, ok := s[k]; ok {
				s[k] = list(v)
			}
		}
	}
	return statements
}

func TestControllerPolicyIsAWSsStatementForStatement(t *testing.T) {
	for _, tc := range []struct {
		partition v1alpha1.Partition
		region    string
	}{
		{v1alpha1.PartitionAWS, "eu-west-3"},
		{v1alpha1.PartitionChina, "cn-north-1"},
		{v1alpha1.PartitionGovCloud, "us-gov-west-1"},
	} {
		t.Run(string(tc.partition), func(t *testing.T) {
			spec := validSpec()
			spec.Partition, spec.Region = tc.partition, tc.region
			spec.Features.RebootForRepair = true
			p := newPlan(spec)
			sub := map[string]string{
				"${AWS::Partition}": string(tc.partition),
				"${AWS::Region}":    tc.region,
				"${AWS::AccountId}": "111122223333",
				"${ClusterName}":    "prod",
				// kiso's names and path, never the template's (no adoption).
				"${KarpenterInterruptionQueue.Arn}": "arn:" + string(tc.partition) + ":sqs:" + tc.region + ":111122223333:kiso-prod-karpenter-interruption",
				// kiso's one deliberate change to a statement: PassRole on
				// the cluster's node role and on the path of per-organization
				// roles.
				`"${KarpenterNodeRole.Arn}"`: `["arn:` + string(tc.partition) + `:iam::111122223333:role/kiso/prod/kiso-prod-karpenter-node","arn:` + string(tc.partition) + `:iam::111122223333:role/kiso/prod/organizations/*"]`,
			}

			got := controllerPolicies(p)
			var gotNames []string
			for _, mp := range got {
				gotNames = append(gotNames, mp.Name)
			}
			if diff := cmp.Diff([]string{"NodeLifecycle", "IAMIntegration", "EKSIntegration", "Interruption", "ZonalShift", "ResourceDiscovery"}, gotNames); diff != "" {
				t.Fatalf("policies, in AWS's order: -want, +got:\n%s", diff)
			}
			for _, mp := range got {
				want := awsStatements(t, mp.Name, sub)
				have := renderedStatements(t, mp)
				if len(want) != len(have) {
					t.Errorf("%s: %d statements, AWS has %d", mp.Name, len(have), len(want))
					continue
				}
				for i := range want {
					if diff := cmp.Diff(want[i], have[i]); diff != "" {
						t.Errorf("%s statement %d (%v): -AWS, +kiso:\n%s", mp.Name, i, want[i]["Sid"], diff)
					}
				}
				taken := awsNames{prefix: defaultNamePrefix("prod"), cluster: "prod", takeOver: true}
				if n := taken.policy(mp); n != "KarpenterController"+mp.Name+"Policy-prod" {
					t.Errorf("%s: taken-over AWS name %q, want KarpenterController%sPolicy-prod", mp.Name, n, mp.Name)
				}
			}
		})
	}
}

func TestControllerPolicyVariants(t *testing.T) {
	sidActions := func(p plan, policy, sid string) any {
		for _, mp := range controllerPolicies(p) {
			if mp.Name != policy {
				continue
			}
			for _, s := range renderedStatements(t, mp) {
				if s["Sid"] == sid {
					return map[string]any{"Action": s["Action"], "Resource": s["Resource"]}
				}
			}
		}
		return nil
	}
	cases := map[string]struct {
		reason string
		mutate func(*v1alpha1.XKarpenterClusterSpec)
		policy string
		sid    string
		want   any
	}{
		"RebootOnlyWithRebootForRepair": {
			reason: "ec2:RebootInstances is AWS's v1.15 addition for the alpha rebootForRepair gate; without the gate kiso leaves it out.",
			mutate: func(*v1alpha1.XKarpenterClusterSpec) {},
			policy: "NodeLifecycle", sid: "AllowScopedDeletion",
			want: map[string]any{
				"Action":   []any{"ec2:TerminateInstances", "ec2:DeleteLaunchTemplate"},
				"Resource": []any{"arn:aws:ec2:eu-west-3:*:instance/*", "arn:aws:ec2:eu-west-3:*:launch-template/*"},
			},
		},
		"ExistingInstanceProfilePassesItsRoleOnly": {
			reason: "Under a permissions boundary the controller may pass the existing profile's role and nothing else.",
			mutate: func(s *v1alpha1.XKarpenterClusterSpec) {
				s.NodeRole.ExistingInstanceProfile = &v1alpha1.ExistingInstanceProfile{Name: "bootstrap-nodes", RoleARN: "arn:aws:iam::111122223333:role/socle/prod/bootstrap-nodes"}
			},
			policy: "IAMIntegration", sid: "AllowPassingInstanceRole",
			want: map[string]any{"Action": []any{"iam:PassRole"}, "Resource": []any{"arn:aws:iam::111122223333:role/socle/prod/bootstrap-nodes"}},
		},
		"NoInterruptionPolicyWithoutQueue": {
			reason: "Without a queue there is nothing to read: the InterruptionPolicy is not rendered.",
			mutate: func(s *v1alpha1.XKarpenterClusterSpec) { s.Interruption.Enabled = ptr.To(false) },
			policy: "Interruption", sid: "AllowInterruptionQueueActions",
			want: nil,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := validSpec()
			tc.mutate(&spec)
			if diff := cmp.Diff(tc.want, sidActions(newPlan(spec), tc.policy, tc.sid)); diff != "" {
				t.Errorf("%s\n%s %s: -want, +got:\n%s", tc.reason, tc.policy, tc.sid, diff)
			}
		})
	}
}

func TestControllerPoliciesFitIAMsSizeLimit(t *testing.T) {
	// IAM refuses a managed policy over 6,144 characters (whitespace not
	// counted); the longest cluster name EKS allows makes the longest ARNs.
	spec := validSpec()
	spec.ClusterName = strings.Repeat("c", maxClusterName)
	spec.Interruption.Enabled = ptr.To(false)
	spec.Features.RebootForRepair = true
	for _, mp := range controllerPolicies(newPlan(spec)) {
		if n := len(mp.Document.JSON()); n > 6144 {
			t.Errorf("%s: %d characters, IAM allows 6144", mp.Name, n)
		}
		for _, takeOver := range []bool{false, true} {
			names := awsNames{prefix: defaultNamePrefix(spec.ClusterName), cluster: spec.ClusterName, takeOver: takeOver}
			if n := len(names.policy(mp)); n > maxPolicyName {
				t.Errorf("%s (take over %t): name of %d characters, IAM allows %d", mp.Name, takeOver, n, maxPolicyName)
			}
		}
	}
}
