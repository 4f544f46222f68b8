// Package readlimit lets a function whose reads outgrow one request degrade instead of failing every reconcile.
//
// Crossplane sends everything a function requires in one gRPC request. The function server refuses a request
// larger than it accepts (its --max-recv-message-size) before the function runs: gRPC answers ResourceExhausted,
// Crossplane fails the whole reconcile, writes the error on the XR's Synced condition, and applies nothing the
// function decided, so the function cannot record that it tried. Called again, it would ask for the same reads
// and fail the same way at every retry. Instead, the function reads the last reconcile's outcome from the XR it
// is sent: after a refusal it stops asking for its read that grows without bound for RetryAfter, records when it
// stopped in the XR's status, says so on the XR, and decides what it can without it.
package readlimit

import (
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/structpb"
)

// RetryAfter is how long a function asks for no read that outgrew a request before it tries again: a read that
// did not fit seldom fits a minute later, and each try costs a failed reconcile.
const RetryAfter = time.Hour

// Crossplane's names on the XR for how its last reconcile went.
const (
	conditionSynced      = "Synced"
	reasonReconcileError = "ReconcileError"
)

// refusedCode is how gRPC writes a ResourceExhausted status into an error's message ("rpc error: code =
// ResourceExhausted desc = grpc: received message larger than max (N vs. M)"), which Crossplane wraps.
var refusedCode = "code = " + codes.ResourceExhausted.String()

// Refused reports whether Crossplane's last reconcile of the XR failed because a request to a function (or its
// response) was larger than gRPC allowed: the XR's Synced condition is then False with ReconcileError and
// gRPC's ResourceExhausted in its message.
func Refused(xr *structpb.Struct) bool {
	for _, c := range xr.GetFields()["status"].GetStructValue().GetFields()["conditions"].GetListValue().GetValues() {
		f := c.GetStructValue().GetFields()
		if f["type"].GetStringValue() != conditionSynced {
			continue
		}
		return f["status"].GetStringValue() == "False" && f["reason"].GetStringValue() == reasonReconcileError &&
			strings.Contains(f["message"].GetStringValue(), refusedCode)
	}
	return false
}

// Skip decides whether a call asks for its read that grows without bound. unreadAt is when the function last
// stopped asking (RFC 3339, as the XR's status keeps it; "" if it asks). It skips the read for RetryAfter from
// then, and from now when the last reconcile was refused (Refused) past that window. since is when the skip
// began, to be kept in the status; zero when the call reads.
func Skip(unreadAt string, refused bool, now time.Time) (since time.Time, skip bool) {
	if at, err := time.Parse(time.RFC3339, unreadAt); err == nil && now.Before(at.Add(RetryAfter)) {
		return at, true
	}
	if refused {
		return now.UTC().Truncate(time.Second), true
	}
	return time.Time{}, false
}

// Format writes since as the XR's status keeps it: "" when the call reads.
func Format(since time.Time) string {
	if since.IsZero() {
		return ""
	}
	return since.UTC().Format(time.RFC3339)
}

// Why says why a read is skipped, for a condition's message.
func Why(what string, since time.Time) string {
	return what + " did not fit in one request to the function at " + Format(since) +
		" (more than its --max-recv-message-size: Crossplane sends them whole), so that reconcile failed; they are not read until " +
		Format(since.Add(RetryAfter)) + ", then read again"
}
