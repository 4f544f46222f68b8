package main

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/kiso-dev/kiso/functions/internal/clusterview"
	"github.com/kiso-dev/kiso/functions/internal/fncall"
	"github.com/kiso-dev/kiso/functions/internal/fntest"
)

const podIdentitySpec = `{"clusterName":"prod","region":"eu-west-3","accountId":"111122223333","tags":{"team":"platform"}}`

// The composed resource names of a cluster with every part enabled.
var (
	controllerNames = []string{
		"controller-policy-attachment-eks-integration", "controller-policy-attachment-iam-integration",
		"controller-policy-attachment-interruption", "controller-policy-attachment-node-lifecycle",
		"controller-policy-attachment-resource-discovery", "controller-policy-attachment-zonal-shift",
		"controller-policy-eks-integration", "controller-policy-iam-integration", "controller-policy-interruption",
		"controller-policy-node-lifecycle", "controller-policy-resource-discovery", "controller-policy-zonal-shift",
		"controller-role",
	}
	nodeNames = []string{
		"node-access-entry", "node-instance-profile",
		"node-policy-attachment-cni", "node-policy-attachment-ecr-pull", "node-policy-attachment-ssm", "node-policy-attachment-worker-node",
		"node-role",
	}
	interruptionNames = []string{
		"queue", "queue-policy",
		"rule-capacity-reservation-interruption", "rule-instance-state-change", "rule-rebalance", "rule-scheduled-change", "rule-spot-interruption",
		"target-capacity-reservation-interruption", "target-instance-state-change", "target-rebalance", "target-scheduled-change", "target-spot-interruption",
	}
)

// usageNames are the composed resource names of the Usages that order the
// deletion of the named AWS resources: the node identity's access entry and
// attachments wait for the node role, everything else for the controller role.
func usageNames(groups ...[]string) []string {
	var out []string
	for _, g := range groups {
		for _, n := range g {
			switch {
			case n == "node-access-entry", strings.HasPrefix(n, "node-policy-attachment-"):
				out = append(out, "node-usage-"+n)
			default:
				out = append(out, "usage-"+n)
			}
		}
	}
	return out
}

// viewNames is the view every cluster composes for its organizations.
var viewNames = []string{string(crClusterView)}

// deletionOrderNames are the policies and bindings that order a cluster's deletion and its organizations'
// (deletionorder.go).
var deletionOrderNames = []string{
	string(crNodeClassGuardPolicy), string(crNodeClassGuardBinding), string(crClusterGuardPolicy), string(crClusterGuardBinding),
	string(crPoolsGuardPolicy), string(crPoolsGuardBinding),
}

// tags are the tags of every AWS resource of podIdentitySpec.
const tags = `{"app.kubernetes.io/managed-by":"kiso","kiso.dev/cluster":"prod","team":"platform"}`

func TestPodIdentityClusterRendersEverything(t *testing.T) {
	rsp := run(t, newRequest(t, xr(podIdentitySpec), nil))
	fntest.AssertNoFatal(t, rsp)
	got := fntest.Desired(t, rsp)

	want := sortedNames(controllerNames, nodeNames, interruptionNames, placementNames, viewNames, deletionOrderNames, []string{"pod-identity-association", "prometheus-rule"}, usageNames(controllerNames, nodeNames, interruptionNames, []string{"pod-identity-association"}))
	if diff := cmp.Diff(want, slices.Sorted(maps.Keys(got))); diff != "" {
		t.Fatalf("composed resource names: -want, +got:\n%s", diff)
	}

	wantObjects := map[string]string{
		"controller-role": `{"apiVersion":"iam.aws.upbound.io/v1beta1","kind":"Role",
			"metadata":{"name":"prod-karpenter-controller","labels":{"app.kubernetes.io/managed-by":"kiso"},"annotations":{"crossplane.io/external-name":"kiso-prod-karpenter-controller"}},
			"spec":{"providerConfigRef":{"name":"default"},"forProvider":{"path":"/kiso/prod/","forceDetachPolicies":true,"tags":` + tags + `,
				"assumeRolePolicy":"{\"Version\":\"2012-10-17\",\"Statement\":[{\"Effect\":\"Allow\",\"Principal\":{\"Service\":\"pods.eks.amazonaws.com\"},\"Action\":[\"sts:AssumeRole\",\"sts:TagSession\"]}]}"}}}`,
		"controller-policy-attachment-node-lifecycle": `{"apiVersion":"iam.aws.upbound.io/v1beta1","kind":"RolePolicyAttachment",
			"metadata":{"name":"prod-karpenter-controller-node-lifecycle","labels":{"app.kubernetes.io/managed-by":"kiso"}},
			"spec":{"providerConfigRef":{"name":"default"},"forProvider":{"roleRef":{"name":"prod-karpenter-controller"},"policyArnRef":{"name":"prod-karpenter-controller-node-lifecycle"}}}}`,
		"node-role": `{"apiVersion":"iam.aws.upbound.io/v1beta1","kind":"Role",
			"metadata":{"name":"prod-karpenter-node","labels":{"app.kubernetes.io/managed-by":"kiso"},"annotations":{"crossplane.io/external-name":"kiso-prod-karpenter-node"}},
			"spec":{"providerConfigRef":{"name":"default"},"forProvider":{"path":"/kiso/prod/","forceDetachPolicies":true,"tags":` + tags + `,
				"assumeRolePolicy":"{\"Version\":\"2012-10-17\",\"Statement\":[{\"Effect\":\"Allow\",\"Principal\":{\"Service\":\"ec2.amazonaws.com\"},\"Action\":\"sts:AssumeRole\"}]}"}}}`,
		"node-policy-attachment-ecr-pull": `{"apiVersion":"iam.aws.upbound.io/v1beta1","kind":"RolePolicyAttachment",
			"metadata":{"name":"prod-karpenter-node-ecr-pull","labels":{"app.kubernetes.io/managed-by":"kiso"}},
			"spec":{"providerConfigRef":{"name":"default"},"forProvider":{"roleRef":{"name":"prod-karpenter-node"},"policyArn":"arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryPullOnly"}}}`,
		"node-instance-profile": `{"apiVersion":"iam.aws.upbound.io/v1beta1","kind":"InstanceProfile",
			"metadata":{"name":"prod-karpenter-node","labels":{"app.kubernetes.io/managed-by":"kiso"},"annotations":{"crossplane.io/external-name":"kiso-prod-karpenter-node"}},
			"spec":{"providerConfigRef":{"name":"default"},"forProvider":{"path":"/kiso/prod/","roleRef":{"name":"prod-karpenter-node"},"tags":` + tags + `}}}`,
		"node-access-entry": `{"apiVersion":"eks.aws.upbound.io/v1beta1","kind":"AccessEntry",
			"metadata":{"name":"prod-karpenter-node","labels":{"app.kubernetes.io/managed-by":"kiso"}},
			"spec":{"providerConfigRef":{"name":"default"},"forProvider":{"region":"eu-west-3","clusterName":"prod","type":"EC2_LINUX",
				"principalArnFromRoleRef":{"name":"prod-karpenter-node"},"tags":` + tags + `}}}`,
		"queue": `{"apiVersion":"sqs.aws.upbound.io/v1beta1","kind":"Queue",
			"metadata":{"name":"prod-karpenter-interruption","labels":{"app.kubernetes.io/managed-by":"kiso"}},
			"spec":{"providerConfigRef":{"name":"default"},"forProvider":{"region":"eu-west-3","name":"kiso-prod-karpenter-interruption","messageRetentionSeconds":300,"sqsManagedSseEnabled":true,"tags":` + tags + `}}}`,
		"queue-policy": `{"apiVersion":"sqs.aws.upbound.io/v1beta1","kind":"QueuePolicy",
			"metadata":{"name":"prod-karpenter-interruption","labels":{"app.kubernetes.io/managed-by":"kiso"}},
			"spec":{"providerConfigRef":{"name":"default"},"forProvider":{"region":"eu-west-3","queueUrlRef":{"name":"prod-karpenter-interruption"},
				"policy":` + fntest.ToJSON(t, queuePolicy("arn:aws:sqs:eu-west-3:111122223333:kiso-prod-karpenter-interruption").JSON()) + `}}}`,
		"rule-spot-interruption": `{"apiVersion":"cloudwatchevents.aws.upbound.io/v1beta1","kind":"Rule",
			"metadata":{"name":"prod-karpenter-spot-interruption","labels":{"app.kubernetes.io/managed-by":"kiso"},"annotations":{"crossplane.io/external-name":"kiso-prod-karpenter-spot-interruption"}},
			"spec":{"providerConfigRef":{"name":"default"},"forProvider":{"region":"eu-west-3","tags":` + tags + `,
				"eventPattern":"{\"source\":[\"aws.ec2\"],\"detail-type\":[\"EC2 Spot Instance Interruption Warning\"]}"}}}`,
		"target-spot-interruption": `{"apiVersion":"cloudwatchevents.aws.upbound.io/v1beta2","kind":"Target",
			"metadata":{"name":"prod-karpenter-spot-interruption","labels":{"app.kubernetes.io/managed-by":"kiso"}},
			"spec":{"providerConfigRef":{"name":"default"},"forProvider":{"region":"eu-west-3","ruleRef":{"name":"prod-karpenter-spot-interruption"},
				"targetId":"KarpenterInterruptionQueueTarget","arn":"arn:aws:sqs:eu-west-3:111122223333:kiso-prod-karpenter-interruption"}}}`,
		"pod-identity-association": `{"apiVersion":"eks.aws.upbound.io/v1beta1","kind":"PodIdentityAssociation",
			"metadata":{"name":"prod-karpenter-controller","labels":{"app.kubernetes.io/managed-by":"kiso"}},
			"spec":{"providerConfigRef":{"name":"default"},"forProvider":{"region":"eu-west-3","clusterName":"prod","namespace":"kube-system","serviceAccount":"karpenter",
				"roleArnRef":{"name":"prod-karpenter-controller"},"tags":` + tags + `}}}`,
	}
	for name, w := range wantObjects {
		if diff := cmp.Diff(fntest.JSONMap(t, w), got[name]); diff != "" {
			t.Errorf("%s: -want, +got:\n%s", name, diff)
		}
	}

	wantStatus := fntest.JSONMap(t, `{
		"helm":{"settings":{"clusterName":"prod","interruptionQueue":"kiso-prod-karpenter-interruption"}},
		"controllerRoleArn":"arn:aws:iam::111122223333:role/kiso/prod/kiso-prod-karpenter-controller","controllerRoleResource":"prod-karpenter-controller",
		"nodeRoleName":"kiso-prod-karpenter-node","nodeRoleArn":"arn:aws:iam::111122223333:role/kiso/prod/kiso-prod-karpenter-node",
		"instanceProfileName":"kiso-prod-karpenter-node","nodeRolePath":"/kiso/prod/organizations/","queueName":"kiso-prod-karpenter-interruption",
		"namePrefix":"kiso-prod"}`)
	if diff := cmp.Diff(wantStatus, fntest.AsMap(t, rsp.GetDesired().GetComposite().GetResource())["status"]); diff != "" {
		t.Errorf("XR status: -want, +got:\n%s", diff)
	}
	assertCondition(t, rsp, fncall.TypeSpecValid, fnv1.Status_STATUS_CONDITION_TRUE, fncall.ReasonValid, "")
}

func TestEveryManagedResourceCarriesProviderConfigAndTags(t *testing.T) {
	spec := `{"clusterName":"prod","region":"eu-west-3","accountId":"111122223333","providerConfigName":"aws-prod","tags":{"team":"platform"}}`
	// Kinds whose AWS resource takes no tags.
	untagged := map[string]bool{"RolePolicyAttachment": true, "QueuePolicy": true, "Target": true}
	for name, o := range fntest.Desired(t, run(t, newRequest(t, xr(spec), nil))) {
		if !strings.HasSuffix(fntest.Dig(o, "apiVersion").(string), ".aws.upbound.io/v1beta1") && !strings.HasSuffix(fntest.Dig(o, "apiVersion").(string), ".aws.upbound.io/v1beta2") {
			continue
		}
		if pc := fntest.Dig(o, "spec", "providerConfigRef", "name"); pc != "aws-prod" {
			t.Errorf("%s: providerConfigRef.name %v, want aws-prod", name, pc)
		}
		kind := fntest.Dig(o, "kind").(string)
		if untagged[kind] {
			continue
		}
		if diff := cmp.Diff(fntest.JSONMap(t, tags), fntest.Dig(o, "spec", "forProvider", "tags")); diff != "" {
			t.Errorf("%s (%s) tags: -want, +got:\n%s", name, kind, diff)
		}
	}
}

func TestIRSAClusterAnnotatesTheServiceAccount(t *testing.T) {
	spec := `{"clusterName":"prod","region":"eu-west-3","accountId":"111122223333",
		"controller":{"identity":"IRSA","oidcProviderArn":"arn:aws:iam::111122223333:oidc-provider/oidc.eks.eu-west-3.amazonaws.com/id/EXAMPLE"}}`
	rsp := run(t, newRequest(t, xr(spec), nil))
	fntest.AssertNoFatal(t, rsp)
	got := fntest.Desired(t, rsp)
	if _, ok := got["pod-identity-association"]; ok {
		t.Errorf("IRSA rendered a Pod Identity association")
	}
	wantTrust := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Federated":"arn:aws:iam::111122223333:oidc-provider/oidc.eks.eu-west-3.amazonaws.com/id/EXAMPLE"},` +
		`"Action":"sts:AssumeRoleWithWebIdentity","Condition":{"StringEquals":{"oidc.eks.eu-west-3.amazonaws.com/id/EXAMPLE:aud":"sts.amazonaws.com",` +
		`"oidc.eks.eu-west-3.amazonaws.com/id/EXAMPLE:sub":"system:serviceaccount:kube-system:karpenter"}}}]}`
	if diff := cmp.Diff(wantTrust, fntest.Dig(got["controller-role"], "spec", "forProvider", "assumeRolePolicy")); diff != "" {
		t.Errorf("controller trust policy: -want, +got:\n%s", diff)
	}
	wantHelm := fntest.JSONMap(t, `{"settings":{"clusterName":"prod","interruptionQueue":"kiso-prod-karpenter-interruption"},
		"serviceAccount":{"annotations":{"eks.amazonaws.com/role-arn":"arn:aws:iam::111122223333:role/kiso/prod/kiso-prod-karpenter-controller"}}}`)
	if diff := cmp.Diff(wantHelm, fntest.Dig(fntest.AsMap(t, rsp.GetDesired().GetComposite().GetResource()), "status", "helm")); diff != "" {
		t.Errorf("status.helm: -want, +got:\n%s", diff)
	}
}

func TestExistingInstanceProfileUnderABoundary(t *testing.T) {
	spec := `{"clusterName":"socle-sbx-53","region":"eu-west-3","accountId":"111122223333",
		"permissionsBoundary":"arn:aws:iam::111122223333:policy/crossplane-boundary",
		"nodeRole":{"existingInstanceProfile":{"name":"socle-sbx-53-nodes","roleArn":"arn:aws:iam::111122223333:role/socle-sbx-53-nodes"}}}`
	rsp := run(t, newRequest(t, xr(spec), nil))
	fntest.AssertNoFatal(t, rsp)
	got := fntest.Desired(t, rsp)

	want := sortedNames(controllerNames, interruptionNames, placementNames, viewNames, deletionOrderNames, []string{"pod-identity-association", "prometheus-rule"}, usageNames(controllerNames, interruptionNames, []string{"pod-identity-association"}))
	if diff := cmp.Diff(want, slices.Sorted(maps.Keys(got))); diff != "" {
		t.Errorf("no node role, instance profile or access entry: -want, +got:\n%s", diff)
	}
	if b := fntest.Dig(got["controller-role"], "spec", "forProvider", "permissionsBoundary"); b != "arn:aws:iam::111122223333:policy/crossplane-boundary" {
		t.Errorf("controller role permissionsBoundary: %v", b)
	}
	wantStatus := fntest.JSONMap(t, `{
		"helm":{"settings":{"clusterName":"socle-sbx-53","interruptionQueue":"kiso-socle-sbx-53-karpenter-interruption"}},
		"controllerRoleArn":"arn:aws:iam::111122223333:role/kiso/socle-sbx-53/kiso-socle-sbx-53-karpenter-controller","controllerRoleResource":"socle-sbx-53-karpenter-controller",
		"nodeRoleName":"socle-sbx-53-nodes","nodeRoleArn":"arn:aws:iam::111122223333:role/socle-sbx-53-nodes",
		"instanceProfileName":"socle-sbx-53-nodes","queueName":"kiso-socle-sbx-53-karpenter-interruption","namePrefix":"kiso-socle-sbx-53"}`)
	if diff := cmp.Diff(wantStatus, fntest.AsMap(t, rsp.GetDesired().GetComposite().GetResource())["status"]); diff != "" {
		t.Errorf("XR status (no nodeRolePath: no other role may be passed): -want, +got:\n%s", diff)
	}
}

func TestBoundaryOnEveryRoleKisoCreates(t *testing.T) {
	spec := `{"clusterName":"prod","region":"eu-west-3","accountId":"111122223333","permissionsBoundary":"arn:aws:iam::111122223333:policy/boundary"}`
	got := fntest.Desired(t, run(t, newRequest(t, xr(spec), nil)))
	for _, name := range []string{"controller-role", "node-role"} {
		if b := fntest.Dig(got[name], "spec", "forProvider", "permissionsBoundary"); b != "arn:aws:iam::111122223333:policy/boundary" {
			t.Errorf("%s: permissionsBoundary %v", name, b)
		}
	}
}

func TestChinaPartition(t *testing.T) {
	spec := `{"clusterName":"prod","region":"cn-north-1","accountId":"111122223333","partition":"aws-cn"}`
	rsp := run(t, newRequest(t, xr(spec), nil))
	fntest.AssertNoFatal(t, rsp)
	got := fntest.Desired(t, rsp)
	checks := map[string]struct {
		path []string
		want string
	}{
		"node-role":                         {[]string{"spec", "forProvider", "assumeRolePolicy"}, `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com.cn"},"Action":"sts:AssumeRole"}]}`},
		"node-policy-attachment-cni":        {[]string{"spec", "forProvider", "policyArn"}, "arn:aws-cn:iam::aws:policy/AmazonEKS_CNI_Policy"},
		"target-scheduled-change":           {[]string{"spec", "forProvider", "arn"}, "arn:aws-cn:sqs:cn-north-1:111122223333:kiso-prod-karpenter-interruption"},
		"controller-policy-eks-integration": {[]string{"spec", "forProvider", "policy"}, `{"Version":"2012-10-17","Statement":[{"Sid":"AllowAPIServerEndpointDiscovery","Effect":"Allow","Action":"eks:DescribeCluster","Resource":"arn:aws-cn:eks:cn-north-1:111122223333:cluster/prod"}]}`},
	}
	for name, c := range checks {
		if diff := cmp.Diff(c.want, fntest.Dig(got[name], c.path...)); diff != "" {
			t.Errorf("%s %s: -want, +got:\n%s", name, strings.Join(c.path, "."), diff)
		}
	}
	if arn := fntest.Dig(fntest.AsMap(t, rsp.GetDesired().GetComposite().GetResource()), "status", "controllerRoleArn"); arn != "arn:aws-cn:iam::111122223333:role/kiso/prod/kiso-prod-karpenter-controller" {
		t.Errorf("status.controllerRoleArn: %v", arn)
	}
}

func TestInterruptionAndMonitoringCanBeTurnedOff(t *testing.T) {
	spec := `{"clusterName":"prod","region":"eu-west-3","accountId":"111122223333","interruption":{"enabled":false},"monitoring":{"prometheusRule":false}}`
	rsp := run(t, newRequest(t, xr(spec), nil))
	fntest.AssertNoFatal(t, rsp)
	var wantController []string
	for _, n := range controllerNames {
		if !strings.HasSuffix(n, "-interruption") {
			wantController = append(wantController, n)
		}
	}
	want := sortedNames(wantController, nodeNames, placementNames, viewNames, deletionOrderNames, []string{"pod-identity-association"}, usageNames(wantController, nodeNames, []string{"pod-identity-association"}))
	if diff := cmp.Diff(want, slices.Sorted(maps.Keys(fntest.Desired(t, rsp)))); diff != "" {
		t.Errorf("no queue, rules, targets, interruption policy or PrometheusRule: -want, +got:\n%s", diff)
	}
	st := fntest.AsMap(t, rsp.GetDesired().GetComposite().GetResource())["status"].(map[string]any)
	if diff := cmp.Diff(map[string]any{"settings": map[string]any{"clusterName": "prod"}}, st["helm"]); diff != "" {
		t.Errorf("status.helm without a queue: -want, +got:\n%s", diff)
	}
	if q, ok := st["queueName"]; ok {
		t.Errorf("status.queueName %v without a queue", q)
	}
}

func TestInvalidSpecIsFatalAndRendersNothing(t *testing.T) {
	spec := `{"clusterName":"prod.eu","region":"eu-west-3","accountId":"1234","partition":"aws-iso"}`
	// A Fatal result stops Crossplane before it applies or deletes anything,
	// so the resources already composed (observed here) stay as they are.
	observed := map[string]string{"queue": `{"apiVersion":"sqs.aws.upbound.io/v1beta1","kind":"Queue","metadata":{"name":"prod-karpenter-interruption"}}`}
	rsp := run(t, newRequest(t, xr(spec), observed))

	want := `[spec.clusterName: Invalid value: "prod.eu": must start with a letter or digit and hold only letters, digits, '-' and '_', as an EKS cluster name does, ` +
		`spec.partition: Unsupported value: "aws-iso": supported values: "aws", "aws-cn", "aws-us-gov", ` +
		`spec.accountId: Invalid value: "1234": must be 12 digits]`
	wantResults := []*fnv1.Result{{Severity: fnv1.Severity_SEVERITY_FATAL, Message: want, Target: fnv1.Target_TARGET_COMPOSITE.Enum()}}
	if diff := cmp.Diff(wantResults, rsp.GetResults(), protocmp.Transform()); diff != "" {
		t.Errorf("results: -want, +got:\n%s", diff)
	}
	assertCondition(t, rsp, fncall.TypeSpecValid, fnv1.Status_STATUS_CONDITION_FALSE, fncall.ReasonInvalidSpec, want)
	if n := len(rsp.GetDesired().GetResources()); n != 0 {
		t.Errorf("rendered %d resources for an invalid spec; want none", n)
	}
}

func TestReadinessFollowsObservedReadyAndSynced(t *testing.T) {
	first := fntest.Desired(t, run(t, newRequest(t, xr(podIdentitySpec), nil)))
	observed := map[string]string{}
	for name, o := range first {
		o["status"] = map[string]any{"conditions": []any{
			map[string]any{"type": "Ready", "status": "True"},
			map[string]any{"type": "Synced", "status": "True"},
		}}
		observed[name] = fntest.ToJSON(t, o)
	}
	// The node role's last update failed: it exists, but is not in sync.
	nodeRole := fntest.JSONMap(t, observed["node-role"])
	nodeRole["status"] = map[string]any{"conditions": []any{
		map[string]any{"type": "Ready", "status": "True"},
		map[string]any{"type": "Synced", "status": "False", "reason": "ReconcileError"},
	}}
	observed["node-role"] = fntest.ToJSON(t, nodeRole)
	delete(observed, "queue")

	rsp := run(t, newRequest(t, xr(podIdentitySpec), observed))
	for name, r := range rsp.GetDesired().GetResources() {
		want := fnv1.Ready_READY_TRUE
		if name == "node-role" || name == "queue" {
			want = fnv1.Ready_READY_FALSE
		}
		if r.GetReady() != want {
			t.Errorf("%s: want %s, got %s", name, want, r.GetReady())
		}
	}
}

func TestRenderIsDeterministic(t *testing.T) {
	a := run(t, newRequest(t, xr(podIdentitySpec), nil))
	b := run(t, newRequest(t, xr(podIdentitySpec), nil))
	if diff := cmp.Diff(a, b, protocmp.Transform()); diff != "" {
		t.Errorf("two renders of the same request differ: -a, +b:\n%s", diff)
	}
}

func TestEarlierPipelineStepsAreKept(t *testing.T) {
	req := newRequest(t, xr(podIdentitySpec), nil)
	req.Desired.Resources = map[string]*fnv1.Resource{"extra": {Resource: resource.MustStructJSON(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"default"}}`)}}
	if _, ok := fntest.Desired(t, run(t, req))["extra"]; !ok {
		t.Errorf("a resource an earlier step composed was dropped")
	}
}

func sortedNames(groups ...[]string) []string {
	m := map[string]bool{}
	for _, g := range groups {
		for _, n := range g {
			m[n] = true
		}
	}
	return slices.Sorted(maps.Keys(m))
}

func assertCondition(t *testing.T, rsp *fnv1.RunFunctionResponse, typ string, status fnv1.Status, reason, message string) {
	t.Helper()
	for _, c := range rsp.GetConditions() {
		if c.GetType() != typ {
			continue
		}
		if c.GetStatus() != status || c.GetReason() != reason || c.GetMessage() != message || c.GetTarget() != fnv1.Target_TARGET_COMPOSITE {
			t.Errorf("condition %s: want %s %s %q on the composite, got %s %s %q on %s", typ, status, reason, message, c.GetStatus(), c.GetReason(), c.GetMessage(), c.GetTarget())
		}
		return
	}
	t.Errorf("no %s condition", typ)
}

func TestUndecodableInputOrSpecIsFatal(t *testing.T) {
	cases := map[string]struct {
		reason string
		input  string
		spec   string
		want   string
	}{
		"InputOfTheWrongShape": {
			reason: "An input that is not this function's Input is a Composition mistake.",
			input:  `{"apiVersion":1}`,
			spec:   podIdentitySpec,
			want:   "invalid function input: cannot get function input *v1alpha1.Input from *v1.RunFunctionRequest: cannot unmarshal JSON from *structpb.Struct into *v1alpha1.Input: json: cannot unmarshal JSON number into Go value of type string",
		},
		"InputWithAnUnknownField": {
			reason: "A misspelt input field is refused, not silently ignored: the input's CRD declares every field.",
			input:  `{"apiVersion":"cluster.fn.kiso.dev/v1alpha1","kind":"Input","keyDomian":"kiso.dev"}`,
			spec:   podIdentitySpec,
			want:   `invalid function input: cannot get function input *v1alpha1.Input from *v1.RunFunctionRequest: cannot unmarshal JSON from *structpb.Struct into *v1alpha1.Input: json: cannot unmarshal Go value of type v1alpha1.Input: unknown name "keyDomian"`,
		},
		"SpecOfTheWrongShape": {
			reason: "The XRD's schema prevents it in a cluster; render does not apply the schema.",
			input:  input,
			spec:   `{"clusterName":["prod"],"region":"eu-west-3","accountId":"111122223333"}`,
			want:   `cannot read the XR: spec.clusterName: Invalid value: "array": must be a string`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := newRequest(t, xr(tc.spec), nil)
			req.Input = resource.MustStructJSON(tc.input)
			rsp := run(t, req)
			want := []*fnv1.Result{{Severity: fnv1.Severity_SEVERITY_FATAL, Message: tc.want, Target: fnv1.Target_TARGET_COMPOSITE.Enum()}}
			if diff := cmp.Diff(want, rsp.GetResults(), protocmp.Transform()); diff != "" {
				t.Errorf("%s\nresults: -want, +got:\n%s", tc.reason, diff)
			}
			if n := len(rsp.GetDesired().GetResources()); n != 0 {
				t.Errorf("rendered %d resources; want none", n)
			}
		})
	}
}

// TestAForeignViewIsNeverAdopted: the platform's own EnvironmentConfig holds the name of the cluster's view; the
// cluster says so and composes nothing, rather than overwrite it.
func TestAForeignViewIsNeverAdopted(t *testing.T) {
	name := clusterview.Name("prod")
	assertNeverAdopted(t, `{"apiVersion":"apiextensions.crossplane.io/v1beta1","kind":"EnvironmentConfig","metadata":{"name":"`+name+`"},"data":{"team":"platform"}}`,
		`EnvironmentConfig "`+name+`" already exists and is not composed by this XKarpenterCluster; kiso never adopts or overwrites an object it did not create`)
}

func TestForeignRoleIsNeverAdopted(t *testing.T) {
	// A role MR of the same Kubernetes name exists and is not controlled by this XR.
	assertNeverAdopted(t, `{"apiVersion":"iam.aws.upbound.io/v1beta1","kind":"Role","metadata":{"name":"prod-karpenter-controller"},"spec":{"forProvider":{}}}`,
		`Role "prod-karpenter-controller" already exists and is not composed by this XKarpenterCluster; kiso never adopts or overwrites an object it did not create`)
}

// assertNeverAdopted renders XKarpenterCluster prod beside a foreign object holding a name it composes: the one
// result is that Fatal, and nothing is composed.
func assertNeverAdopted(t *testing.T, foreign, want string) {
	t.Helper()
	rsp := fntest.Run(t, &Function{log: logging.NewNopLogger()}, newRequest(t, xr(`{"clusterName":"prod","region":"eu-west-3","accountId":"111122223333"}`), nil), withPrometheusOperator(fntest.Cluster{foreign}))
	var fatal string
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
			fatal = r.GetMessage()
		}
	}
	if fatal != want {
		t.Errorf("fatal result:\nwant: %s\ngot:  %s", want, fatal)
	}
	if n := len(rsp.GetDesired().GetResources()); n != 0 {
		t.Errorf("rendered %d resources beside a foreign object; want none", n)
	}
}
