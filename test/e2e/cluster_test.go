package e2e

import (
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

// What testdata/cluster/xr.yaml asks for.
const (
	clusterXR          = "e2e-cluster"
	clusterName        = "staging-eu"
	karpenterNamespace = "e2e-karpenter"
	queueName          = "kiso-staging-eu-karpenter-interruption"
	queueARN           = "arn:aws:sqs:eu-west-3:111122223333:" + queueName
)

// A wantComposed is one object the XR must compose, as a user would check it with kubectl get -o yaml.
type wantComposed struct {
	Kind         schema.GroupVersionKind
	Namespace    string
	Name         string
	ExternalName string         // the AWS name, when kiso sets it; "" when it must not be set
	ForProvider  map[string]any // fields of spec.forProvider, each equal to this
}

// wantClusterComposed lists everything the XR composes: the controller's and the nodes' IAM, the interruption
// queue and the EventBridge rules feeding it, the Pod Identity association and the alerts.
func wantClusterComposed() []wantComposed {
	const (
		region         = "eu-west-3"
		controllerRole = "staging-eu-karpenter-controller"
		nodeRole       = "staging-eu-karpenter-node"
		queue          = "staging-eu-karpenter-interruption"
		// kiso's own AWS names and path: never those of AWS's template or eksctl.
		awsPrefix = "kiso-staging-eu-karpenter-"
		iamPath   = "/kiso/staging-eu/"
	)
	ref := func(name string) map[string]any { return map[string]any{"name": name} }
	want := []wantComposed{
		{Kind: RoleKind, Name: controllerRole, ExternalName: awsPrefix + "controller", ForProvider: map[string]any{
			"path":                iamPath,
			"forceDetachPolicies": true,
			"assumeRolePolicy":    `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"pods.eks.amazonaws.com"},"Action":["sts:AssumeRole","sts:TagSession"]}]}`,
		}},
		{Kind: RoleKind, Name: nodeRole, ExternalName: awsPrefix + "node", ForProvider: map[string]any{
			"path":                iamPath,
			"forceDetachPolicies": true,
			"assumeRolePolicy":    `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`,
		}},
		{Kind: InstanceProfileKind, Name: nodeRole, ExternalName: awsPrefix + "node", ForProvider: map[string]any{"path": iamPath, "roleRef": ref(nodeRole)}},
		{Kind: AccessEntryKind, Name: nodeRole, ForProvider: map[string]any{
			"clusterName": clusterName, "region": region, "type": "EC2_LINUX", "principalArnFromRoleRef": ref(nodeRole),
		}},
		{Kind: QueueKind, Name: queue, ForProvider: map[string]any{
			"name": queueName, "region": region, "messageRetentionSeconds": int64(300), "sqsManagedSseEnabled": true,
		}},
		{Kind: QueuePolicyKind, Name: queue, ForProvider: map[string]any{"region": region, "queueUrlRef": ref(queue)}},
		{Kind: PodIdentityAssociationKind, Name: controllerRole, ForProvider: map[string]any{
			"clusterName": clusterName, "region": region, "namespace": karpenterNamespace, "serviceAccount": "karpenter", "roleArnRef": ref(controllerRole),
		}},
		{Kind: PrometheusRuleKind, Namespace: karpenterNamespace, Name: "staging-eu-karpenter"},
	}
	// AWS's six managed policies for the Karpenter 1.15 controller, each attached to its role.
	for _, p := range []struct{ suffix, awsName string }{
		{"eks-integration", "EKSIntegration"},
		{"iam-integration", "IAMIntegration"},
		{"interruption", "Interruption"},
		{"node-lifecycle", "NodeLifecycle"},
		{"resource-discovery", "ResourceDiscovery"},
		{"zonal-shift", "ZonalShift"},
	} {
		name := controllerRole + "-" + p.suffix
		want = append(want,
			wantComposed{Kind: PolicyKind, Name: name, ExternalName: awsPrefix + p.suffix, ForProvider: map[string]any{"path": iamPath}},
			wantComposed{Kind: RolePolicyAttachmentKind, Name: name, ForProvider: map[string]any{"roleRef": ref(controllerRole), "policyArnRef": ref(name)}})
	}
	for suffix, policy := range map[string]string{
		"worker-node": "AmazonEKSWorkerNodePolicy",
		"cni":         "AmazonEKS_CNI_Policy",
		"ecr-pull":    "AmazonEC2ContainerRegistryPullOnly",
		"ssm":         "AmazonSSMManagedInstanceCore",
	} {
		want = append(want, wantComposed{Kind: RolePolicyAttachmentKind, Name: nodeRole + "-" + suffix, ForProvider: map[string]any{
			"roleRef": ref(nodeRole), "policyArn": "arn:aws:iam::aws:policy/" + policy,
		}})
	}
	for _, event := range []string{"scheduled-change", "spot-interruption", "rebalance", "instance-state-change", "capacity-reservation-interruption"} {
		name := "staging-eu-karpenter-" + event
		want = append(want,
			wantComposed{Kind: RuleKind, Name: name, ExternalName: awsPrefix + event, ForProvider: map[string]any{"region": region}},
			wantComposed{Kind: TargetKind, Name: name, ForProvider: map[string]any{
				"region": region, "ruleRef": ref(name), "arn": queueARN, "targetId": "KarpenterInterruptionQueueTarget",
			}})
	}
	want = append(want, wantUsages(want, controllerRole, nodeRole)...)
	// The cluster's placement policies, once per cluster; this apiserver serves MutatingAdmissionPolicy at v1, as Kubernetes v1.36 on does with no flag.
	var placement []wantComposed
	for _, name := range []string{"kiso-placement", "kiso-placement-pools", "kiso-placement-warn", "kiso-placement-binding", "kiso-namespace-identity"} {
		placement = append(placement, wantComposed{Kind: ValidatingAdmissionPolicyKind, Name: name}, wantComposed{Kind: ValidatingAdmissionPolicyBindingKind, Name: name})
	}
	placement = append(placement, wantComposed{Kind: MutatingAdmissionPolicyKind, Name: "kiso-placement-inject"}, wantComposed{Kind: MutatingAdmissionPolicyBindingKind, Name: "kiso-placement-inject"})
	want = append(want, placement...)
	// The policies that order its deletion and its organizations', evaluated on DELETE only.
	for _, name := range []string{nodeClassGuardPolicy, "kiso-deletion-order." + clusterXR, "kiso-deletion-order-pools." + clusterXR} {
		want = append(want, wantComposed{Kind: ValidatingAdmissionPolicyKind, Name: name}, wantComposed{Kind: ValidatingAdmissionPolicyBindingKind, Name: name})
	}
	// The view its organizations read instead of the XR.
	return append(want, wantComposed{Kind: ClusterViewKind, Name: clusterViewName(clusterXR)})
}

// wantUsages are the ClusterUsages that order the cluster's deletion: every AWS object waits for the
// controller role, except the node identity's access entry and policy attachments, which wait for the node
// role; the controller role goes only with the cluster (which organizations' NodeClasses keep).
func wantUsages(composed []wantComposed, controllerRole, nodeRole string) []wantComposed {
	var out []wantComposed
	for _, w := range composed {
		switch {
		case !strings.HasSuffix(w.Kind.Group, ".aws.upbound.io"):
		case w.Kind == RoleKind && w.Name == controllerRole:
			out = append(out, wantComposed{Kind: ClusterUsageKind, Name: "role-" + controllerRole + "-kept-with-cluster"})
		case w.Kind == AccessEntryKind && w.Name == nodeRole:
			out = append(out, wantComposed{Kind: ClusterUsageKind, Name: nodeRole + "-access-entry-used-by-role"})
		case w.Kind == RolePolicyAttachmentKind && strings.HasPrefix(w.Name, nodeRole+"-"):
			out = append(out, wantComposed{Kind: ClusterUsageKind, Name: w.Name + "-attachment-used-by-role"})
		default:
			out = append(out, wantComposed{Kind: ClusterUsageKind, Name: strings.ToLower(w.Kind.Kind) + "-" + w.Name + "-used-by-controller-role"})
		}
	}
	return out
}

// TestClusterComposesKarpentersAWSPrerequisites is scenario 5: a platform team applies an XKarpenterCluster
// with kubectl. Its managed resources appear (no provider runs, so nothing reaches AWS) wired to each other
// by reference, tagged, owned by the XR; the XR's status carries what Karpenter's Helm chart needs; the XR
// becomes Ready once a provider would report every resource Ready and Synced; and deleting the XR
// garbage-collects everything it composed.
func TestClusterComposesKarpentersAWSPrerequisites(t *testing.T) {
	inLocalClusterLaneT(t)
	namespace := readTestdataT(t, "cluster", "namespace.yaml")
	xrManifest := readTestdataT(t, "cluster", "xr.yaml")
	env.ApplyT(t, namespace)
	t.Cleanup(func() { deleteAtCleanup(t, namespace) })
	env.ApplyT(t, xrManifest)
	t.Cleanup(func() { deleteAtCleanup(t, xrManifest) })

	want := wantClusterComposed()
	// Synced=True once Crossplane has run the function and applied everything it rendered.
	// An XR that composes many Usages gets a burst of watch events while Crossplane's usage controller
	// marks them and their used objects; Crossplane's circuit breaker then reconciles it periodically
	// until the burst is over, so its conditions can take a few poll intervals.
	xr := env.Cluster.WaitForConditionT(t, xrSettleTimeout, ClusterKind, "", clusterXR, "Synced")
	if diff := cmp.Diff(composedKeys(want), resourceRefKeys(xr)); diff != "" {
		t.Errorf("XR %s spec.crossplane.resourceRefs: -want, +got:\n%s", clusterXR, diff)
	}

	// Every value Karpenter's chart needs is known from the spec, before AWS has anything.
	wantHelm := map[string]any{"settings": map[string]any{"clusterName": clusterName, "interruptionQueue": queueName}}
	gotHelm, _, _ := unstructured.NestedFieldNoCopy(xr.Object, "status", "helm")
	if diff := cmp.Diff(wantHelm, gotHelm); diff != "" {
		t.Errorf("XR %s status.helm (Pod Identity: no service account annotation): -want, +got:\n%s", clusterXR, diff)
	}
	if got, _, _ := unstructured.NestedString(xr.Object, "status", "controllerRoleResource"); got != "staging-eu-karpenter-controller" {
		t.Errorf("XR %s status.controllerRoleResource = %q, want staging-eu-karpenter-controller", clusterXR, got)
	}

	wantTags := map[string]any{"team": "platform", "cost-center": "4200", "kiso.dev/cluster": clusterName, "app.kubernetes.io/managed-by": "kiso"}
	wantOwner := []metav1.OwnerReference{{
		APIVersion: ClusterKind.GroupVersion().String(), Kind: ClusterKind.Kind, Name: clusterXR, UID: xr.GetUID(),
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}}
	for _, w := range want {
		got := env.Cluster.GetT(t, w.Kind, w.Namespace, w.Name)
		what := w.Kind.Kind + " " + objectName(w.Namespace, w.Name)
		owners := got.GetOwnerReferences()
		if w.Kind == ClusterUsageKind {
			// Crossplane makes a Usage's user its owner too, so the Usage lives as long as its user.
			owners = slices.DeleteFunc(slices.Clone(owners), func(o metav1.OwnerReference) bool { return o.Controller == nil || !*o.Controller })
		}
		if diff := cmp.Diff(wantOwner, owners); diff != "" {
			t.Errorf("%s owner references: -want, +got:\n%s", what, diff)
		}
		if w.Kind == PrometheusRuleKind {
			assertAlerts(t, got)
			continue
		}
		if w.Kind == ClusterViewKind {
			assertClusterView(t, got, xr)
			continue
		}
		if w.Kind == ClusterUsageKind || w.Kind.Group == ValidatingAdmissionPolicyKind.Group {
			continue
		}
		if ext := got.GetAnnotations()["crossplane.io/external-name"]; ext != w.ExternalName {
			t.Errorf("%s external name %q, want %q", what, ext, w.ExternalName)
		}
		if pc, _, _ := unstructured.NestedString(got.Object, "spec", "providerConfigRef", "name"); pc != "default" {
			t.Errorf("%s spec.providerConfigRef.name %q, want default", what, pc)
		}
		forProvider, _, _ := unstructured.NestedMap(got.Object, "spec", "forProvider")
		for field, value := range w.ForProvider {
			if diff := cmp.Diff(value, forProvider[field]); diff != "" {
				t.Errorf("%s spec.forProvider.%s: -want, +got:\n%s", what, field, diff)
			}
		}
		// Every AWS resource that can carry tags carries exactly the spec's and kiso's own.
		if taggable(t, w.Kind) {
			if diff := cmp.Diff(wantTags, forProvider["tags"]); diff != "" {
				t.Errorf("%s spec.forProvider.tags: -want, +got:\n%s", what, diff)
			}
		}
	}

	// Not Ready while AWS has nothing; Ready once a provider reports every managed resource Ready and
	// Synced.
	if c, _ := Condition(xr, "Ready"); c.Status != "False" {
		t.Errorf("XR %s Ready=%s (%s) before any managed resource is Ready; want False", clusterXR, c.Status, c.Message)
	}
	for _, w := range want {
		if strings.HasSuffix(w.Kind.Group, ".aws.upbound.io") {
			markManagedResourceAvailable(t, w.Kind, w.Name)
		}
	}
	env.Cluster.WaitForConditionT(t, xrSettleTimeout, ClusterKind, "", clusterXR, "Ready")
	// This cluster has prometheus-operator's CRDs: the alerts are composed, and the cluster says so.
	if c, _ := Condition(env.Cluster.GetT(t, ClusterKind, "", clusterXR), "Alerts"); c.Status != "True" || c.Reason != "Composed" {
		t.Errorf("XR %s Alerts=%s %s %s; want True Composed", clusterXR, c.Status, c.Reason, c.Message)
	}

	// Deleting the XR, as a user would, garbage-collects everything it composed.
	env.DeleteT(t, xrManifest)
	for _, w := range want {
		env.Cluster.WaitForDeletionT(t, 90*time.Second, w.Kind, w.Namespace, w.Name)
	}
}

// assertClusterView checks the view the cluster composes for its organizations: the XR's spec, and of its status
// what organizations read (not Karpenter's Helm values).
func assertClusterView(t *testing.T, view, xr *unstructured.Unstructured) {
	t.Helper()
	if got, _, _ := unstructured.NestedString(view.Object, "data", "spec", "clusterName"); got != clusterName {
		t.Errorf("the cluster's view: data.spec.clusterName %q, want %q", got, clusterName)
	}
	want, _, _ := unstructured.NestedString(xr.Object, "status", "controllerRoleResource")
	if got, _, _ := unstructured.NestedString(view.Object, "data", "status", "controllerRoleResource"); got != want || got == "" {
		t.Errorf("the cluster's view: data.status.controllerRoleResource %q, want the XR's %q", got, want)
	}
	if helm, found, _ := unstructured.NestedFieldNoCopy(view.Object, "data", "status", "helm"); found {
		t.Errorf("the cluster's view shows Karpenter's Helm values %v, which no organization reads", helm)
	}
}

// assertAlerts checks the PrometheusRule carries Karpenter's six alerts, kiso's own three and its recording rules per
// organization, each with an expression, every alert with a runbook; and that the alert a held rollout wave raises
// reads the series the rollout scenario sees Karpenter export for a node it does not replace.
func assertAlerts(t *testing.T, rule *unstructured.Unstructured) {
	t.Helper()
	groups, _, _ := unstructured.NestedSlice(rule.Object, "spec", "groups")
	var alerts, records []string
	for _, g := range groups {
		rules, _, _ := unstructured.NestedSlice(g.(map[string]any), "rules")
		for _, r := range rules {
			fields, _ := r.(map[string]any)
			expr, _ := fields["expr"].(string)
			alert, _ := fields["alert"].(string)
			record, _ := fields["record"].(string)
			switch {
			case expr == "":
				t.Errorf("rule %v of PrometheusRule %s has no expression", fields, rule.GetName())
			case record != "":
				records = append(records, record)
				continue
			case alert == "":
				t.Errorf("rule %v of PrometheusRule %s is neither an alert nor a recording rule", fields, rule.GetName())
				continue
			}
			alerts = append(alerts, alert)
			if runbook, _, _ := unstructured.NestedString(fields, "annotations", "runbook_url"); runbook == "" {
				t.Errorf("alert %s has no runbook_url", alert)
			}
			if alert == driftedNodeAlert && !strings.Contains(expr, driftedNodeClaimsSeries) {
				t.Errorf("alert %s's expression %q does not read %s", alert, expr, driftedNodeClaimsSeries)
			}
		}
	}
	sort.Strings(alerts)
	want := []string{
		"KarpenterCloudProviderErrors", "KarpenterDriftedNodeNotReplaced", "KarpenterEC2NodeClassNotReady", "KarpenterNodePoolNearLimit", "KarpenterNodePoolNotReady", "KarpenterPodsUnschedulable",
		"KisoClusterNotReady", "KisoClusterPlacementAudited", "KisoFunctionSilent", "KisoOrganizationNotReady", "KisoPlacementNotEnforced", "KisoRolloutBlocked",
		"KisoWarnModeWouldRefusePods",
	}
	if diff := cmp.Diff(want, alerts); diff != "" {
		t.Errorf("PrometheusRule %s/%s alerts: -want, +got:\n%s", rule.GetNamespace(), rule.GetName(), diff)
	}
	if !slices.Contains(records, "kiso:organization_nodes:count") || !slices.Contains(records, "kiso:organization_usage:sum") {
		t.Errorf("PrometheusRule %s/%s records %v; want kiso's recording rules per organization", rule.GetNamespace(), rule.GetName(), records)
	}
}

// taggable reports whether a managed resource kind has spec.forProvider.tags, from its CRD as served: a
// RolePolicyAttachment, a QueuePolicy and an EventBridge Target have no tags in AWS.
func taggable(t *testing.T, gvk schema.GroupVersionKind) bool {
	t.Helper()
	mapping, err := env.Cluster.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		t.Fatalf("cannot map %s: %v", gvk, err)
	}
	crd := env.Cluster.GetT(t, CustomResourceDefinitionKind, "", mapping.Resource.Resource+"."+gvk.Group)
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	for _, v := range versions {
		version := v.(map[string]any)
		if version["name"] != gvk.Version {
			continue
		}
		_, found, _ := unstructured.NestedMap(version, "schema", "openAPIV3Schema", "properties", "spec", "properties", "forProvider", "properties", "tags")
		return found
	}
	t.Fatalf("CRD %s does not serve version %s", crd.GetName(), gvk.Version)
	return false
}

// composedKeys and resourceRefKeys name composed objects as kind/namespace/name, sorted, to compare sets.
func composedKeys(want []wantComposed) []string {
	keys := make([]string, 0, len(want))
	for _, w := range want {
		keys = append(keys, w.Kind.GroupVersion().String()+" "+w.Kind.Kind+" "+objectName(w.Namespace, w.Name))
	}
	sort.Strings(keys)
	return keys
}

func resourceRefKeys(xr *unstructured.Unstructured) []string {
	refs, _, _ := unstructured.NestedSlice(xr.Object, "spec", "crossplane", "resourceRefs")
	keys := make([]string, 0, len(refs))
	for _, r := range refs {
		ref := r.(map[string]any)
		ns, _ := ref["namespace"].(string)
		keys = append(keys, ref["apiVersion"].(string)+" "+ref["kind"].(string)+" "+objectName(ns, ref["name"].(string)))
	}
	sort.Strings(keys)
	return keys
}
