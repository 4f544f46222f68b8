package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"
)

// pollInterval is how often waits re-check; short, because every second of boot counts in `make test`.
const pollInterval = 250 * time.Millisecond

// waitFor polls check until it reports done, returns an error, or the timeout passes. The last "not yet"
// reason is part of the timeout error, so a failed wait says what it was waiting for.
func waitFor(ctx context.Context, timeout time.Duration, what string, check func(context.Context) (done bool, notYet string, err error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	last := ""
	for {
		done, notYet, err := check(ctx)
		if err != nil {
			return fmt.Errorf("cannot wait for %s: %w", what, err)
		}
		if done {
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

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("cannot find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// freePorts returns n distinct free ports; they are held open together so none is returned twice.
func freePorts(n int) ([]int, error) {
	listeners := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("cannot find a free port: %w", err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// waitForListener waits until something accepts TCP connections on 127.0.0.1:port, failing early if the
// server that should listen there has exited.
func waitForListener(ctx context.Context, srv *server, port int, timeout time.Duration) error {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	return waitFor(ctx, timeout, srv.name+" to listen on "+addr, func(ctx context.Context) (bool, string, error) {
		if err := srv.running(); err != nil {
			return false, "", err
		}
		conn, err := (&net.Dialer{Timeout: time.Second}).DialContext(ctx, "tcp", addr)
		if err != nil {
			return false, err.Error(), nil
		}
		_ = conn.Close()
		return true, "", nil
	})
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
