package examples_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
)

// kisoRolesBoundary is the permissions boundary docs/install.md has the platform create, outside every path the
// provider may write, and name in each cluster's spec.permissionsBoundary.
var kisoRolesBoundary = filepath.Join("examples", "iam", "kiso-roles-boundary.json")

// The account, cluster and ARNs the escalations are tried in: the platform's cluster prod-eu, its boundary, and
// what an attacker holding provider-aws's role would aim at.
const (
	escalationAccount = "111122223333"
	platformsBoundary = "arn:aws:iam::111122223333:policy/kiso-boundary/kiso-roles"
	adminPolicy       = "arn:aws:iam::aws:policy/AdministratorAccess"
	kisoNodeRole      = "arn:aws:iam::111122223333:role/kiso/prod-eu/kiso-prod-eu-karpenter-node"
	providersOwnRole  = "arn:aws:iam::111122223333:role/crossplane-provider-aws"
	otherClusterARN   = "arn:aws:eks:eu-west-3:111122223333:cluster/payments"
	platformCluster   = "arn:aws:eks:eu-west-3:111122223333:cluster/prod-eu"
)

// withBoundary is the context of a call on a role with that permissions boundary.
func withBoundary(b string) map[string]string { return map[string]string{"iam:PermissionsBoundary": b} }

// escalations are the steps of known paths to more privilege that TestProviderPolicyRefusesEveryEscalation tries.
var escalations = map[string]request{
	"a role under /kiso/ without a boundary": {Action: "iam:CreateRole", Resource: "arn:aws:iam::111122223333:role/kiso/x/admin", Context: map[string]string{}},
	"a role under /kiso/ with a boundary of its own": {Action: "iam:CreateRole", Resource: "arn:aws:iam::111122223333:role/kiso/x/admin",
		Context: withBoundary("arn:aws:iam::111122223333:policy/kiso/x/wide-open")},
	"a role under /kiso/ bounded by an AWS managed policy":                      {Action: "iam:CreateRole", Resource: "arn:aws:iam::111122223333:role/kiso/x/admin", Context: withBoundary(adminPolicy)},
	"another boundary on kiso's role":                                           {Action: "iam:PutRolePermissionsBoundary", Resource: kisoNodeRole, Context: withBoundary(adminPolicy)},
	"the boundary removed from kiso's role":                                     {Action: "iam:DeleteRolePermissionsBoundary", Resource: kisoNodeRole, Context: withBoundary(platformsBoundary)},
	"a new version of the boundary":                                             {Action: "iam:CreatePolicyVersion", Resource: platformsBoundary},
	"another default version of the boundary":                                   {Action: "iam:SetDefaultPolicyVersion", Resource: platformsBoundary},
	"the boundary deleted":                                                      {Action: "iam:DeletePolicy", Resource: platformsBoundary},
	"a policy created beside the boundary":                                      {Action: "iam:CreatePolicy", Resource: "arn:aws:iam::111122223333:policy/kiso-boundary/wide-open"},
	"the trust of a role under /kiso/ without the boundary (created before it)": {Action: "iam:UpdateAssumeRolePolicy", Resource: kisoNodeRole, Context: map[string]string{}},
	"the trust of the provider's own role":                                      {Action: "iam:UpdateAssumeRolePolicy", Resource: providersOwnRole, Context: withBoundary(platformsBoundary)},
	"AdministratorAccess attached to kiso's role": {Action: "iam:AttachRolePolicy", Resource: kisoNodeRole,
		Context: map[string]string{"iam:PolicyARN": adminPolicy, "iam:PermissionsBoundary": platformsBoundary}},
	"kiso's policy attached to a role without the boundary": {Action: "iam:AttachRolePolicy", Resource: kisoNodeRole,
		Context: map[string]string{"iam:PolicyARN": "arn:aws:iam::111122223333:policy/kiso/prod-eu/kiso-prod-eu-karpenter-node-lifecycle"}},
	"kiso's policy attached to the provider's own role": {Action: "iam:AttachRolePolicy", Resource: providersOwnRole,
		Context: map[string]string{"iam:PolicyARN": "arn:aws:iam::111122223333:policy/kiso/prod-eu/kiso-prod-eu-karpenter-node-lifecycle", "iam:PermissionsBoundary": platformsBoundary}},
	"an inline policy on kiso's role": {Action: "iam:PutRolePolicy", Resource: kisoNodeRole, Context: withBoundary(platformsBoundary)},
	"kiso's role passed to Lambda":    {Action: "iam:PassRole", Resource: kisoNodeRole, Context: map[string]string{"iam:PassedToService": "lambda.amazonaws.com"}},
	"a role outside /kiso/ passed to EC2": {Action: "iam:PassRole", Resource: "arn:aws:iam::111122223333:role/Admin",
		Context: map[string]string{"iam:PassedToService": "ec2.amazonaws.com"}},
	"kiso's role passed to Pod Identity in another team's cluster": {Action: "iam:PassRole", Resource: kisoNodeRole,
		Context: map[string]string{"iam:PassedToService": "pods.eks.amazonaws.com", "iam:AssociatedResourceArn": otherClusterARN}},
	"a Pod Identity association in another team's cluster": {Action: "eks:CreatePodIdentityAssociation", Resource: otherClusterARN},
	"an access entry for a role outside /kiso/": {Action: "eks:CreateAccessEntry", Resource: platformCluster,
		Context: map[string]string{"eks:principalArn": "arn:aws:iam::111122223333:role/Attacker", "eks:accessEntryType": "EC2_LINUX"}},
	"a STANDARD access entry, which can carry Kubernetes groups": {Action: "eks:CreateAccessEntry", Resource: platformCluster,
		Context: map[string]string{"eks:principalArn": kisoNodeRole, "eks:accessEntryType": "STANDARD"}},
	"an access entry in another team's cluster": {Action: "eks:CreateAccessEntry", Resource: otherClusterARN,
		Context: map[string]string{"eks:principalArn": kisoNodeRole, "eks:accessEntryType": "EC2_LINUX"}},
	"another principal's access entry deleted": {Action: "eks:DeleteAccessEntry",
		Resource: "arn:aws:eks:eu-west-3:111122223333:access-entry/prod-eu/role/111122223333/platform-admins/01234567-89ab-cdef-0123-456789abcdef"},
	"an access entry of another team's cluster deleted": {Action: "eks:DeleteAccessEntry",
		Resource: "arn:aws:eks:eu-west-3:111122223333:access-entry/payments/role/111122223333/kiso-payments-node/01234567-89ab-cdef-0123-456789abcdef"},
	"an access entry's groups changed": {Action: "eks:UpdateAccessEntry",
		Resource: "arn:aws:eks:eu-west-3:111122223333:access-entry/prod-eu/role/111122223333/kiso-prod-eu-karpenter-node/01234567-89ab-cdef-0123-456789abcdef"},
	"a role out of another cluster's Karpenter instance profile": {Action: "iam:RemoveRoleFromInstanceProfile",
		Resource: "arn:aws:iam::111122223333:instance-profile/karpenter/eu-west-3/payments/0123/payments_1234"},
	"a user with keys": {Action: "iam:CreateAccessKey", Resource: "arn:aws:iam::111122223333:user/attacker"},
}

// TestProviderPolicyRefusesEveryEscalation: whoever holds provider-aws's role (a compromised provider, or anyone
// who may create provider-aws's managed resources) cannot reach more than kiso's objects need. Each request is
// one step of a known path to more privilege; the policy as docs/install.md has the platform apply it (CLUSTER
// replaced by the platform's cluster prod-eu) must deny every one.
func TestProviderPolicyRefusesEveryEscalation(t *testing.T) {
	policies := providerPoliciesFor(t, v1alpha1.XKarpenterClusterSpec{ClusterName: "prod-eu", Partition: v1alpha1.PartitionAWS, AccountID: escalationAccount})
	for name, r := range escalations {
		if r.Context == nil {
			r.Context = map[string]string{}
		}
		if ok, _ := allows(policies, r); ok {
			t.Errorf("%s: the provider's policy allows %s on %s (context %v)", name, r.Action, r.Resource, r.Context)
		}
	}
}

// awsManagedNodePolicies are the actions of the AWS managed policies a node role kiso creates is given, as AWS's
// Managed Policy Reference lists them (AmazonEKSWorkerNodePolicy v3 of 2023-11-27, AmazonEKS_CNI_Policy v6 of
// 2026-03-04, AmazonEC2ContainerRegistryPullOnly v1 of 2024-10-04, AmazonSSMManagedInstanceCore v2 of
// 2019-05-23). Every statement of each is on every resource without condition, except the CNI policy's
// ec2:CreateTags, on network interfaces.
var awsManagedNodePolicies = map[string][]string{
	"AmazonEKSWorkerNodePolicy": {"ec2:DescribeInstances", "ec2:DescribeInstanceTypes", "ec2:DescribeRouteTables", "ec2:DescribeSecurityGroups",
		"ec2:DescribeSubnets", "ec2:DescribeVolumes", "ec2:DescribeVolumesModifications", "ec2:DescribeVpcs", "eks:DescribeCluster", "eks-auth:AssumeRoleForPodIdentity"},
	"AmazonEKS_CNI_Policy": {"ec2:AssignPrivateIpAddresses", "ec2:AttachNetworkInterface", "ec2:CreateNetworkInterface", "ec2:DeleteNetworkInterface",
		"ec2:DescribeInstances", "ec2:DescribeTags", "ec2:DescribeNetworkInterfaces", "ec2:DescribeInstanceTypes", "ec2:DescribeSubnets",
		"ec2:DescribeSecurityGroups", "ec2:DetachNetworkInterface", "ec2:ModifyNetworkInterfaceAttribute", "ec2:UnassignPrivateIpAddresses", "ec2:CreateTags"},
	"AmazonEC2ContainerRegistryPullOnly": {"ecr:GetAuthorizationToken", "ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer", "ecr:BatchImportUpstreamImage"},
	"AmazonSSMManagedInstanceCore": {"ssm:DescribeAssociation", "ssm:GetDeployablePatchSnapshotForInstance", "ssm:GetDocument", "ssm:DescribeDocument",
		"ssm:GetManifest", "ssm:GetParameter", "ssm:GetParameters", "ssm:ListAssociations", "ssm:ListInstanceAssociations", "ssm:PutInventory",
		"ssm:PutComplianceItems", "ssm:PutConfigurePackageResult", "ssm:UpdateAssociationStatus", "ssm:UpdateInstanceAssociationStatus",
		"ssm:UpdateInstanceInformation", "ssmmessages:CreateControlChannel", "ssmmessages:CreateDataChannel", "ssmmessages:OpenControlChannel",
		"ssmmessages:OpenDataChannel", "ec2messages:AcknowledgeMessage", "ec2messages:DeleteMessage", "ec2messages:FailMessage",
		"ec2messages:GetEndpoint", "ec2messages:GetMessages", "ec2messages:SendReply"},
}

// TestTheBoundaryHoldsWhatKisosRolesAreGiven: the boundary takes nothing from the roles kiso creates. Every
// statement of every policy an example attaches to the controller's role (on each of its resources, with the
// values its conditions ask for) and every action of the AWS managed policies of a node role is within it, for
// the example's cluster (CLUSTER replaced, and a node role of its own added where the cluster names one).
func TestTheBoundaryHoldsWhatKisosRolesAreGiven(t *testing.T) {
	goldens, _ := filepath.Glob(filepath.Join(root, "examples", "cluster", "*", "expected.yaml"))
	checked := 0
	for _, golden := range goldens {
		var documents []iamPolicy
		for _, obj := range readObjects(t, golden) {
			if !isComposed(obj) || kindOf(obj) != "iam.aws.upbound.io/Policy" {
				continue
			}
			// Read, not judged: its conditions only give the values a request carries.
			var p iamPolicy
			if err := json.Unmarshal([]byte(forProvider(obj, "policy")), &p); err != nil {
				t.Fatalf("%s: policy %s: %v", golden, metadataName(obj), err)
			}
			documents = append(documents, p)
		}
		if len(documents) == 0 {
			continue
		}
		example := filepath.Dir(golden)
		boundary := boundaryFor(t, clusterOf(t, example))
		for _, p := range documents {
			for _, s := range p.Statement {
				context := map[string]string{}
				for _, keys := range s.Condition {
					for key, values := range keys {
						context[key] = values[0]
					}
				}
				for _, a := range s.Action {
					for _, resource := range s.Resource {
						if ok, why := allows([]iamPolicy{boundary}, request{Action: a, Resource: resource, Context: context}); !ok {
							t.Errorf("%s: the boundary takes %s on %s (statement %q) from the controller: %s", example, a, resource, s.Sid, why)
						}
						checked++
					}
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no example composes the controller's policies")
	}
	boundary := boundaryFor(t, v1alpha1.XKarpenterClusterSpec{ClusterName: "prod-eu", Partition: v1alpha1.PartitionAWS})
	for name, actions := range awsManagedNodePolicies {
		for _, a := range actions {
			if ok, why := allows([]iamPolicy{boundary}, request{Action: a, Resource: "*", Context: map[string]string{}}); !ok {
				t.Errorf("the boundary takes %s of %s from the node role: %s", a, name, why)
			}
		}
	}
}

// boundaryEscapes are what a role inside kiso's boundary must not do, whatever policy it is given.
var boundaryEscapes = []request{
	{Action: "iam:CreateRole", Resource: "arn:aws:iam::111122223333:role/x"},
	{Action: "iam:AttachRolePolicy", Resource: kisoNodeRole},
	{Action: "iam:CreatePolicyVersion", Resource: "arn:aws:iam::111122223333:policy/kiso/x"},
	{Action: "iam:UpdateAssumeRolePolicy", Resource: kisoNodeRole},
	{Action: "iam:PassRole", Resource: "arn:aws:iam::111122223333:role/Admin", Context: map[string]string{"iam:PassedToService": "ec2.amazonaws.com"}},
	{Action: "iam:PassRole", Resource: kisoNodeRole, Context: map[string]string{"iam:PassedToService": "lambda.amazonaws.com"}},
	{Action: "ec2:TerminateInstances", Resource: "arn:aws:ec2:eu-west-3:111122223333:instance/i-0123"},
	{Action: "sqs:ReceiveMessage", Resource: "arn:aws:sqs:eu-west-3:111122223333:payments-orders"},
	{Action: "s3:GetObject", Resource: "arn:aws:s3:::payments/ledger"},
	{Action: "sts:AssumeRole", Resource: "arn:aws:iam::111122223333:role/Admin"},
}

// TestTheBoundaryGrantsNoWayOut: a role inside the boundary, whatever policy it is given, cannot change IAM
// beyond Karpenter's instance profiles, pass a role other than kiso's node roles or pass one to anything but
// EC2, and fits a managed policy's 6,144 characters.
func TestTheBoundaryGrantsNoWayOut(t *testing.T) {
	boundary := boundaryFor(t, v1alpha1.XKarpenterClusterSpec{ClusterName: "prod-eu", Partition: v1alpha1.PartitionAWS})
	for _, r := range boundaryEscapes {
		if r.Context == nil {
			r.Context = map[string]string{}
		}
		if ok, _ := allows([]iamPolicy{boundary}, r); ok {
			t.Errorf("the boundary allows %s on %s (context %v)", r.Action, r.Resource, r.Context)
		}
	}
	data, err := os.ReadFile(filepath.Join(root, kisoRolesBoundary))
	if err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, data); err != nil {
		t.Fatal(err)
	}
	// IAM counts a managed policy's characters without whitespace.
	if n := len(strings.Join(strings.Fields(compact.String()), "")); n > 6144 {
		t.Errorf("%s is %d characters without whitespace, more than a managed policy's 6,144", kisoRolesBoundary, n)
	}
}

// boundaryFor is the boundary as docs/install.md has the platform create it for a cluster: CLUSTER replaced by
// its name, the partition and the name prefix as the provider's policy is widened, and the role a cluster's
// nodeRole.existingInstanceProfile names added to the roles it may pass.
func boundaryFor(t *testing.T, spec v1alpha1.XKarpenterClusterSpec) iamPolicy {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, kisoRolesBoundary))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(data), "CLUSTER", spec.ClusterName)
	if spec.Partition != "" && spec.Partition != v1alpha1.PartitionAWS {
		text = strings.ReplaceAll(text, "arn:aws:", "arn:"+string(spec.Partition)+":")
	}
	if spec.Naming.IAMPath != "" {
		text = strings.ReplaceAll(text, "/kiso/", spec.Naming.IAMPath)
	}
	if spec.Naming.Prefix != "" {
		text = strings.ReplaceAll(text, "kiso-*", spec.Naming.Prefix+"-*")
	}
	p, err := parseIAMPolicy([]byte(text))
	if err != nil {
		t.Fatalf("%s: %v", kisoRolesBoundary, err)
	}
	if ex := spec.NodeRole.ExistingInstanceProfile; ex != nil {
		for i := range p.Statement {
			if slices.Contains(p.Statement[i].Action, "iam:PassRole") {
				p.Statement[i].Resource = append(p.Statement[i].Resource, ex.RoleARN)
			}
		}
	}
	return p
}
