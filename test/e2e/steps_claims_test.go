package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Steps that read what a claim reports: its conditions and the columns kubectl prints for it.

// assertClaimConditionT waits until a claim's condition has the reason, then checks its message ("" for any).
func assertClaimConditionT(t *testing.T, tn tenant, conditionType, reason, message string) {
	t.Helper()
	u := env.Cluster.WaitForT(t, 90*time.Second, IsolationClaimKind, tn.Namespace, tn.Name, func(u *unstructured.Unstructured) (bool, string) {
		c, _ := Condition(u, conditionType)
		return c.Reason == reason, conditionType + ": " + c.Status + " " + c.Reason + " " + c.Message
	})
	if c, _ := Condition(u, conditionType); message != "" && c.Message != message {
		t.Errorf("claim %s/%s %s:\n got %s\nwant %s", tn.Namespace, tn.Name, conditionType, c.Message, message)
	}
}

// waitForPrintedColumnsT waits until kubectl get -o wide prints, for a claim, the columns want (header ->
// value), read from the table the real apiserver builds from the XRD's printer columns, and returns every
// column it printed.
func waitForPrintedColumnsT(t *testing.T, namespace, name string, want map[string]string) map[string]string {
	t.Helper()
	var columns map[string]string
	waitForT(t, policyInForceTimeout, fmt.Sprintf("kubectl get karpenterisolation %s/%s to print %v", namespace, name, want), func(ctx context.Context) (bool, string, error) {
		out, err := env.Kubectl.Run(ctx, nil, "get", "karpenterisolation", name, "-n", namespace, "-o", "wide")
		if err != nil {
			return false, "", err
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) != 2 {
			return false, string(out), nil
		}
		columns = tableColumns(lines[0], lines[1])
		for h, v := range want {
			if columns[h] != v {
				return false, string(out), nil
			}
		}
		return true, "", nil
	})
	return columns
}

// tableColumns reads one row of a table kubectl printed: each cell starts where its header does (kubectl
// aligns them), so an empty cell is read as empty.
func tableColumns(header, row string) map[string]string {
	names := strings.Fields(header)
	columns := make(map[string]string, len(names))
	from := 0
	starts := make([]int, len(names))
	for i, h := range names {
		starts[i] = from + strings.Index(header[from:], h)
		from = starts[i] + len(h)
	}
	for i, h := range names {
		end := len(row)
		if i+1 < len(names) {
			end = min(starts[i+1], len(row))
		}
		if starts[i] < end {
			columns[h] = strings.TrimSpace(row[starts[i]:end])
		}
	}
	return columns
}

// waitClaimConditionT waits until the claim's condition has the status and reason.
func waitClaimConditionT(t *testing.T, ns, name, conditionType, status, reason string) ConditionStatus {
	t.Helper()
	u := env.Cluster.WaitForT(t, xrSettleTimeout, IsolationClaimKind, ns, name, func(u *unstructured.Unstructured) (bool, string) {
		c, _ := Condition(u, conditionType)
		return c.Status == status && c.Reason == reason, conditionType + ": " + c.Status + " " + c.Reason + " " + c.Message
	})
	c, _ := Condition(u, conditionType)
	return c
}
