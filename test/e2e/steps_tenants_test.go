package e2e

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Steps of tenants: one organization's claim as a user writes it, and what it becomes.

// tenant is one organization's claim, written as a user would.
type tenant struct {
	Namespace, Name, Organization, Isolation string
	Stacks                                   []string
	// Namespaces lists a stack's namespaces where they are not the default <organization>-<stack>.
	Namespaces map[string][]string
	// ClusterRef names the XKarpenterCluster the claim binds to, none if empty.
	ClusterRef string
	// Reference names the reference NodeClass and NodePool the claim clones, tenant-reference if empty.
	Reference string
}

// claim is the claim's namespace, labelled for the organization by the platform, and the claim.
func (tn tenant) claim() []byte {
	stacks := make([]string, 0, len(tn.Stacks))
	for _, s := range tn.Stacks {
		stacks = append(stacks, "  - name: "+s)
		if nss := tn.Namespaces[s]; len(nss) > 0 {
			stacks = append(stacks, "    namespaces: ["+strings.Join(nss, ", ")+"]")
		}
	}
	reference := tn.Reference
	if reference == "" {
		reference = "tenant-reference"
	}
	clusterRef := ""
	if tn.ClusterRef != "" {
		clusterRef = "\n  clusterRef: {name: " + tn.ClusterRef + "}"
	}
	return []byte(fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata:
  name: %[1]s
  labels:
    kiso.dev/organization: %[3]s
---
apiVersion: kiso.dev/v1alpha1
kind: KarpenterIsolation
metadata:
  name: %[2]s
  namespace: %[1]s
spec:
  organization: %[3]s
  customer: %[3]s-corp
  isolation: %[4]s%[7]s
  stacks:
%[5]s
  nodeClassRef:
    name: %[6]s
  nodePoolRef:
    name: %[6]s
  pool:
    limits:
      cpu: 16
  tags:
    cost-center: "42"
`, tn.Namespace, tn.Name, tn.Organization, tn.Isolation, strings.Join(stacks, "\n"), reference, clusterRef))
}

// claimOnly is the claim without its namespace, for deleting the claim alone.
func (tn tenant) claimOnly() []byte {
	_, c, _ := strings.Cut(string(tn.claim()), "---\n")
	return []byte(c)
}

// xrName waits until the claim is bound and returns its XR's name.
func (tn tenant) xrName(t *testing.T) string {
	t.Helper()
	bound := env.Cluster.WaitForT(t, 60*time.Second, IsolationClaimKind, tn.Namespace, tn.Name, func(u *unstructured.Unstructured) (bool, string) {
		if name, _, _ := unstructured.NestedString(u.Object, "spec", "resourceRef", "name"); name == "" {
			return false, "claim not yet bound to an XR"
		}
		return true, ""
	})
	name, _, _ := unstructured.NestedString(bound.Object, "spec", "resourceRef", "name")
	return name
}

func (tn tenant) pool(stack string) string {
	if stack == "" {
		return "kiso-" + tn.Organization
	}
	return "kiso-" + tn.Organization + "." + stack
}

// isolationFunction is the installed Function that composes XKarpenterIsolations.
const isolationFunction = "kiso-dev-function-isolation"

// touches counts the touches of XRs, to make each annotation value new: an unchanged annotation is no update,
// and Crossplane would not reconcile.
var touches atomic.Int64
