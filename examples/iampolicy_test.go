package examples_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
)

// The IAM policies the install tells a platform to give provider-aws's role.
var (
	providerPolicy         = filepath.Join("examples", "iam", "provider-aws-policy.json")
	providerTakeOverPolicy = filepath.Join("examples", "iam", "provider-aws-take-over-policy.json")
)

// A target is the resource an IAM call is authorized on: the composed object itself, or what it references.
type target int

const (
	// onSelf is the object's own ARN.
	onSelf target = iota
	// onRole is the role the object references (roleRef, roleArnRef, principalArnFromRoleRef).
	onRole
	// onQueue is the queue a queue policy references (queueUrlRef).
	onQueue
	// onRule is the EventBridge rule a target references (ruleRef).
	onRule
	// onCluster is the EKS cluster the object is created in (clusterName).
	onCluster
	// onKarpentersProfile is an instance profile Karpenter created for a role an EC2NodeClass names (the platform's
	// reference names kiso's node role), under /karpenter/<region>/<cluster>/<nodeclass-uid>/.
	onKarpentersProfile
)

// A call is one IAM action provider-aws performs for a kind, on a target, carrying the condition keys listed
// (the only keys a statement's condition may rely on to grant it).
type call struct {
	Action string
	On     target
	Keys   []string
}

// The condition keys of calls on a role and of passing one.
var (
	boundaryKey = []string{"iam:PermissionsBoundary"}
	passedKey   = []string{"iam:PassedToService"}
)

// passedTo is the service a kind passes its role to (iam:PassedToService): an instance profile to EC2, an
// association to EKS Pod Identity.
var passedTo = map[string]string{
	"iam.aws.upbound.io/InstanceProfile":        "ec2.amazonaws.com",
	"eks.aws.upbound.io/PodIdentityAssociation": "pods.eks.amazonaws.com",
}

// providerCalls are the IAM actions provider-aws (Terraform's AWS provider underneath) performs to create, read,
// update, tag and delete each managed resource kind kiso composes, and what each is authorized on. A kind kiso
// starts composing fails TestProviderPolicyAllowsWhatKisoComposes until it is listed here and allowed.
var providerCalls = map[string][]call{
	// Every call that creates or changes a role carries the role's permissions boundary (iam:PermissionsBoundary:
	// the one it is created with or given, else the one it has), which the policy requires to be kiso's. The
	// provider removes a boundary (iam:DeleteRolePermissionsBoundary) only when the spec drops one, which the
	// policy refuses.
	"iam.aws.upbound.io/Role": {
		{"iam:CreateRole", onSelf, boundaryKey}, {"iam:TagRole", onSelf, nil}, {"iam:GetRole", onSelf, nil}, {"iam:ListRoleTags", onSelf, nil},
		{"iam:UpdateRole", onSelf, boundaryKey}, {"iam:UpdateRoleDescription", onSelf, boundaryKey}, {"iam:UpdateAssumeRolePolicy", onSelf, boundaryKey},
		{"iam:PutRolePermissionsBoundary", onSelf, boundaryKey}, {"iam:UntagRole", onSelf, nil},
		// Read lists the inline and attached policies; delete (forceDetachPolicies) detaches and deletes them,
		// and first takes the role out of every instance profile that holds it, Karpenter's too.
		{"iam:ListRolePolicies", onSelf, nil}, {"iam:GetRolePolicy", onSelf, nil}, {"iam:DeleteRolePolicy", onSelf, boundaryKey},
		{"iam:ListAttachedRolePolicies", onSelf, nil}, {"iam:DetachRolePolicy", onSelf, boundaryKey}, {"iam:ListInstanceProfilesForRole", onSelf, nil},
		{"iam:RemoveRoleFromInstanceProfile", onKarpentersProfile, nil},
		{"iam:DeleteRole", onSelf, boundaryKey},
	},
	"iam.aws.upbound.io/Policy": {
		{"iam:CreatePolicy", onSelf, nil}, {"iam:TagPolicy", onSelf, nil}, {"iam:GetPolicy", onSelf, nil}, {"iam:GetPolicyVersion", onSelf, nil},
		// An update creates a version and makes it the default, deleting the oldest of five; delete deletes every
		// version.
		{"iam:ListPolicyVersions", onSelf, nil}, {"iam:CreatePolicyVersion", onSelf, nil}, {"iam:SetDefaultPolicyVersion", onSelf, nil},
		{"iam:DeletePolicyVersion", onSelf, nil}, {"iam:UntagPolicy", onSelf, nil}, {"iam:ListPolicyTags", onSelf, nil}, {"iam:DeletePolicy", onSelf, nil},
	},
	"iam.aws.upbound.io/RolePolicyAttachment": {
		{"iam:AttachRolePolicy", onRole, []string{"iam:PolicyARN", "iam:PermissionsBoundary"}}, {"iam:ListAttachedRolePolicies", onRole, nil},
		{"iam:DetachRolePolicy", onRole, []string{"iam:PolicyARN", "iam:PermissionsBoundary"}},
	},
	"iam.aws.upbound.io/InstanceProfile": {
		{"iam:CreateInstanceProfile", onSelf, nil}, {"iam:TagInstanceProfile", onSelf, nil}, {"iam:GetInstanceProfile", onSelf, nil},
		// Adding a role to a profile passes it to EC2.
		{"iam:AddRoleToInstanceProfile", onSelf, nil}, {"iam:PassRole", onRole, passedKey}, {"iam:RemoveRoleFromInstanceProfile", onSelf, nil},
		{"iam:UntagInstanceProfile", onSelf, nil}, {"iam:ListInstanceProfileTags", onSelf, nil}, {"iam:DeleteInstanceProfile", onSelf, nil},
	},
	"sqs.aws.upbound.io/Queue": {
		{"sqs:CreateQueue", onSelf, nil}, {"sqs:TagQueue", onSelf, nil}, {"sqs:GetQueueUrl", onSelf, nil}, {"sqs:GetQueueAttributes", onSelf, nil},
		{"sqs:ListQueueTags", onSelf, nil}, {"sqs:SetQueueAttributes", onSelf, nil}, {"sqs:UntagQueue", onSelf, nil}, {"sqs:DeleteQueue", onSelf, nil},
	},
	"sqs.aws.upbound.io/QueuePolicy": {
		{"sqs:SetQueueAttributes", onQueue, nil}, {"sqs:GetQueueAttributes", onQueue, nil},
	},
	"cloudwatchevents.aws.upbound.io/Rule": {
		{"events:PutRule", onSelf, nil}, {"events:TagResource", onSelf, nil}, {"events:DescribeRule", onSelf, nil},
		{"events:ListTagsForResource", onSelf, nil}, {"events:EnableRule", onSelf, nil}, {"events:DisableRule", onSelf, nil},
		{"events:UntagResource", onSelf, nil}, {"events:DeleteRule", onSelf, nil},
	},
	"cloudwatchevents.aws.upbound.io/Target": {
		{"events:PutTargets", onRule, nil}, {"events:ListTargetsByRule", onRule, nil}, {"events:RemoveTargets", onRule, nil},
	},
	"eks.aws.upbound.io/PodIdentityAssociation": {
		// Creating or updating an association passes its role to EKS.
		{"eks:CreatePodIdentityAssociation", onCluster, nil}, {"iam:PassRole", onRole, []string{"iam:PassedToService", "iam:AssociatedResourceArn"}}, {"eks:TagResource", onSelf, nil},
		{"eks:DescribePodIdentityAssociation", onSelf, nil}, {"eks:UpdatePodIdentityAssociation", onSelf, nil},
		{"eks:UntagResource", onSelf, nil}, {"eks:ListTagsForResource", onSelf, nil}, {"eks:DeletePodIdentityAssociation", onSelf, nil},
	},
	"eks.aws.upbound.io/AccessEntry": {
		// Nothing of an EC2_LINUX entry is updatable (no groups, no username): no eks:UpdateAccessEntry, which
		// could change any entry's Kubernetes groups.
		// It names its principal and passes no role (AWS's API reference asks for no iam:PassRole).
		{"eks:CreateAccessEntry", onCluster, []string{"eks:principalArn", "eks:accessEntryType"}},
		{"eks:TagResource", onSelf, nil}, {"eks:DescribeAccessEntry", onSelf, nil}, {"eks:UntagResource", onSelf, nil},
		{"eks:ListTagsForResource", onSelf, nil}, {"eks:DeleteAccessEntry", onSelf, nil},
	},
}

// TestProviderPolicyAllowsWhatKisoComposes: for every provider-aws managed resource an example composes, the
// provider's IAM policy (examples/iam, widened as docs/install.md says for the example's partition, naming
// and takeOver) allows every call providerCalls lists for its kind, on the ARN the object has in AWS.
func TestProviderPolicyAllowsWhatKisoComposes(t *testing.T) {
	goldens, _ := filepath.Glob(filepath.Join(root, "examples", "*", "*", "expected.yaml"))
	if len(goldens) == 0 {
		t.Fatal("no examples/*/*/expected.yaml")
	}
	checked := map[string]int{}
	for _, golden := range goldens {
		objs := readObjects(t, golden)
		var managed []map[string]any
		for _, obj := range objs {
			if isComposed(obj) && strings.HasSuffix(groupOf(obj), ".aws.upbound.io") {
				managed = append(managed, obj)
			}
		}
		if len(managed) == 0 {
			continue
		}
		example := filepath.Dir(golden)
		spec := clusterOf(t, example)
		policies := providerPoliciesFor(t, spec)
		arns := arnsOf{spec: spec, objects: managed}
		for _, obj := range managed {
			kind := kindOf(obj)
			calls, ok := providerCalls[kind]
			if !ok {
				t.Errorf("%s composes %s, whose IAM calls providerCalls does not list: list them, and allow them in %s", example, kind, providerPolicy)
				continue
			}
			name := fmt.Sprintf("%s %s %s", example, kind, metadataName(obj))
			for _, c := range calls {
				r, err := arns.request(obj, c)
				if err != nil {
					t.Errorf("%s: %s: %v", name, c.Action, err)
					continue
				}
				if ok, why := allows(policies, r); !ok {
					t.Errorf("%s: the provider's policy does not allow %s on %s (context %v): %s", name, r.Action, r.Resource, r.Context, why)
				}
			}
			checked[kind]++
		}
	}
	for kind := range providerCalls {
		if checked[kind] == 0 {
			t.Errorf("providerCalls lists %s, which no example composes", kind)
		}
	}
}

// TestProviderPolicyIsNarrow: the policy files are valid IAM policies of version 2012-10-17 whose Allow
// statements grant no action on every resource, no service's every action, and no action providerCalls does not
// list (a Deny may name any).
func TestProviderPolicyIsNarrow(t *testing.T) {
	var needed []string
	for _, calls := range providerCalls {
		for _, c := range calls {
			needed = append(needed, c.Action)
		}
	}
	for _, file := range []string{providerPolicy, providerTakeOverPolicy} {
		p := readIAMPolicy(t, file)
		if p.Version != "2012-10-17" {
			t.Errorf("%s: Version %q, want 2012-10-17", file, p.Version)
		}
		for _, s := range p.Statement {
			if s.Effect != "Allow" {
				continue
			}
			for _, a := range s.Action {
				if strings.Contains(a, "*") {
					t.Errorf("%s: statement %q: action %q is a wildcard: list the actions", file, s.Sid, a)
				} else if !slices.ContainsFunc(needed, func(n string) bool { return strings.EqualFold(n, a) }) {
					t.Errorf("%s: statement %q allows %s, which providerCalls says no kind needs", file, s.Sid, a)
				}
			}
			if slices.Contains(s.Resource, "*") {
				t.Errorf("%s: statement %q: Resource \"*\"", file, s.Sid)
			}
		}
	}
}

// providerPoliciesFor returns the policies docs/install.md tells a platform to give provider-aws's role for a
// cluster: the provider's policy with the cluster's partition, IAM path and prefix in place of the defaults,
// and, where the cluster takes over AWS's getting-started setup, the take-over policy for its name.
func providerPoliciesFor(t *testing.T, spec v1alpha1.XKarpenterClusterSpec) []iamPolicy {
	t.Helper()
	widen := func(text string) string {
		if spec.Partition != v1alpha1.PartitionAWS {
			text = strings.ReplaceAll(text, "arn:aws:", "arn:"+string(spec.Partition)+":")
		}
		if spec.Naming.IAMPath != "" {
			text = strings.ReplaceAll(text, "/kiso/", spec.Naming.IAMPath)
		}
		if spec.Naming.Prefix != "" {
			text = strings.ReplaceAll(text, "kiso-*", spec.Naming.Prefix+"-*")
		}
		return text
	}
	read := func(file string) string {
		data, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	texts := []string{widen(strings.ReplaceAll(read(providerPolicy), "CLUSTER", spec.ClusterName))}
	if spec.Naming.TakeOver == v1alpha1.TakeOverAWSGettingStarted {
		texts = append(texts, widen(strings.ReplaceAll(read(providerTakeOverPolicy), "CLUSTER", spec.ClusterName)))
	}
	policies := make([]iamPolicy, 0, len(texts))
	for _, text := range texts {
		p, err := parseIAMPolicy([]byte(text))
		if err != nil {
			t.Fatalf("the provider's policy for cluster %s: %v", spec.ClusterName, err)
		}
		policies = append(policies, p)
	}
	return policies
}

func readIAMPolicy(t *testing.T, file string) iamPolicy {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		t.Fatal(err)
	}
	p, err := parseIAMPolicy(data)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return p
}

// clusterOf returns the spec, defaulted, of the XKarpenterCluster an example renders (xr.yaml), or that an
// organization's example reads (required.yaml: the cluster's view, EnvironmentConfig kiso-cluster.<name>): its
// account, partition and naming decide the ARNs of what is composed.
func clusterOf(t *testing.T, example string) v1alpha1.XKarpenterClusterSpec {
	t.Helper()
	for _, file := range []string{"xr.yaml", "required.yaml"} {
		path := filepath.Join(example, file)
		if _, err := os.Stat(path); err != nil {
			continue
		}
		for _, obj := range readObjects(t, path) {
			raw, _ := obj["spec"].(map[string]any)
			if obj["kind"] == "EnvironmentConfig" && strings.HasPrefix(metadataName(obj), "kiso-cluster.") {
				data, _ := obj["data"].(map[string]any)
				raw, _ = data["spec"].(map[string]any)
			} else if obj["kind"] != "XKarpenterCluster" {
				continue
			}
			var spec v1alpha1.XKarpenterClusterSpec
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &spec); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			spec.Default()
			return spec
		}
	}
	t.Fatalf("%s composes AWS resources but neither its xr.yaml nor its required.yaml holds an XKarpenterCluster or its view", example)
	return v1alpha1.XKarpenterClusterSpec{}
}

// arnsOf computes the ARNs, in AWS, of one example's composed managed resources.
type arnsOf struct {
	spec    v1alpha1.XKarpenterClusterSpec
	objects []map[string]any
}

// request is the call as IAM authorizes it: on its target's ARN, with the condition keys it carries.
func (a arnsOf) request(obj map[string]any, c call) (request, error) {
	r := request{Action: c.Action, Context: map[string]string{}}
	var err error
	switch c.On {
	case onSelf:
		r.Resource, err = a.arn(obj)
	case onRole:
		r.Resource, err = a.referenced(obj, "iam.aws.upbound.io/Role", "roleRef", "roleArnRef", "principalArnFromRoleRef")
	case onQueue:
		r.Resource, err = a.referenced(obj, "sqs.aws.upbound.io/Queue", "queueUrlRef")
	case onRule:
		r.Resource, err = a.referenced(obj, "cloudwatchevents.aws.upbound.io/Rule", "ruleRef")
	case onCluster:
		r.Resource = a.eks(obj, "cluster/"+forProvider(obj, "clusterName"))
	case onKarpentersProfile:
		r.Resource = fmt.Sprintf("arn:%s:iam::%s:instance-profile/karpenter/%s/%s/01234567-89ab-cdef-0123-456789abcdef/%s_1234567890123456789",
			a.spec.Partition, a.spec.AccountID, a.spec.Region, a.spec.ClusterName, a.spec.ClusterName)
	}
	if err != nil {
		return r, err
	}
	for _, key := range c.Keys {
		value, carried, err := a.conditionValue(obj, c, key)
		if err != nil {
			return r, err
		}
		// A role without a boundary carries no key: the call then meets no condition on it.
		if carried {
			r.Context[key] = value
		}
	}
	return r, nil
}

// conditionValue is the value of a condition key the call carries for the object, and false when the call
// carries none (a role without a permissions boundary).
func (a arnsOf) conditionValue(obj map[string]any, c call, key string) (string, bool, error) {
	switch key {
	case "iam:PolicyARN":
		if arn := forProvider(obj, "policyArn"); arn != "" {
			return arn, true, nil
		}
		arn, err := a.referenced(obj, "iam.aws.upbound.io/Policy", "policyArnRef")
		return arn, true, err
	case "eks:principalArn":
		arn, err := a.referenced(obj, "iam.aws.upbound.io/Role", "principalArnFromRoleRef")
		return arn, true, err
	case "eks:accessEntryType":
		return forProvider(obj, "type"), true, nil
	case "iam:PermissionsBoundary":
		role := obj
		if c.On == onRole {
			var err error
			if role, err = a.referencedObject(obj, "iam.aws.upbound.io/Role", "roleRef"); err != nil {
				return "", false, err
			}
		}
		b := forProvider(role, "permissionsBoundary")
		return b, b != "", nil
	case "iam:AssociatedResourceArn":
		// An association passes its role for use in its cluster.
		return a.eks(obj, "cluster/"+forProvider(obj, "clusterName")), true, nil
	case "iam:PassedToService":
		service := passedTo[kindOf(obj)]
		if a.spec.Partition == v1alpha1.PartitionChina && service == "ec2.amazonaws.com" {
			service += ".cn"
		}
		return service, true, nil
	}
	return "", false, fmt.Errorf("no value for condition key %s", key)
}

// arn is the ARN the object has in AWS. IAM names are the external name (the object's name by default) under
// the path; an association's and an access entry's end in an ID AWS chooses, here a stand-in.
func (a arnsOf) arn(obj map[string]any) (string, error) {
	iam := func(resource string) string {
		path := forProvider(obj, "path")
		if path == "" {
			path = "/"
		}
		return fmt.Sprintf("arn:%s:iam::%s:%s%s%s", a.spec.Partition, a.spec.AccountID, resource, path, externalName(obj))
	}
	switch kind := kindOf(obj); kind {
	case "iam.aws.upbound.io/Role":
		return iam("role"), nil
	case "iam.aws.upbound.io/Policy":
		return iam("policy"), nil
	case "iam.aws.upbound.io/InstanceProfile":
		return iam("instance-profile"), nil
	case "sqs.aws.upbound.io/Queue":
		return fmt.Sprintf("arn:%s:sqs:%s:%s:%s", a.spec.Partition, a.region(obj), a.spec.AccountID, forProvider(obj, "name")), nil
	case "cloudwatchevents.aws.upbound.io/Rule":
		return fmt.Sprintf("arn:%s:events:%s:%s:rule/%s", a.spec.Partition, a.region(obj), a.spec.AccountID, externalName(obj)), nil
	case "eks.aws.upbound.io/PodIdentityAssociation":
		return a.eks(obj, "podidentityassociation/"+forProvider(obj, "clusterName")+"/a-0123456789abcdefg"), nil
	case "eks.aws.upbound.io/AccessEntry":
		principal, err := a.referenced(obj, "iam.aws.upbound.io/Role", "principalArnFromRoleRef")
		if err != nil {
			return "", err
		}
		roleName := principal[strings.LastIndex(principal, "/")+1:]
		return a.eks(obj, fmt.Sprintf("access-entry/%s/role/%s/%s/01234567-89ab-cdef-0123-456789abcdef", forProvider(obj, "clusterName"), a.spec.AccountID, roleName)), nil
	default:
		return "", fmt.Errorf("no ARN known for %s", kind)
	}
}

func (a arnsOf) eks(obj map[string]any, resource string) string {
	return fmt.Sprintf("arn:%s:eks:%s:%s:%s", a.spec.Partition, a.region(obj), a.spec.AccountID, resource)
}

func (a arnsOf) region(obj map[string]any) string {
	if r := forProvider(obj, "region"); r != "" {
		return r
	}
	return a.spec.Region
}

// referenced is the ARN of the object of kind that the first of refs present names (by its Kubernetes name).
func (a arnsOf) referenced(obj map[string]any, kind string, refs ...string) (string, error) {
	other, err := a.referencedObject(obj, kind, refs...)
	if err != nil {
		return "", err
	}
	return a.arn(other)
}

// referencedObject is the object of kind that the first of refs present names (by its Kubernetes name).
func (a arnsOf) referencedObject(obj map[string]any, kind string, refs ...string) (map[string]any, error) {
	fp, _ := specOf(obj)["forProvider"].(map[string]any)
	for _, ref := range refs {
		r, ok := fp[ref].(map[string]any)
		if !ok {
			continue
		}
		for _, other := range a.objects {
			if kindOf(other) == kind && metadataName(other) == r["name"] {
				return other, nil
			}
		}
		return nil, fmt.Errorf("%s names %s %v, which the example does not compose", ref, kind, r["name"])
	}
	return nil, fmt.Errorf("none of %v is set", refs)
}

func specOf(obj map[string]any) map[string]any {
	spec, _ := obj["spec"].(map[string]any)
	return spec
}

func forProvider(obj map[string]any, field string) string {
	fp, _ := specOf(obj)["forProvider"].(map[string]any)
	v, _ := fp[field].(string)
	return v
}

func metadataName(obj map[string]any) string {
	m, _ := obj["metadata"].(map[string]any)
	name, _ := m["name"].(string)
	return name
}

// externalName is the name provider-aws gives the resource in AWS: the external-name annotation, which defaults
// to the object's name.
func externalName(obj map[string]any) string {
	m, _ := obj["metadata"].(map[string]any)
	annotations, _ := m["annotations"].(map[string]any)
	if name, ok := annotations["crossplane.io/external-name"].(string); ok && name != "" {
		return name
	}
	return metadataName(obj)
}

func groupOf(obj map[string]any) string {
	apiVersion, _ := obj["apiVersion"].(string)
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return ""
	}
	return gv.Group
}

// kindOf is group/Kind, whatever the version (Target is served at v1beta1 and v1beta2).
func kindOf(obj map[string]any) string {
	kind, _ := obj["kind"].(string)
	return groupOf(obj) + "/" + kind
}
