package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/kiso-dev/kiso/functions/internal/fntest"
)

const installSpec = `{"clusterName":"prod","region":"eu-west-3","accountId":"111122223333","karpenter":{"install":{"version":"1.15.0"}}}`

// asDeployed returns a Release as Crossplane observes it once provider-helm has reconciled generation gen and
// Helm's release is in state: Synced at that generation, and Ready as provider-helm says it then.
func asDeployed(t testing.TB, release map[string]any, gen int64, state string) map[string]any {
	t.Helper()
	o := fntest.JSONMap(t, fntest.ToJSON(t, release))
	o["metadata"].(map[string]any)["generation"] = float64(gen)
	ready := "False"
	if state == helmDeployed {
		ready = "True"
	}
	o["status"] = map[string]any{
		"atProvider": map[string]any{"state": state},
		"conditions": []any{
			map[string]any{"type": "Ready", "status": ready},
			map[string]any{"type": "Synced", "status": "True", "reason": "ReconcileSuccess", "observedGeneration": float64(gen)},
		},
	}
	return o
}

// deployedCRDs returns the observed state of a cluster whose CRD Release provider-helm has deployed as the
// function renders it for the XR given: what Karpenter's Release waits for.
func deployedCRDs(t testing.TB, xrJSON string) map[string]string {
	t.Helper()
	r, ok := run(t, newRequest(t, xrJSON, nil)).GetDesired().GetResources()[string(crKarpenterCRDRelease)]
	if !ok {
		t.Fatal("no CRD Release composed with spec.karpenter.install")
	}
	return map[string]string{string(crKarpenterCRDRelease): fntest.ToJSON(t, asDeployed(t, fntest.AsMap(t, r.GetResource()), 1, helmDeployed))}
}

func installCondition(t *testing.T, rsp *fnv1.RunFunctionResponse) *fnv1.Condition {
	t.Helper()
	for _, c := range rsp.GetConditions() {
		if c.GetType() == TypeKarpenterInstalled {
			return c
		}
	}
	return nil
}

func assertInstallCondition(t *testing.T, rsp *fnv1.RunFunctionResponse, status fnv1.Status, reason string, says ...string) {
	t.Helper()
	c := installCondition(t, rsp)
	if c == nil || c.GetStatus() != status || c.GetReason() != reason {
		t.Fatalf("condition %s = %v, want %s %s", TypeKarpenterInstalled, c, status, reason)
	}
	for _, s := range says {
		if !strings.Contains(c.GetMessage(), s) {
			t.Errorf("condition %s message %q does not say %q", TypeKarpenterInstalled, c.GetMessage(), s)
		}
	}
}

// TestKarpentersCRDsComeFromTheirOwnChart: Helm installs the crds/ folder of Karpenter's chart once and never
// upgrades it, so the cluster installs the CRDs from Karpenter's CRD chart, at the same repository and version
// as Karpenter's, as the Helm release karpenter-crd, and Karpenter's chart without its CRDs. The CRD Release
// orphans its Helm release when deleted and asks Helm to keep every CRD, so nothing deletes Karpenter's CRDs;
// and it may take over CRDs an earlier install left without Helm's ownership.
func TestKarpentersCRDsComeFromTheirOwnChart(t *testing.T) {
	spec := `{"clusterName":"prod","region":"eu-west-3","accountId":"111122223333","workloadCluster":{"providerConfigName":"prod-workloads"},
		"karpenter":{"namespace":"karpenter","install":{"version":"1.14.2","repository":"https://charts.example.com/karpenter"}}}`
	rsp := run(t, newRequest(t, xr(spec), deployedCRDs(t, xr(spec))))
	fntest.AssertNoFatal(t, rsp)
	got := fntest.Desired(t, rsp)
	crds, chart := got[string(crKarpenterCRDRelease)], got[string(crKarpenterRelease)]
	if crds == nil || chart == nil {
		t.Fatalf("CRD Release %v, Karpenter's Release %v: want both", crds != nil, chart != nil)
	}
	for path, want := range map[string]any{
		"metadata.name": "prod-karpenter-crd-release",
		"metadata.annotations.crossplane\\.io/external-name":                      "karpenter-crd",
		"spec.deletionPolicy":                                                     "Orphan",
		"spec.providerConfigRef.name":                                             "prod-workloads",
		"spec.forProvider.chart.name":                                             "karpenter-crd",
		"spec.forProvider.chart.repository":                                       "https://charts.example.com/karpenter",
		"spec.forProvider.chart.version":                                          "1.14.2",
		"spec.forProvider.namespace":                                              "karpenter",
		"spec.forProvider.takeOwnership":                                          true,
		"spec.forProvider.values.additionalAnnotations.helm\\.sh/resource-policy": "keep",
	} {
		if got := fntest.Dig(crds, splitPath(path)...); got != want {
			t.Errorf("CRD Release %s = %v, want %v", path, got, want)
		}
	}
	for path, want := range map[string]any{
		"spec.forProvider.chart.name":       "karpenter",
		"spec.forProvider.chart.repository": "https://charts.example.com/karpenter",
		"spec.forProvider.chart.version":    "1.14.2",
		"spec.forProvider.namespace":        "karpenter",
		"spec.forProvider.skipCRDs":         true,
	} {
		if got := fntest.Dig(chart, splitPath(path)...); got != want {
			t.Errorf("Karpenter's Release %s = %v, want %v", path, got, want)
		}
	}
	// Karpenter's Release is deleted (uninstalled) with the cluster, once its organizations are gone.
	if p := fntest.Dig(chart, "spec", "deletionPolicy"); p != nil {
		t.Errorf("Karpenter's Release deletionPolicy %v, want the default", p)
	}
	// The CRD Release needs no Usage: deleting it directly orphans it too, and the cluster composes it again.
	for name, o := range got {
		if o["kind"] == "ClusterUsage" && fntest.Dig(o, "spec", "of", "resourceRef", "name") == "prod-karpenter-crd-release" {
			t.Errorf("%s keeps the CRD Release", name)
		}
	}
}

// TestKarpenterWaitsForItsCRDs: Karpenter's Release is composed only once provider-helm has deployed the CRD
// Release at the spec's chart: reconciled at its latest generation without error and Helm's release deployed,
// whatever its Ready condition says. Until then the cluster says why on KarpenterInstalled, and then how far
// Karpenter's own Release is.
func TestKarpenterWaitsForItsCRDs(t *testing.T) {
	rendered := fntest.AsMap(t, run(t, newRequest(t, xr(installSpec), nil)).GetDesired().GetResources()[string(crKarpenterCRDRelease)].GetResource())
	stale := asDeployed(t, rendered, 1, helmDeployed)
	stale["metadata"].(map[string]any)["generation"] = float64(2)
	refused := asDeployed(t, rendered, 1, "")
	refused["status"].(map[string]any)["conditions"] = []any{map[string]any{"type": "Synced", "status": "False", "observedGeneration": float64(1),
		"message": "create failed: failed to install release: Unable to continue with install: CustomResourceDefinition \"nodepools.karpenter.sh\" exists and cannot be imported"}}
	deleting := asDeployed(t, rendered, 1, helmDeployed)
	deleting["metadata"].(map[string]any)["deletionTimestamp"] = "2026-12-01T00:00:00Z"
	cases := map[string]struct {
		crds map[string]any
		says string
	}{
		"NotCreatedYet":                   {says: "not created yet"},
		"NotReconciledSinceItsLastChange": {crds: stale, says: "provider-helm has not reconciled its latest change yet"},
		"RefusedByHelm":                   {crds: refused, says: "cannot be imported"},
		"HelmReleaseFailed":               {crds: asDeployed(t, rendered, 1, "failed"), says: "Helm release failed"},
		"BeingDeleted":                    {crds: deleting, says: "being deleted"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			observed := map[string]string{}
			if tc.crds != nil {
				observed[string(crKarpenterCRDRelease)] = fntest.ToJSON(t, tc.crds)
			}
			rsp := run(t, newRequest(t, xr(installSpec), observed))
			fntest.AssertNoFatal(t, rsp)
			desired := rsp.GetDesired().GetResources()
			if _, ok := desired[string(crKarpenterRelease)]; ok {
				t.Error("Karpenter's Release composed before its CRDs are deployed")
			}
			if _, ok := desired[string(crKarpenterCRDRelease)]; !ok {
				t.Error("no CRD Release composed")
			}
			assertInstallCondition(t, rsp, fnv1.Status_STATUS_CONDITION_FALSE, ReasonKarpenterCRDsPending,
				"Release prod-karpenter-crd-release (karpenter-crd 1.15.0): ", tc.says, "Release prod-karpenter-release (karpenter 1.15.0) waits for them")
		})
	}

	// Deployed: provider-helm says Ready only at its next poll after an upgrade; Synced at the generation and the
	// Helm release's state are enough.
	notYetReady := asDeployed(t, rendered, 1, helmDeployed)
	notYetReady["status"].(map[string]any)["conditions"].([]any)[0].(map[string]any)["status"] = "False"
	observed := map[string]string{string(crKarpenterCRDRelease): fntest.ToJSON(t, notYetReady)}
	rsp := run(t, newRequest(t, xr(installSpec), observed))
	chart, ok := rsp.GetDesired().GetResources()[string(crKarpenterRelease)]
	if !ok {
		t.Fatal("Karpenter's Release not composed once its CRDs are deployed")
	}
	assertInstallCondition(t, rsp, fnv1.Status_STATUS_CONDITION_FALSE, ReasonKarpenterChartPending,
		"Release prod-karpenter-crd-release (karpenter-crd 1.15.0) is deployed; Release prod-karpenter-release (karpenter 1.15.0) is not yet: not created yet")

	observed[string(crKarpenterRelease)] = fntest.ToJSON(t, asDeployed(t, fntest.AsMap(t, chart.GetResource()), 1, helmDeployed))
	rsp = run(t, newRequest(t, xr(installSpec), observed))
	assertInstallCondition(t, rsp, fnv1.Status_STATUS_CONDITION_TRUE, ReasonKarpenterInstalled,
		"Release prod-karpenter-crd-release (karpenter-crd 1.15.0) and Release prod-karpenter-release (karpenter 1.15.0) are deployed")
}

// TestAVersionBumpDeploysTheCRDsFirst: a new chart version goes to the CRD Release at once; Karpenter's Release
// stays exactly as it was, at the version before, until provider-helm has deployed the new CRDs, and only then
// moves to the new version.
func TestAVersionBumpDeploysTheCRDsFirst(t *testing.T) {
	before := strings.Replace(installSpec, "1.15.0", "1.14.2", 1)
	observed := deployedCRDs(t, xr(before))
	old := fntest.AsMap(t, run(t, newRequest(t, xr(before), observed)).GetDesired().GetResources()[string(crKarpenterRelease)].GetResource())
	observed[string(crKarpenterRelease)] = fntest.ToJSON(t, asDeployed(t, old, 1, helmDeployed))

	rsp := run(t, newRequest(t, xr(installSpec), observed))
	fntest.AssertNoFatal(t, rsp)
	got := fntest.Desired(t, rsp)
	if v := fntest.Dig(got[string(crKarpenterCRDRelease)], "spec", "forProvider", "chart", "version"); v != "1.15.0" {
		t.Errorf("CRD Release at %v, want the new 1.15.0 at once", v)
	}
	if diff := cmp.Diff(old, got[string(crKarpenterRelease)]); diff != "" {
		t.Errorf("Karpenter's Release moved before its new CRDs were deployed: -as it was, +desired:\n%s", diff)
	}
	assertInstallCondition(t, rsp, fnv1.Status_STATUS_CONDITION_FALSE, ReasonKarpenterCRDsPending, "still at 1.14.2", "stays as it is meanwhile (chart 1.14.2)")

	// provider-helm upgraded the CRD Release: generation 2, reconciled, deployed.
	observed[string(crKarpenterCRDRelease)] = fntest.ToJSON(t, asDeployed(t, got[string(crKarpenterCRDRelease)], 2, helmDeployed))
	got = fntest.Desired(t, run(t, newRequest(t, xr(installSpec), observed)))
	if v := fntest.Dig(got[string(crKarpenterRelease)], "spec", "forProvider", "chart", "version"); v != "1.15.0" {
		t.Errorf("Karpenter's Release at %v once the new CRDs are deployed, want 1.15.0", v)
	}
}

// TestAReleaseOfAnEarlierKisoIsKeptUntilTheCRDsAreDeployed: a cluster installed by a kiso release before the CRD
// chart has Karpenter's Release (with the chart's own CRDs) and no CRD Release. Upgrading kiso composes the CRD
// Release and keeps Karpenter's exactly as it was meanwhile: never dropped, so never uninstalled.
func TestAReleaseOfAnEarlierKisoIsKeptUntilTheCRDsAreDeployed(t *testing.T) {
	earlier := fntest.AsMap(t, run(t, newRequest(t, xr(installSpec), deployedCRDs(t, xr(installSpec)))).GetDesired().GetResources()[string(crKarpenterRelease)].GetResource())
	delete(earlier["spec"].(map[string]any)["forProvider"].(map[string]any), "skipCRDs")
	observed := map[string]string{string(crKarpenterRelease): fntest.ToJSON(t, asDeployed(t, earlier, 3, helmDeployed))}

	rsp := run(t, newRequest(t, xr(installSpec), observed))
	fntest.AssertNoFatal(t, rsp)
	got := fntest.Desired(t, rsp)
	if _, ok := got[string(crKarpenterCRDRelease)]; !ok {
		t.Error("no CRD Release composed for a cluster upgraded from an earlier kiso")
	}
	if diff := cmp.Diff(earlier, got[string(crKarpenterRelease)]); diff != "" {
		t.Errorf("Karpenter's Release of an earlier kiso changed before its CRDs were deployed: -as it was, +desired:\n%s", diff)
	}
	if u := got["usage-"+string(crKarpenterRelease)]; u == nil {
		t.Error("the kept Release lost the Usage that keeps it with the cluster")
	}
}

// TestDroppingTheInstallStopsComposingTheCRDRelease: without spec.karpenter.install the cluster composes no
// CRD Release, so Crossplane deletes the one it composed, which orphans its Helm release and CRDs (its
// deletionPolicy, TestKarpentersCRDsComeFromTheirOwnChart); Karpenter's Release stays while the cluster is in
// use (TestReleaseStaysWhileTheClusterIsInUse). The cluster says kiso installs nothing.
func TestDroppingTheInstallStopsComposingTheCRDRelease(t *testing.T) {
	observed := deployedCRDs(t, xr(installSpec))
	chart := run(t, newRequest(t, xr(installSpec), observed)).GetDesired().GetResources()[string(crKarpenterRelease)]
	observed[string(crKarpenterRelease)] = fntest.ToJSON(t, asDeployed(t, fntest.AsMap(t, chart.GetResource()), 1, helmDeployed))
	notInstalled := `{"clusterName":"prod","region":"eu-west-3","accountId":"111122223333"}`
	inUse := `{"apiVersion":"kiso.dev/v1alpha1","kind":"XKarpenterCluster","metadata":{"name":"prod","labels":{"crossplane.io/in-use":"true"}},"spec":` + notInstalled + `}`

	rsp := run(t, newRequest(t, inUse, observed))
	fntest.AssertNoFatal(t, rsp)
	desired := rsp.GetDesired().GetResources()
	if _, ok := desired[string(crKarpenterCRDRelease)]; ok {
		t.Error("the CRD Release is still composed without spec.karpenter.install")
	}
	if _, ok := desired[string(crKarpenterRelease)]; !ok {
		t.Error("Karpenter's Release dropped while the cluster is in use")
	}
	assertInstallCondition(t, rsp, fnv1.Status_STATUS_CONDITION_TRUE, ReasonKarpenterInstallDisabled,
		"spec.karpenter.install is not set: kiso installs neither Karpenter nor its CRDs; Release prod-karpenter-release keeps Karpenter while a tenant pool is bound to the cluster")

	rsp = run(t, newRequest(t, xr(notInstalled), nil))
	assertInstallCondition(t, rsp, fnv1.Status_STATUS_CONDITION_TRUE, ReasonKarpenterInstallDisabled)
	if c := installCondition(t, rsp); strings.Contains(c.GetMessage(), "keeps Karpenter") {
		t.Errorf("condition %s says a Release is kept where there is none: %q", TypeKarpenterInstalled, c.GetMessage())
	}
}
