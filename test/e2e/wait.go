package e2e

import (
	"context"
	"fmt"
	"os"
	"time"
)

// Waits: every step waits on a condition, never on time; a wait longer than 20 s says what it waited for
// (`e2e: slow wait:`).

// pollInterval is how often waits re-check; short, because every second of boot counts in `make test`.
const pollInterval = 250 * time.Millisecond

// slowWait is how long a wait may take before it is printed when it ends: the suite's time is mostly waits, and
// the slow ones show in every CI log where it goes.
const slowWait = 20 * time.Second

// waitFor polls check until it reports done, returns an error, or the timeout passes. The last "not yet"
// reason is part of the timeout error, so a failed wait says what it was waiting for.
func waitFor(ctx context.Context, timeout time.Duration, what string, check func(context.Context) (done bool, notYet string, err error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start, last := time.Now(), ""
	for {
		done, notYet, err := check(ctx)
		if err != nil {
			return fmt.Errorf("cannot wait for %s: %w", what, err)
		}
		if done {
			if took := time.Since(start); took > slowWait {
				fmt.Fprintf(os.Stdout, "e2e: slow wait: %5.1fs for %s (last: %s)\n", took.Seconds(), what, last)
			}
			return nil
		}
		last = notYet
		select {
		case <-ctx.Done():
			return fmt.Errorf("timed out after %s waiting for %s: %s", timeout, what, last)
		case <-time.After(pollInterval):
		}
	}
}

// phaseTimer prints how long each phase of a run took, so that a slow phase shows in every CI log.
type phaseTimer struct {
	started time.Time
}

func newPhaseTimer() *phaseTimer { return &phaseTimer{started: time.Now()} }

// run runs one phase and prints its duration, and whether it failed.
func (p *phaseTimer) run(name string, phase func() error) error {
	start := time.Now()
	err := phase()
	outcome := ""
	if err != nil {
		outcome = "  FAILED"
	}
	fmt.Fprintf(os.Stdout, "e2e: %-44s %6.1fs%s\n", name, time.Since(start).Seconds(), outcome)
	return err
}

// total prints the time since the timer was made.
func (p *phaseTimer) total(name string) {
	fmt.Fprintf(os.Stdout, "e2e: %-44s %6.1fs\n", name, time.Since(p.started).Seconds())
}

// xrSettleTimeout bounds the wait for an XKarpenterCluster's conditions: its ClusterUsages' first marks
// trip Crossplane's watch circuit breaker, which then lets the XR reconcile only periodically for a while.
const xrSettleTimeout = 180 * time.Second

// policyInForceTimeout bounds how long a change takes to reach the apiserver's admission: Crossplane
// re-renders, applies the policies or a namespace's Role, and the apiserver reloads them. A mode switch
// composes and retires dozens of objects; their events trip Crossplane's watch circuit breaker, which then
// lets the XR reconcile only every 30 s or at its poll, so the bound is the one XRs settle in.
const policyInForceTimeout = xrSettleTimeout
