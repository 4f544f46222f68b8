package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// upgradeOrganizations are the claims testdata/upgrade/claims.yaml onboards on the last release, by namespace and
// name (each claim's name is its organization's).
var upgradeOrganizations = []string{"e2e-sabre/sabre", "e2e-vance/vance"}

// upgradeTimeout bounds each wait of the upgrade: organizations onboarding, pods running, a reconcile by the
// upgraded functions.
const upgradeTimeout = 3 * time.Minute

// TestAnUpgradeFromTheLastReleaseReplacesNoNode is a platform team's upgrade, as docs/operations.md has it, on a
// live fleet: the last release (built from the git history) installed, two organizations onboarded on it with pods
// running on their pools' nodes, then this tree's RBAC and packages applied over it. Once this tree's functions
// have rendered every organization and the cluster and Crossplane has applied what they rendered, every
// organization is Ready, and no node template, NodeClass, NodeClaim or pod changed: no node was replaced. The run
// upgrades before the scenarios start (upgradeFromRelease); this scenario judges what it observed.
func TestAnUpgradeFromTheLastReleaseReplacesNoNode(t *testing.T) {
	besideOthersT(t)
	requireNodesT(t)
	u := env.Upgrade
	if u == nil {
		t.Fatal("the run did not upgrade from the last release: the suite installs it first only when this scenario is selected")
	}
	if u.Err != nil {
		t.Fatalf("upgrading from %s: %v", u.From, u.Err)
	}
	if len(u.Before.NodeClaims) == 0 || len(u.Before.Pods) == 0 {
		t.Fatalf("nothing ran on %s before the upgrade (NodeClaims %v, pods %v): the upgrade proved nothing", u.From, u.Before.NodeClaims, u.Before.Pods)
	}
	for _, part := range []struct {
		what          string
		before, after map[string]string
	}{
		{"node templates (NodePool spec.template)", u.Before.Templates, u.After.Templates},
		{"NodeClass specs", u.Before.NodeClasses, u.After.NodeClasses},
		{"NodeClaims and their nodes", u.Before.NodeClaims, u.After.NodeClaims},
		{"pods and their nodes", u.Before.Pods, u.After.Pods},
	} {
		if diff := cmp.Diff(part.before, part.after); diff != "" {
			t.Errorf("upgrading from %s changed the fleet's %s (-%s +upgraded):\n%s", u.From, part.what, u.From, diff)
		}
	}
	if len(u.After.Drifted) > 0 {
		t.Errorf("after upgrading from %s, Karpenter finds NodeClaims drifted: %v", u.From, u.After.Drifted)
	}
}

// upgradeFromRelease runs the upgrade TestAnUpgradeFromTheLastReleaseReplacesNoNode judges, on the environment
// booted with the last release: organizations onboard with running pods (where nodes run), this tree's RBAC and
// packages go in over the release, and once this tree's functions have rendered every organization twice (the
// second call reads what the first applied), what replaces nodes is read again. The organizations and their
// cluster are deleted before the scenarios start, which compose a local cluster of their own. An error is returned
// only when this tree could not be installed; what went wrong with the organizations is the record's.
func upgradeFromRelease(ctx context.Context, e *Environment, p *prepared) (*upgradeRecord, error) {
	u := &upgradeRecord{From: p.Release.Version}
	var xrs map[string]string // XR -> the function that renders it
	if e.Nodes {
		xrs, u.Err = onboardOnRelease(ctx, e, u)
		defer func() {
			ctx := context.WithoutCancel(ctx)
			u.Err = errors.Join(u.Err, deleteUpgradeFleet(ctx), recordStaleCompositeGauges(ctx, e))
		}()
	}
	if err := grantCrossplane(ctx, e.Kubectl, p, p.RepoRoot); err != nil {
		return u, err
	}
	if _, err := e.installPackages(ctx, p.packages(), ""); err != nil {
		return u, err
	}
	// Crossplane's runtime removes an inactive revision's Deployment: the release's functions go likewise, so
	// every call from now on reaches this tree's.
	for _, rt := range e.released {
		if err := rt.server.Stop(); err != nil {
			return u, err
		}
	}
	if xrs != nil && u.Err == nil {
		u.Err = waitForUpgradedRenders(ctx, e, xrs)
		if u.Err == nil {
			u.After, u.Err = snapshotFleet(ctx, e)
		}
	}
	return u, nil
}

// onboardOnRelease applies testdata/upgrade on the release, waits for its organizations' pools and for a
// Deployment's pods in each stack to run on them, and records the fleet. It returns each XR and its function.
func onboardOnRelease(ctx context.Context, e *Environment, u *upgradeRecord) (map[string]string, error) {
	for _, file := range []string{"references.yaml", "cluster.yaml", "claims.yaml"} {
		manifest, err := os.ReadFile(filepath.Join("testdata", "upgrade", file))
		if err != nil {
			return nil, err
		}
		if err := e.Kubectl.Apply(ctx, manifest); err != nil {
			return nil, fmt.Errorf("cannot apply testdata/upgrade/%s on %s: %w", file, u.From, err)
		}
	}
	// No provider runs, so the cluster's AWS objects never get Ready, nor the cluster; its organizations do.
	xrs := map[string]string{"e2e-upgrade": packageOwner + "-function-cluster"}
	var pods []string // namespace/Deployment
	for _, ref := range upgradeOrganizations {
		namespace, name, _ := strings.Cut(ref, "/")
		claim, err := e.Cluster.WaitFor(ctx, upgradeTimeout, IsolationClaimKind, namespace, name, poolsReady)
		if err != nil {
			return nil, err
		}
		u.Organizations = append(u.Organizations, ref)
		xr, _, _ := unstructured.NestedString(claim.Object, "spec", "resourceRef", "name")
		xrs[xr] = packageOwner + "-function-isolation"
		org := organizationOf(claim, name)
		for _, stack := range slices.Sorted(maps.Keys(org.Stacks)) {
			sp := org.Stacks[stack]
			if err := createDeployment(ctx, sp.Namespaces[0], upgradeDeployment, 2, "100m", sp.NodeSelector, sp.Tolerations); err != nil {
				return nil, err
			}
			pods = append(pods, sp.Namespaces[0]+"/"+upgradeDeployment)
		}
	}
	for _, ref := range pods {
		namespace, name, _ := strings.Cut(ref, "/")
		err := waitFor(ctx, upgradeTimeout, "Deployment "+ref+"'s pods running on their pool's nodes", func(ctx context.Context) (bool, string, error) {
			d, err := e.Cluster.Typed.AppsV1().Deployments(namespace).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error(), nil
			}
			return d.Status.ReadyReplicas == *d.Spec.Replicas, fmt.Sprintf("%d of %d ready", d.Status.ReadyReplicas, *d.Spec.Replicas), nil
		})
		if err != nil {
			return nil, err
		}
	}
	var err error
	u.Before, err = snapshotFleet(ctx, e)
	return xrs, err
}

// upgradeDeployment is the Deployment each stack of the upgraded organizations runs.
const upgradeDeployment = "app"

// waitForUpgradedRenders waits until this tree's functions have been called twice for each XR (the second call
// starts once Crossplane has applied what the first rendered), the cluster is Synced and every organization Ready.
func waitForUpgradedRenders(ctx context.Context, e *Environment, xrs map[string]string) error {
	for _, xr := range slices.Sorted(maps.Keys(xrs)) {
		fn := xrs[xr]
		err := waitFor(ctx, upgradeTimeout, fn+" of this tree to render XR "+xr+" twice", func(context.Context) (bool, string, error) {
			n, err := e.CallsAfter(fn, xr, 0)
			if err != nil {
				return false, "", err
			}
			return n >= 2, fmt.Sprintf("%d calls", n), nil
		})
		if err != nil {
			return err
		}
	}
	if _, err := e.Cluster.WaitForCondition(ctx, upgradeTimeout, ClusterKind, "", "e2e-upgrade", "Synced"); err != nil {
		return err
	}
	for _, ref := range upgradeOrganizations {
		namespace, name, _ := strings.Cut(ref, "/")
		if _, err := e.Cluster.WaitForCondition(ctx, upgradeTimeout, IsolationClaimKind, namespace, name, "Ready"); err != nil {
			return err
		}
	}
	return nil
}

// snapshotFleet reads what replaces a node of the upgraded organizations if it changes.
func snapshotFleet(ctx context.Context, e *Environment) (fleetSnapshot, error) {
	s := fleetSnapshot{Templates: map[string]string{}, NodeClasses: map[string]string{}, NodeClaims: map[string]string{}, Pods: map[string]string{}}
	pools := map[string]bool{}
	for _, ref := range upgradeOrganizations {
		namespace, name, _ := strings.Cut(ref, "/")
		claim, err := e.Cluster.Get(ctx, IsolationClaimKind, namespace, name)
		if err != nil {
			return s, err
		}
		org := organizationOf(claim, name)
		for _, pool := range org.Pools {
			np, err := e.Cluster.Get(ctx, NodePoolKind, "", pool)
			if err != nil {
				return s, err
			}
			pools[pool] = true
			template, _, _ := unstructured.NestedMap(np.Object, "spec", "template")
			if s.Templates[pool], err = canonicalJSON(template); err != nil {
				return s, err
			}
			class, _, _ := unstructured.NestedString(np.Object, "spec", "template", "spec", "nodeClassRef", "name")
			nc, err := e.Cluster.Get(ctx, KWOKNodeClassKind, "", class)
			if err != nil {
				return s, err
			}
			spec, _, _ := unstructured.NestedMap(nc.Object, "spec")
			if s.NodeClasses[class], err = canonicalJSON(spec); err != nil {
				return s, err
			}
		}
		for _, sp := range org.Stacks {
			list, err := e.Cluster.Typed.CoreV1().Pods(sp.Namespaces[0]).List(ctx, metav1.ListOptions{LabelSelector: "app=" + upgradeDeployment})
			if err != nil {
				return s, err
			}
			for _, pod := range list.Items {
				s.Pods[pod.Namespace+"/"+pod.Name] = pod.Spec.NodeName
			}
		}
	}
	claims, err := e.Cluster.List(ctx, NodeClaimKind, "", "")
	if err != nil {
		return s, err
	}
	for _, nc := range claims {
		if !pools[nc.GetLabels()["karpenter.sh/nodepool"]] {
			continue
		}
		node, _, _ := unstructured.NestedString(nc.Object, "status", "nodeName")
		s.NodeClaims[nc.GetName()] = node
		if c, ok := Condition(&nc, "Drifted"); ok && c.Status == "True" {
			s.Drifted = append(s.Drifted, nc.GetName())
		}
	}
	return s, nil
}

// canonicalJSON is v as JSON with its maps' keys sorted, to compare two readings of one object.
func canonicalJSON(v map[string]any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

// deleteUpgradeFleet deletes the upgraded organizations, then their cluster and its reference, and waits for what
// the cluster composed under fixed names to go: the scenarios compose local clusters of their own.
func deleteUpgradeFleet(ctx context.Context) error {
	var manifests [][]byte
	for _, file := range []string{"claims.yaml", "cluster.yaml", "references.yaml"} {
		b, err := os.ReadFile(filepath.Join("testdata", "upgrade", file))
		if err != nil {
			return err
		}
		manifests = append(manifests, b)
	}
	for _, m := range manifests {
		if err := deleteOnceNotInUse(ctx, m); err != nil {
			return err
		}
	}
	return waitForLocalClusterGone(ctx, manifests[1])
}

// recordStaleCompositeGauges records what Crossplane's XR controllers' gauges keep once no XR is left. An XRD whose
// spec changes (as an upgrade's does) makes Crossplane stop its XR controller and start a new one under the same
// name (definition.ControllerNeedsRestart, Crossplane v2.4.2); the new controller's queue and workers move the
// same gauge series, which keep whatever the stopped one left in them: an item queued when it stopped (depth 1)
// or a worker's end counted without its start (-1), for as long as Crossplane runs. With no XR of either kind left,
// whatever the gauges say once Crossplane has processed the deletions is that residue.
func recordStaleCompositeGauges(ctx context.Context, e *Environment) error {
	for _, kind := range []schema.GroupVersionKind{IsolationKind, ClusterKind} {
		err := waitFor(ctx, upgradeTimeout, "every "+kind.Kind+" to be gone", func(ctx context.Context) (bool, string, error) {
			xrs, err := e.Cluster.List(ctx, kind, "", "")
			if err != nil {
				return false, err.Error(), nil
			}
			return len(xrs) == 0, fmt.Sprintf("%d left", len(xrs)), nil
		})
		if err != nil {
			return err
		}
	}
	// A deleted XR's last reconciles (a not-found) end at once; the unfinished-work gauge, which each queue sets
	// afresh rather than moving, is 0 once they have.
	err := waitFor(ctx, upgradeTimeout, "Crossplane's XR controllers to finish the deletions", func(ctx context.Context) (bool, string, error) {
		families, err := e.scrapeMetrics(ctx, "crossplane")
		if err != nil {
			return false, "", err
		}
		for name, v := range counters(families, "workqueue_unfinished_work_seconds", "name") {
			if strings.HasPrefix(name, "composite/") && v != 0 {
				return false, fmt.Sprintf("%s has work unfinished for %.1fs", name, v), nil
			}
		}
		return true, "", nil
	})
	if err != nil {
		return err
	}
	e.staleCompositeGauges, err = compositeReconciles(ctx, e)
	return err
}
