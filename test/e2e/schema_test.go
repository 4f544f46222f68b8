package e2e

import (
	"fmt"
	"strings"
	"testing"
)

// TestXRDRulesAtAdmission applies XRs that sit on either side of each limit the XRDs' CEL rules state, with a
// server-side dry run: only the real API server evaluates those rules, and the functions' own checks are written
// for render, which applies none of them. A rule too strict refuses a cluster kiso serves; one too loose lets
// through what the function then refuses on the claim.
func TestXRDRulesAtAdmission(t *testing.T) {
	long := func(n int) string { return strings.Repeat("c", n) }
	cluster := func(name, extra string) string {
		return fmt.Sprintf("apiVersion: kiso.dev/v1alpha1\nkind: XKarpenterCluster\nmetadata:\n  name: rules\nspec:\n"+
			"  clusterName: %s\n  region: eu-west-3\n  accountId: \"111122223333\"\n%s", name, extra)
	}
	isolation := func(mode string, stacks int, extra string) string {
		var b strings.Builder
		fmt.Fprintf(&b, "apiVersion: kiso.dev/v1alpha1\nkind: XKarpenterIsolation\nmetadata:\n  name: rules\nspec:\n"+
			"  organization: rules\n  isolation: %s\n  nodeClassRef:\n    name: reference\n  nodePoolRef:\n    name: reference\n%s", mode, extra)
		if stacks > 0 {
			b.WriteString("  stacks:\n")
			for i := range stacks {
				fmt.Fprintf(&b, "  - name: s%d\n", i)
			}
		}
		return b.String()
	}
	cases := map[string]struct {
		manifest string
		refusal  string // empty: accepted
	}{
		"ClusterNameOfAQueueTakenOver": {
			manifest: cluster(long(80), "  naming:\n    takeOver: AWSGettingStarted\n"),
		},
		"ClusterNameLongerThanAQueueTakenOver": {
			manifest: cluster(long(81), "  naming:\n    takeOver: AWSGettingStarted\n"),
			refusal:  "must be at most 80 characters while spec.interruption.enabled is true and spec.naming.takeOver is AWSGettingStarted",
		},
		"LongClusterNameWithKisosOwnQueue": {
			manifest: cluster(long(100), ""),
		},
		"LongClusterNameTakenOverWithoutQueue": {
			manifest: cluster(long(100), "  naming:\n    takeOver: AWSGettingStarted\n  interruption:\n    enabled: false\n"),
		},
		"ClusterTagValueAtAWSsLimit": {
			manifest: cluster("prod", "  tags:\n    team: "+long(256)+"\n"),
		},
		"ClusterTagValueBeyondAWSsLimit": {
			manifest: cluster("prod", "  tags:\n    team: "+long(257)+"\n"),
			refusal:  "a tag value is at most 256 characters",
		},
		"IsolationTagValueBeyondAWSsLimit": {
			manifest: isolation("organization", 0, "  tags:\n    team: "+long(257)+"\n"),
			refusal:  "a tag value is at most 256 characters",
		},
		"MostStacksInStackIsolation": {
			manifest: isolation("stack", 200, ""),
		},
		"TooManyStacksInStackIsolation": {
			manifest: isolation("stack", 201, ""),
			refusal:  "at most 200 stacks fit one organization's desired state",
		},
		"WarnModeEnforced": {
			manifest: isolation("organization", 0, "  placement:\n    mode: Warn\n"),
		},
		"WarnModeWithoutEnforcement": {
			manifest: isolation("organization", 0, "  placement:\n    enforce: false\n    mode: Warn\n"),
			refusal:  "mode Warn needs enforce true",
		},
		"EnforcementOffInEnforceMode": {
			manifest: isolation("organization", 0, "  placement:\n    enforce: false\n"),
		},
		"ManyStacksSharingOnePool": {
			manifest: isolation("organization", 201, ""),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out := env.TryT(t, []byte(tc.manifest), "apply", "--dry-run=server", "-f", "-")
			switch {
			case tc.refusal == "" && out.ExitCode != 0:
				t.Errorf("refused, want accepted:\n%s", strings.TrimSpace(out.Stderr))
			case tc.refusal != "" && out.ExitCode == 0:
				t.Errorf("accepted, want refused with %q", tc.refusal)
			case tc.refusal != "" && !strings.Contains(out.Stderr, tc.refusal):
				t.Errorf("refused with\n%s\nwant %q", strings.TrimSpace(out.Stderr), tc.refusal)
			}
		})
	}
}
