package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kiso-dev/kiso/monitoring"
)

// Steps that read the series kiso's functions, Karpenter and Crossplane export, as kiso's rules and dashboard read them.

// seriesTimeout bounds a series appearing on a server once what it tells is so: Karpenter refreshes its
// per-nodepool series every 10 seconds and its node series every 5; a function's, at its next call.
const seriesTimeout = 2 * time.Minute

// ruleExporters are the servers whose series kiso's rules and dashboard read: Karpenter and kiso's functions
// (each function's metrics are named after its package).
var ruleExporters = []string{"karpenter", "function-isolation", "function-cluster"}

// notExportedHere are series a rule reads that Karpenter's KWOK build does not export, and why; where a series
// of the same origin stands for one, the suite checks that one instead.
var notExportedHere = map[string]struct{ why, standIn string }{
	"operator_ec2nodeclass_status_condition_count": {
		why:     "the KWOK provider has no EC2NodeClass; the AWS provider counts its conditions with operatorpkg's status controller, which counts the NodePool's here",
		standIn: "operator_nodepool_status_condition_count",
	},
	"karpenter_cloudprovider_errors_total": {
		why: "the AWS provider's build wraps its cloud provider in Karpenter's metrics decorator, which counts these errors; the KWOK build does not",
	},
}

// waitForEverySeriesTheRulesReadT waits until every series kiso's rules and dashboard read from a server
// (monitoring.Exported: their names, less what the recording rules write) is exported by Karpenter or one of
// kiso's functions, with at least one series.
func waitForEverySeriesTheRulesReadT(t *testing.T) {
	t.Helper()
	names, err := monitoring.Exported()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		not, ok := notExportedHere[n]
		if !ok {
			continue
		}
		checked := "not checked"
		if not.standIn != "" {
			checked = "checked through " + not.standIn
		}
		t.Logf("%s: not exported here (%s); %s", n, not.why, checked)
	}
	waitForT(t, seriesTimeout, "every series kiso's rules and dashboard read to be exported", func(ctx context.Context) (bool, string, error) {
		found := map[string]bool{}
		for _, server := range ruleExporters {
			families, err := env.scrapeMetrics(ctx, server)
			if err != nil {
				return false, "", err
			}
			for name, f := range families {
				found[name] = found[name] || len(f.GetMetric()) > 0
			}
		}
		var missing []string
		for _, n := range names {
			want := n
			if not, ok := notExportedHere[n]; ok {
				want = not.standIn
			}
			if want != "" && !found[want] {
				missing = append(missing, want)
			}
		}
		return len(missing) == 0, fmt.Sprintf("no server of %v exports %v", ruleExporters, missing), nil
	})
}

// waitForSeriesT waits until a server exports a series of a family with the given labels (others may be
// present) and value.
func waitForSeriesT(t *testing.T, server, family string, labels map[string]string, value float64) {
	t.Helper()
	what := fmt.Sprintf("%s to export %s%v = %g", server, family, labels, value)
	waitForT(t, seriesTimeout, what, func(ctx context.Context) (bool, string, error) {
		families, err := env.scrapeMetrics(ctx, server)
		if err != nil {
			return false, "", err
		}
		var seen []string
		for _, m := range families[family].GetMetric() {
			if !labelsMatch(m, labels) {
				continue
			}
			if v := m.GetGauge().GetValue(); v != value {
				seen = append(seen, fmt.Sprintf("%g", v))
				continue
			}
			return true, "", nil
		}
		return false, fmt.Sprintf("%d series of %s, matching ones at %v", len(families[family].GetMetric()), family, seen), nil
	})
}

// assertRulesJoinKarpenterT checks that what the recording rules join on matches: each pool the isolation function
// names for an organization is a nodepool of Karpenter's per-nodepool series, and each of its namespaces a
// namespace of Karpenter's pod series.
func assertRulesJoinKarpenterT(t *testing.T, organization string) {
	t.Helper()
	values := func(server, family, label string, match map[string]string) map[string]bool {
		t.Helper()
		families, err := env.scrapeMetrics(t.Context(), server)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, m := range families[family].GetMetric() {
			if !labelsMatch(m, match) {
				continue
			}
			for _, l := range m.GetLabel() {
				if l.GetName() == label {
					out[l.GetValue()] = true
				}
			}
		}
		return out
	}
	org := map[string]string{monitoring.LabelOrganization: organization}
	for _, join := range []struct{ kiso, karpenter, label string }{
		{monitoring.PoolInfo.Name, "karpenter_nodepools_usage", "nodepool"},
		{monitoring.NamespaceInfo.Name, "karpenter_pods_state", "namespace"},
	} {
		kiso := values("function-isolation", join.kiso, join.label, org)
		karpenter := values("karpenter", join.karpenter, join.label, nil)
		if len(kiso) == 0 {
			t.Errorf("%s names no %s of organization %s", join.kiso, join.label, organization)
		}
		for _, v := range slices.Sorted(maps.Keys(kiso)) {
			if !karpenter[v] {
				t.Errorf("%s names %s %q of organization %s, which no %s series carries: the rules' join finds nothing", join.kiso, join.label, v, organization, join.karpenter)
			}
		}
	}
}

// patchClaimAsPlatformT patches an organization's claim, as the platform does (spec.placement.mode, say).
func patchClaimAsPlatformT(t *testing.T, namespace, name, patch string) {
	t.Helper()
	if _, err := env.Kubectl.Run(t.Context(), nil, "patch", "karpenterisolation", name, "-n", namespace, "--type=merge", "-p", patch); err != nil {
		t.Fatalf("cannot patch claim %s/%s with %s: %v", namespace, name, strings.TrimSpace(patch), err)
	}
}
