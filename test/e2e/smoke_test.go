package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestSmoke proves the installation works end to end: kiso's XRDs are served, its functions are healthy,
// and a tenant's claim applied with kubectl becomes an XR and is deleted with it.
func TestSmoke(t *testing.T) {
	for _, name := range env.XRDs {
		env.Cluster.WaitForConditionT(t, 10*time.Second, CompositeResourceDefinitionKind, "", name, "Established")
	}
	if !slices.Contains(env.XRDs, IsolationXRDName) {
		t.Fatalf("the Configuration installed XRDs %v, want %s among them", env.XRDs, IsolationXRDName)
	}
	if len(env.Functions) == 0 {
		t.Fatal("no kiso Function is installed")
	}
	for _, name := range env.Functions {
		env.Cluster.WaitForConditionT(t, 10*time.Second, FunctionKind, "", name, "Healthy")
	}

	claim, err := os.ReadFile(filepath.Join("testdata", "smoke", "claim.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	env.ApplyT(t, claim)
	bound := env.Cluster.WaitForT(t, 30*time.Second, IsolationClaimKind, "e2e-smoke", "smoke", func(u *unstructured.Unstructured) (bool, string) {
		if name, _, _ := unstructured.NestedString(u.Object, "spec", "resourceRef", "name"); name == "" {
			return false, "claim not yet bound to an XR"
		}
		return true, ""
	})
	xrName, _, _ := unstructured.NestedString(bound.Object, "spec", "resourceRef", "name")
	xr := env.Cluster.WaitForT(t, 60*time.Second, IsolationKind, "", xrName, functionRan)
	synced, _ := Condition(xr, "Synced")
	t.Logf("XR %s: Synced=%s %s %s", xrName, synced.Status, synced.Reason, synced.Message)

	env.DeleteT(t, claim)
	env.Cluster.WaitForDeletionT(t, 60*time.Second, IsolationKind, "", xrName)
}

// functionRan reports whether Crossplane has run the XR's pipeline to its end: the XR is Synced (no function
// returned a fatal result, no step failed to reach its function) and carries the condition only kiso's
// isolation function sets, ReferencesResolved (False here: the smoke claim's reference NodePool need not
// exist, which is a condition, not a failure). A function that fails on every call never passes.
func functionRan(u *unstructured.Unstructured) (bool, string) {
	synced, ok := Condition(u, "Synced")
	_, resolved := Condition(u, "ReferencesResolved")
	switch {
	case !ok:
		return false, "XR not yet reconciled"
	case synced.Status == "True" && resolved:
		return true, ""
	default:
		return false, fmt.Sprintf("Synced=%s reason=%s message=%q, ReferencesResolved set: %t", synced.Status, synced.Reason, synced.Message, resolved)
	}
}

// TestAdmissionPoliciesServed proves the control plane serves both kinds of admission policy as EKS serves them,
// with no feature gate or runtime-config: at admissionregistration.k8s.io/v1, and no beta API, so that placement
// enforced at admission is tested as a cluster would run it.
func TestAdmissionPoliciesServed(t *testing.T) {
	list, err := env.Cluster.Typed.Discovery().ServerResourcesForGroupVersion("admissionregistration.k8s.io/v1")
	if err != nil {
		t.Fatalf("cannot discover admissionregistration.k8s.io/v1: %v", err)
	}
	for _, resource := range []string{"validatingadmissionpolicies", "mutatingadmissionpolicies"} {
		if !slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == resource }) {
			t.Errorf("admissionregistration.k8s.io/v1 does not serve %s", resource)
		}
	}
	if _, err := env.Cluster.Typed.Discovery().ServerResourcesForGroupVersion("admissionregistration.k8s.io/v1beta1"); err == nil {
		t.Error("the control plane serves admissionregistration.k8s.io/v1beta1, which EKS does not turn on")
	}
}

// TestCompositionsReferToInstalledFunctions proves every pipeline step of the Configuration's Compositions
// names a Function that is installed. The harness installs each Function under the name Crossplane's
// dependency resolution gives it (kiso-dev-function-<name> for a package pushed to <host>/kiso-dev), so
// a Composition naming a function otherwise would work here only by accident and fail for every user.
func TestCompositionsReferToInstalledFunctions(t *testing.T) {
	for _, composition := range env.Cluster.ListT(t, CompositionKind, "", "") {
		pipeline, _, _ := unstructured.NestedSlice(composition.Object, "spec", "pipeline")
		for i, raw := range pipeline {
			step, _ := raw.(map[string]any)
			name, _, _ := unstructured.NestedString(step, "functionRef", "name")
			if !slices.Contains(env.Functions, name) {
				t.Errorf("Composition %s spec.pipeline[%d].functionRef.name is %q; installed Functions are %v",
					composition.GetName(), i, name, env.Functions)
			}
		}
	}
}
