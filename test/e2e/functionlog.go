package e2e

import (
	"bytes"
	"fmt"
	"os"
	"testing"
	"time"
)

// functionCallMarker is what each kiso function logs, at debug level, once per RunFunction call
// (functions/internal/server); the harness starts the functions with --debug.
const functionCallMarker = "\tRunFunction\t"

// FunctionCalls counts the RunFunction calls function has logged for the XR named xr. A count that grows
// is the one sign Crossplane gives from outside that it reconciled an XR whose composed state did not change.
func (e *Environment) FunctionCalls(function, xr string) (int, error) {
	b, err := os.ReadFile(e.servers.LogPath(function))
	if err != nil {
		return 0, fmt.Errorf("cannot read the log of function %s: %w", function, err)
	}
	xrField := []byte(fmt.Sprintf(`"xr": %q`, xr))
	n := 0
	for line := range bytes.Lines(b) {
		if bytes.Contains(line, []byte(functionCallMarker)) && bytes.Contains(line, xrField) {
			n++
		}
	}
	return n, nil
}

// WaitForFunctionCallsT waits until function has been called for xr more than after times, then until the
// calls stop for quiet: Crossplane calls a function more than once in one reconcile when the function asks
// for resources, and a reconcile is over (its apply done) once the calls stop.
func (e *Environment) WaitForFunctionCallsT(t *testing.T, function, xr string, after int, quiet time.Duration) int {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	last, lastChange := after, time.Now()
	for {
		n, err := e.FunctionCalls(function, xr)
		if err != nil {
			t.Fatal(err)
		}
		if n != last {
			last, lastChange = n, time.Now()
		}
		if n > after && time.Since(lastChange) >= quiet {
			return n
		}
		if time.Now().After(deadline) {
			t.Fatalf("function %s: %d calls for XR %s, waited for more than %d and then %s without calls", function, n, xr, after, quiet)
		}
		time.Sleep(pollInterval)
	}
}
