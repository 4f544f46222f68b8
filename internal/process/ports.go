package process

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"
)

// pollInterval is how often WaitForListener dials again.
const pollInterval = 100 * time.Millisecond

// FreePorts returns n distinct TCP ports on 127.0.0.1 that were free a moment ago; they are held open
// together so none is returned twice.
func FreePorts(n int) ([]int, error) {
	listeners := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0") //nolint:noctx // a port probe, closed at once
		if err != nil {
			return nil, fmt.Errorf("cannot find a free port: %w", err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// FreePort returns one TCP port on 127.0.0.1 that was free a moment ago.
func FreePort() (int, error) {
	ports, err := FreePorts(1)
	if err != nil {
		return 0, err
	}
	return ports[0], nil
}

// WaitForListener waits until something accepts TCP connections on address, failing early if the server that
// should listen there has exited: a client that dials too early fails outright.
func WaitForListener(ctx context.Context, srv *Server, address string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		if err := srv.Running(); err != nil {
			return err
		}
		conn, err := (&net.Dialer{Timeout: time.Second}).DialContext(ctx, "tcp", address)
		if err == nil {
			_ = conn.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("timed out after %s waiting for %s to listen on %s: %w", timeout, srv.Name, address, errors.Join(err, ctx.Err()))
		case <-time.After(pollInterval):
		}
	}
}
