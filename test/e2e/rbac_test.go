package e2e

import (
	"context"
	"strings"
	"testing"
	"time"
)

// rbacExampleRole is the name of the ClusterRole in rbacExample.
const rbacExampleRole = "crossplane:kiso:karpenter"

// crossplaneUser is who Crossplane acts as: its chart's service account.
var crossplaneUser = "system:serviceaccount:" + crossplaneNamespace + ":" + crossplaneServiceAccount

// TestRBACExampleIsNeeded proves examples/rbac/crossplane-karpenter.yaml is needed: Crossplane runs with only
// what its chart, its RBAC manager and that example grant it (every other scenario proves that is enough), and
// without the example it may not compose Karpenter's kinds: nothing else grants them.
func TestRBACExampleIsNeeded(t *testing.T) {
	requireNodesT(t)
	for _, check := range []struct{ verb, resource string }{
		{"create", "nodepools.karpenter.sh"},
		{"create", "ec2nodeclasses.karpenter.k8s.aws"},
		{"create", "kwoknodeclasses.karpenter.kwok.sh"},
		{"create", "validatingadmissionpolicies.admissionregistration.k8s.io"},
	} {
		if !canI(t, check.verb, check.resource) {
			t.Errorf("Crossplane (%s) may not %s %s with the example applied", crossplaneUser, check.verb, check.resource)
		}
	}

	example := readRepoFileT(t, rbacExample)
	if _, err := env.Kubectl.Run(t.Context(), nil, "delete", "clusterrole", rbacExampleRole); err != nil {
		t.Fatalf("cannot delete ClusterRole %s: %v", rbacExampleRole, err)
	}
	restored := false
	restore := func() {
		if restored {
			return
		}
		restored = true
		if err := env.Kubectl.Apply(context.Background(), example); err != nil {
			t.Errorf("cannot apply %s again: %v", rbacExample, err)
		}
	}
	t.Cleanup(restore)
	// The aggregation controller takes the example's rules out of Crossplane's ClusterRole.
	waitForT(t, 30*time.Second, "Crossplane to lose the example's permissions", func(context.Context) (bool, string, error) {
		return !canI(t, "create", "nodepools.karpenter.sh"), "Crossplane may still create NodePools", nil
	})

	for _, resource := range []string{"nodepools.karpenter.sh", "kwoknodeclasses.karpenter.kwok.sh", "ec2nodeclasses.karpenter.k8s.aws"} {
		if canI(t, "create", resource) {
			t.Errorf("Crossplane (%s) may still create %s without %s", crossplaneUser, resource, rbacExample)
		}
	}

	// With the example back, Crossplane may compose Karpenter's kinds again.
	restore()
	waitForT(t, 30*time.Second, "Crossplane to hold the example's permissions again", func(context.Context) (bool, string, error) {
		return canI(t, "create", "nodepools.karpenter.sh"), "Crossplane may not create NodePools yet", nil
	})
}

// canI asks the apiserver whether Crossplane may do verb on resource.
func canI(t *testing.T, verb, resource string) bool {
	t.Helper()
	out := env.TryT(t, nil, "auth", "can-i", verb, resource, "--as="+crossplaneUser)
	return strings.TrimSpace(out.Stdout) == "yes"
}
