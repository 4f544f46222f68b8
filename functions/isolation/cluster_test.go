package main

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/kiso-dev/kiso/functions/internal/fntest"
)

// clusterXR is an XKarpenterCluster as the cluster function leaves it.
const clusterXR = `{"apiVersion":"kiso.dev/v1alpha1","kind":"XKarpenterCluster","metadata":{"name":"prod"},
	"spec":{"clusterName":"prod-eu","region":"eu-west-3","accountId":"123456789012","partition":"aws",
	        "providerConfigName":"aws","permissionsBoundary":"arn:aws:iam::123456789012:policy/boundary",
	        "tags":{"environment":"prod","kubernetes.io/cluster/prod-eu":"owned"}},
	"status":{"controllerRoleResource":"prod-eu-karpenter-controller","nodeRolePath":"/kiso/prod-eu/organizations/",
	          "nodeRoleName":"kiso-prod-eu-karpenter-node","namePrefix":"kiso-prod-eu"}}`

var dedicatedSpec = strings.Replace(orgSpec, `"nodeClassRef"`, `"clusterRef":{"name":"prod"},"nodeRole":"Dedicated","nodeClassRef"`, 1)

func TestDedicatedNodeRoleIsTheOrganizationsOwn(t *testing.T) {
	rsp := run(t, newRequest(t, input, xr(dedicatedSpec), nil), cluster{refNodeClass, refNodePool, clusterXR})
	fntest.AssertNoFatal(t, rsp)
	got := fntest.Desired(t, rsp)

	tags := map[string]any{"environment": "prod", "kubernetes.io/cluster/prod-eu": "owned", "kiso.dev/organization": "acme", "kiso.dev/customer": "acme-corp"}
	wantRole := fntest.JSONMap(t, `{"apiVersion":"iam.aws.upbound.io/v1beta1","kind":"Role",
		"metadata":{"name":"kiso-acme-node","annotations":{"crossplane.io/external-name":"kiso-prod-eu-org-acme-node","kiso.dev/instance-profile":"kiso-prod-eu-org-acme-node"},
		            "labels":{"app.kubernetes.io/managed-by":"kiso","kiso.dev/organization":"acme"}},
		"spec":{"providerConfigRef":{"name":"aws"},"forProvider":{
			"assumeRolePolicy":"{\"Version\":\"2012-10-17\",\"Statement\":[{\"Effect\":\"Allow\",\"Principal\":{\"Service\":\"ec2.amazonaws.com\"},\"Action\":\"sts:AssumeRole\"}]}",
			"forceDetachPolicies":true,"path":"/kiso/prod-eu/organizations/","permissionsBoundary":"arn:aws:iam::123456789012:policy/boundary"}}}`)
	fntest.Dig(wantRole, "spec", "forProvider").(map[string]any)["tags"] = tags
	if diff := cmp.Diff(wantRole, got["node-role"]); diff != "" {
		t.Errorf("dedicated Role: -want, +got:\n%s", diff)
	}
	for _, name := range []string{"node-instance-profile", "node-access-entry", "node-policy-attachment-worker-node", "node-policy-attachment-cni", "node-policy-attachment-ecr-pull", "node-policy-attachment-ssm"} {
		if _, ok := got[name]; !ok {
			t.Errorf("dedicated identity lacks %s", name)
		}
	}

	nc := got["nodeclass-kiso-acme"]["spec"].(map[string]any)
	if _, ok := nc["role"]; ok {
		t.Errorf("NodeClass still names the reference's role %v; it must name only the organization's identity", nc["role"])
	}
	if nc["instanceProfile"] != "kiso-prod-eu-org-acme-node" {
		t.Errorf("NodeClass instanceProfile: want kiso-prod-eu-org-acme-node, got %v", nc["instanceProfile"])
	}
	wantTags := map[string]any{"team": "platform", "environment": "prod", "kiso.dev/organization": "acme", "kiso.dev/customer": "acme-corp"}
	if diff := cmp.Diff(wantTags, nc["tags"]); diff != "" {
		t.Errorf("NodeClass tags (cluster tags inherited, Karpenter-reserved ones left out): -want, +got:\n%s", diff)
	}

	// No Usage orders their deletion: the cluster's policy keeps each identity object while an EC2NodeClass names
	// the instance profile each is annotated with (TestAnOrganizationComposesNoUsage).
	for name, u := range got {
		if fntest.Dig(u, "kind") == "ClusterUsage" {
			t.Errorf("%s: a ClusterUsage composed", name)
		}
	}
}

func TestMissingClusterKeepsComposedPools(t *testing.T) {
	observed := composedOrg(t, true)
	spec := strings.Replace(orgSpec, `"nodeClassRef"`, `"clusterRef":{"name":"prod"},"nodeClassRef"`, 1)
	rsp := run(t, newRequest(t, input, xr(spec), observed), cluster{refNodeClass, refNodePool})
	fntest.AssertNoFatal(t, rsp)
	if diff := cmp.Diff(slices.Sorted(maps.Keys(observed)), slices.Sorted(maps.Keys(fntest.Desired(t, rsp)))); diff != "" {
		t.Errorf("composed resources must all be kept: -observed, +desired:\n%s", diff)
	}
	assertCondition(t, rsp, TypeReferencesResolved, fnv1.Status_STATUS_CONDITION_FALSE, ReasonNotFound,
		`spec.clusterRef: XKarpenterCluster "prod" not found, or it has not composed its view for organizations (EnvironmentConfig "kiso-cluster.prod") yet; keeping the pools already composed unchanged meanwhile`)
}

func TestClusterNotYetRenderedKeepsComposedPools(t *testing.T) {
	observed := composedOrg(t, true)
	spec := strings.Replace(orgSpec, `"nodeClassRef"`, `"clusterRef":{"name":"prod"},"nodeClassRef"`, 1)
	fresh := `{"apiVersion":"kiso.dev/v1alpha1","kind":"XKarpenterCluster","metadata":{"name":"prod"},"spec":{"clusterName":"prod-eu"}}`
	rsp := run(t, newRequest(t, input, xr(spec), observed), cluster{refNodeClass, refNodePool, fresh})
	if diff := cmp.Diff(slices.Sorted(maps.Keys(observed)), slices.Sorted(maps.Keys(fntest.Desired(t, rsp)))); diff != "" {
		t.Errorf("composed resources must all be kept: -observed, +desired:\n%s", diff)
	}
	assertCondition(t, rsp, TypeReferencesResolved, fnv1.Status_STATUS_CONDITION_FALSE, ReasonClusterNotReady,
		`spec.clusterRef: XKarpenterCluster "prod" has not been rendered yet (its status has no controllerRoleResource); keeping the pools already composed unchanged meanwhile`)
}

// TestAViewTheClusterDoesNotControlIsNotRead: an EnvironmentConfig of the view's name that the cluster does not
// control (the platform's own, or another cluster's) is not read as the cluster's; the pools stay as they are.
func TestAViewTheClusterDoesNotControlIsNotRead(t *testing.T) {
	observed := composedOrg(t, true)
	spec := strings.Replace(orgSpec, `"nodeClassRef"`, `"clusterRef":{"name":"prod"},"nodeClassRef"`, 1)
	for name, controller := range map[string][]metav1.OwnerReference{
		"NoController":       nil,
		"AnotherCluster":     {{APIVersion: "kiso.dev/v1alpha1", Kind: "XKarpenterCluster", Name: "staging", Controller: ptr.To(true)}},
		"AnotherKind":        {{APIVersion: "example.org/v1", Kind: "XKarpenterCluster", Name: "prod", Controller: ptr.To(true)}},
		"OwnedNotControlled": {{APIVersion: "kiso.dev/v1alpha1", Kind: "XKarpenterCluster", Name: "prod"}},
	} {
		t.Run(name, func(t *testing.T) {
			view := fntest.ClusterView(&unstructured.Unstructured{Object: fntest.JSONMap(t, clusterXR)})
			view.SetOwnerReferences(controller)
			b, err := json.Marshal(view.Object)
			if err != nil {
				t.Fatal(err)
			}
			rsp := run(t, newRequest(t, input, xr(spec), observed), cluster{refNodeClass, refNodePool, string(b)})
			if diff := cmp.Diff(slices.Sorted(maps.Keys(observed)), slices.Sorted(maps.Keys(fntest.Desired(t, rsp)))); diff != "" {
				t.Errorf("composed resources must all be kept: -observed, +desired:\n%s", diff)
			}
			assertCondition(t, rsp, TypeReferencesResolved, fnv1.Status_STATUS_CONDITION_FALSE, ReasonClusterNotReady,
				`spec.clusterRef: EnvironmentConfig "kiso-cluster.prod" is not the view of XKarpenterCluster "prod": XKarpenterCluster "prod" does not control it; keeping the pools already composed unchanged meanwhile`)
		})
	}
}

func TestDedicatedNeedsAClusterThatMayPassIt(t *testing.T) {
	boundary := strings.Replace(clusterXR, `"nodeRolePath":"/kiso/prod-eu/organizations/",`, ``, 1)
	rsp := run(t, newRequest(t, input, xr(dedicatedSpec), nil), cluster{refNodeClass, refNodePool, boundary})
	assertFatal(t, rsp, `spec.nodeRole: Forbidden: XKarpenterCluster "prod" uses an existing instance profile and its controller may pass that one role only; use Shared`)
}
