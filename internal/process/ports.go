package process

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
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

// ListeningPorts returns the TCP ports the process pid listens on, for a server that picks its own port and does
// not say which: its sockets (/proc/<pid>/fd) matched against the listening sockets of its network namespace
// (/proc/<pid>/net/tcp and tcp6).
func ListeningPorts(pid int) ([]int, error) {
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return nil, fmt.Errorf("cannot read the sockets of process %d: %w", pid, err)
	}
	sockets := map[string]bool{}
	for _, fd := range fds {
		target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if inode, ok := strings.CutPrefix(target, "socket:["); err == nil && ok {
			sockets[strings.TrimSuffix(inode, "]")] = true
		}
	}
	var ports []int
	for _, table := range []string{"tcp", "tcp6"} {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, table))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("cannot read the sockets of process %d: %w", pid, err)
		}
		ports = append(ports, listening(string(data), sockets)...)
	}
	slices.Sort(ports)
	return slices.Compact(ports), nil
}

// tcpListen is the state of a listening socket in /proc/net/tcp.
const tcpListen = "0A"

// listening reads a /proc/net/tcp table: the local ports of the listening sockets among inodes. A line is
// "sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode ...", an address
// being HEXADDR:HEXPORT.
func listening(table string, inodes map[string]bool) []int {
	var ports []int
	for _, line := range strings.Split(table, "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 10 || f[3] != tcpListen || !inodes[f[9]] {
			continue
		}
		_, hexPort, ok := strings.Cut(f[1], ":")
		port, err := strconv.ParseInt(hexPort, 16, 32)
		if ok && err == nil {
			ports = append(ports, int(port))
		}
	}
	return ports
}
