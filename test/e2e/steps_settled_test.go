package e2e

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Steps of settled organizations: an organization the isolation function asked to call again only in an hour,
// and each change reaching it by its own event.

// eventDeadline is how soon each change an organization reads must reach it once it is settled: its last call
// asked to be called again in an hour (fncall.TTLSettled), so only the change's own event, passed on by Crossplane's
// watches, can make it happen sooner. Crossplane and the providers run as installed (no poll shortened) and
// nothing touches the XR.
const eventDeadline = 60 * time.Second

// settleTimeout bounds the wait for an organization to settle: if a burst (pools provisioned, nodes drained) opened
// Crossplane's watch circuit breaker for its XR, kiso asks to be called every 25 s for five and a half minutes
// after (fncall.TTLDropping) before it asks for the hour again.
const settleTimeout = 8 * time.Minute

// The reference pairs of TestASettledOrganizationSeesEachChangeAtOnce: editedReference is cloned only by the
// organization whose step edits it, settledReference by the others.
const (
	settledReference = "settled-reference"
	editedReference  = "edited-reference"
)

// settledOrganization is an organization of TestASettledOrganizationSeesEachChangeAtOnce: claim e2e-<name>/<name>,
// of stack web whose namespaces are web and more, the claim's tenant admin admin in web.
type settledOrganization struct {
	tenant
	xr, pool, web, more, admin string
}

// settleOrganizationT applies an organization of stack web cloning the reference pair reference, with namespace
// web labelled for it and namespace more labelled for it when given, and waits until its claim is Ready and its
// Role is in web (and in more when given). Everything goes at the step's end.
func settleOrganizationT(t *testing.T, name, reference string, given bool) settledOrganization {
	t.Helper()
	o := settledOrganization{web: "e2e-" + name + "-web", more: "e2e-" + name + "-more", admin: "e2e-" + name + "-admin"}
	o.tenant = tenant{Namespace: "e2e-" + name, Name: name, Organization: name, Isolation: "stack", Stacks: []string{"web"},
		Namespaces: map[string][]string{"web": {o.web, o.more}}, Reference: reference}
	moreOrganization := ""
	if given {
		moreOrganization = name
	}
	namespaces := []byte(namespaceYAML(o.web, name) + "---\n" + namespaceYAML(o.more, moreOrganization) + "---\n" +
		roleBinding(o.web, "tenant-admin", "admin", o.admin))
	env.ApplyT(t, namespaces)
	t.Cleanup(func() { deleteAtCleanup(t, namespaces) })
	claim := o.claim()
	env.ApplyT(t, claim)
	t.Cleanup(func() { deleteAtCleanup(t, claim) })
	o.xr = o.xrName(t)
	o.pool = o.tenant.pool("web")
	markPoolReady(t, o.pool)
	env.Cluster.WaitForConditionT(t, xrSettleTimeout, IsolationClaimKind, o.Namespace, o.Name, "Ready")
	o.role(t, o.web)(xrSettleTimeout, o.ownRole)
	if given {
		o.role(t, o.more)(xrSettleTimeout, o.ownRole)
	}
	return o
}

// role waits, at most timeout, until Role kiso-placement in namespace ns passes check.
func (o settledOrganization) role(t *testing.T, ns string) func(time.Duration, func(*unstructured.Unstructured) (bool, string)) {
	return func(timeout time.Duration, check func(*unstructured.Unstructured) (bool, string)) {
		t.Helper()
		env.Cluster.WaitForT(t, timeout, RBACRoleKind, ns, "kiso-placement", check)
	}
}

// ownRole is true of the organization's own Role, not being deleted.
func (o settledOrganization) ownRole(u *unstructured.Unstructured) (bool, string) {
	return u.GetLabels()["kiso.dev/organization"] == o.Organization && u.GetDeletionTimestamp() == nil, "not " + o.Organization + "'s"
}

// waitSettledT waits until the latest call of the isolation function for the XR asked for the settled TTL: from
// then on the organization is reconciled again only by an event.
func waitSettledT(t *testing.T, xr string) {
	t.Helper()
	waitForT(t, settleTimeout, "XR "+xr+" settled (its latest call asked for "+settledTTL+")", func(context.Context) (bool, string, error) {
		latest, err := env.latestTTLs(isolationFunction)
		if err != nil {
			return false, "", err
		}
		return latest[xr] == settledTTL, "its latest call asked for " + latest[xr], nil
	})
}

// callsOfT counts the isolation function's calls for the XR so far.
func callsOfT(t *testing.T, xr string) int {
	t.Helper()
	n, err := env.CallsAfter(isolationFunction, xr, 0)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// reachesSettledT makes a change to a settled organization and waits, at most eventDeadline, for its effect;
// it logs how long the change took to arrive.
func reachesSettledT(t *testing.T, xr, change string, do func(), arrived func(*unstructured.Unstructured) (bool, string), wait func(timeout time.Duration, check func(*unstructured.Unstructured) (bool, string))) {
	t.Helper()
	waitSettledT(t, xr)
	start := time.Now()
	do()
	wait(eventDeadline, arrived)
	t.Logf("%s reached the settled organization in %s", change, time.Since(start).Round(100*time.Millisecond))
}

// assertRemoteSettledOrganizationSeesEachChangeT is TestASettledOrganizationSeesEachChangeAtOnce in a workload
// cluster, for an organization bound to it (claim wl-wonka/wonka, stack web, its pool pool): each change is made in the workload
// cluster, where provider-kubernetes runs as the install gives it (watches on, its install poll).
func assertRemoteSettledOrganizationSeesEachChangeT(t *testing.T, wl *WorkloadCluster, pool string) {
	t.Helper()
	const web, more, admin = "wl-wonka-web", "wl-wonka-more", "wl-wonka-admin"
	tn := tenant{Namespace: "wl-wonka", Name: "wonka"}
	xr := tn.xrName(t)
	setup := []byte(namespaceYAML(more, "") + "---\n" + roleBinding(web, "tenant-admin", "admin", admin))
	if err := wl.Kubectl.Apply(t.Context(), setup); err != nil {
		t.Fatalf("cannot create the workload cluster's namespace and tenant admin: %v", err)
	}
	t.Cleanup(func() { _ = wl.Kubectl.Delete(context.Background(), setup, false) })
	// Before the namespace goes, the claim is put back as it was and what kiso composed in the namespace is gone:
	// the steps after this one find the organization as they would have without it. (Left listing a namespace
	// deleted there, the organization would drop its objects once provider-kubernetes lists the namespaces again,
	// during whatever step runs then.)
	t.Cleanup(func() {
		restore := `{"spec":{"stacks":[{"name":"web","namespaces":["` + web + `"]}]}}`
		if _, err := env.Kubectl.Run(context.Background(), nil, "patch", "karpenterisolation", "wonka", "-n", "wl-wonka", "--type=merge", "-p", restore); err != nil {
			t.Errorf("cannot take %s out of wonka's claim: %v", more, err)
			return
		}
		for _, name := range []string{"workload.configmap." + more + ".kiso-placement", "workload.role." + more + ".kiso-placement"} {
			if err := env.Cluster.WaitForDeletion(context.Background(), 2*time.Minute, ObjectKind, "", name); err != nil {
				t.Errorf("what kiso composed in %s outlived its place in wonka's claim: %v", more, err)
			}
		}
	})
	// The claim lists the namespace before the platform gives it (a grant then waits for the platform alone).
	patch := `{"spec":{"stacks":[{"name":"web","namespaces":["` + web + `","` + more + `"]}]}}`
	if _, err := env.Kubectl.Run(t.Context(), nil, "patch", "karpenterisolation", "wonka", "-n", "wl-wonka", "--type=merge", "-p", patch); err != nil {
		t.Fatalf("cannot list %s in wonka's claim: %v", more, err)
	}
	role := func(ns string) func(time.Duration, func(*unstructured.Unstructured) (bool, string)) {
		return func(timeout time.Duration, check func(*unstructured.Unstructured) (bool, string)) {
			wl.Cluster.WaitForT(t, timeout, RBACRoleKind, ns, "kiso-placement", check)
		}
	}
	ownRole := func(u *unstructured.Unstructured) (bool, string) {
		return u.GetLabels()["kiso.dev/organization"] == "wonka" && u.GetDeletionTimestamp() == nil, "not wonka's"
	}

	reachesSettledT(t, xr, "the platform's label on namespace "+more+" in the workload cluster", func() {
		if _, err := wl.Kubectl.Run(t.Context(), nil, "label", "namespace", more, "kiso.dev/organization=wonka"); err != nil {
			t.Fatal(err)
		}
	}, ownRole, role(more))

	before := wl.Cluster.GetT(t, RBACRoleKind, web, "kiso-placement")
	reachesSettledT(t, xr, "the tenant admin's deletion of Role "+web+"/kiso-placement in the workload cluster", func() {
		if out, err := wl.Kubectl.Try(t.Context(), nil, "delete", "role", "kiso-placement", "-n", web, "--as="+admin); err != nil || out.ExitCode != 0 {
			t.Fatalf("the tenant admin cannot delete the Role there: %v %s", err, out.Stderr)
		}
	}, func(u *unstructured.Unstructured) (bool, string) {
		return u.GetUID() != before.GetUID(), "not composed again yet"
	}, role(web))

	editReferenceNodePoolT(t, xr, wl.Kubectl, wl.Cluster, "kwok-reference", pool, " in the workload cluster")
}

// editReferenceNodePoolT is the platform editing the reference NodePool (a label of its node template) where
// kubectl and cluster act, and the settled organization's pool getting the label; where says where, for the log.
func editReferenceNodePoolT(t *testing.T, xr string, kubectl *Kubectl, cluster *Cluster, reference, pool, where string) {
	t.Helper()
	edit := `{"spec":{"template":{"metadata":{"labels":{"platform.example.com/edition":"2"}}}}}`
	reachesSettledT(t, xr, "the platform's edit of reference NodePool "+reference+where, func() {
		if _, err := kubectl.Run(t.Context(), nil, "patch", "nodepool", reference, "--type=merge", "-p", edit); err != nil {
			t.Fatalf("cannot edit the reference NodePool%s: %v", where, err)
		}
	}, func(u *unstructured.Unstructured) (bool, string) {
		labels, _, _ := unstructured.NestedStringMap(u.Object, "spec", "template", "metadata", "labels")
		return labels["platform.example.com/edition"] == "2", "the NodePool's template has no platform.example.com/edition=2 yet"
	}, func(timeout time.Duration, check func(*unstructured.Unstructured) (bool, string)) {
		cluster.WaitForT(t, timeout, NodePoolKind, "", pool, check)
	})
}
