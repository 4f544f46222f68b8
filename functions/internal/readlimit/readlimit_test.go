package readlimit_test

import (
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/kiso-dev/kiso/functions/internal/fntest"
	"github.com/kiso-dev/kiso/functions/internal/readlimit"
)

// xrWith is an XR whose status is status.
func xrWith(t *testing.T, status map[string]any) *structpb.Struct {
	t.Helper()
	s, err := structpb.NewStruct(map[string]any{"apiVersion": "kiso.dev/v1alpha1", "kind": "XKarpenterIsolation", "status": status})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestARefusedRequestIsToldFromOtherFailures: the Synced condition Crossplane writes when a real gRPC server
// refused a request larger than its limit reads as refused; any other outcome of the last reconcile does not.
func TestARefusedRequestIsToldFromOtherFailures(t *testing.T) {
	refused := fntest.RefusedStatus(t, "kiso-isolation")
	if !readlimit.Refused(xrWith(t, refused)) {
		t.Errorf("not refused: %v", refused)
	}
	synced := func(status, reason, message string) map[string]any {
		return map[string]any{"conditions": []any{
			map[string]any{"type": "Ready", "status": "False", "reason": "Creating"},
			map[string]any{"type": "Synced", "status": status, "reason": reason, "message": message},
		}}
	}
	for name, status := range map[string]map[string]any{
		"NoStatus":      nil,
		"NoConditions":  {},
		"Synced":        synced("True", "ReconcileSuccess", ""),
		"OtherError":    synced("False", "ReconcileError", "cannot compose resources: rpc error: code = Unavailable desc = connection refused"),
		"ReadyRefusing": {"conditions": []any{map[string]any{"type": "Ready", "status": "False", "reason": "ReconcileError", "message": fntest.RefusedMessage(t, "kiso-isolation")}}},
	} {
		if readlimit.Refused(xrWith(t, status)) {
			t.Errorf("%s: taken for a refused request: %v", name, status)
		}
	}
}

// TestARefusedReadIsSkippedForAnHourThenTriedAgain: a refusal starts the window, the window holds whatever the
// last reconcile said, and the read is asked again once it ends.
func TestARefusedReadIsSkippedForAnHourThenTriedAgain(t *testing.T) {
	now := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	if since, skip := readlimit.Skip("", false, now); skip || !since.IsZero() {
		t.Errorf("skips with no refusal: %v %v", since, skip)
	}
	since, skip := readlimit.Skip("", true, now)
	if !skip || !since.Equal(now) {
		t.Fatalf("a refusal starts no window: %v %v", since, skip)
	}
	kept := readlimit.Format(since)
	for _, later := range []time.Duration{time.Second, 59 * time.Minute} {
		if at, skip := readlimit.Skip(kept, false, now.Add(later)); !skip || !at.Equal(now) {
			t.Errorf("%s later: skip %v since %v, want the window from %v", later, skip, at, now)
		}
	}
	if _, skip := readlimit.Skip(kept, false, now.Add(readlimit.RetryAfter)); skip {
		t.Error("still skipped once the window ended")
	}
	// Refused again after trying: a new window from the new refusal.
	if at, skip := readlimit.Skip(kept, true, now.Add(readlimit.RetryAfter+time.Minute)); !skip || !at.Equal(now.Add(readlimit.RetryAfter+time.Minute)) {
		t.Errorf("a second refusal: skip %v since %v", skip, at)
	}
	if _, skip := readlimit.Skip("not a time", false, now); skip {
		t.Error("an unreadable time skips the read")
	}
}
