package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// stopGracePeriod is how long a server gets to exit on SIGTERM before it is killed.
const stopGracePeriod = 10 * time.Second

// A server is a long-running process the harness started; its output goes to a log file.
type server struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{}
	waitErr error
}

// servers tracks every process the harness starts, so that teardown stops exactly those, by PID.
type servers struct {
	mu      sync.Mutex
	started []*server
	logDir  string
	// pidFile lists the PIDs started here, so the parent process can reap them if this one dies.
	pidFile string
}

func newServers(logDir, pidFile string) (*servers, error) {
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, fmt.Errorf("cannot create log directory: %w", err)
	}
	return &servers{logDir: logDir, pidFile: pidFile}, nil
}

// start runs binary with args in the background, its output appended to <logDir>/<name>.log.
func (s *servers) start(name, binary string, args, env []string) (*server, error) {
	logPath := filepath.Join(s.logDir, name+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("cannot open log of %s: %w", name, err)
	}
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	// Pdeathsig kills the server if the harness dies without tearing down; its own process group keeps a
	// terminal's Ctrl-C from reaching it before the harness has stopped it in order.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("cannot start %s: %w", name, err)
	}
	srv := &server{name: name, cmd: cmd, logPath: logPath, exited: make(chan struct{})}
	go func() {
		srv.waitErr = cmd.Wait()
		_ = logFile.Close()
		close(srv.exited)
	}()
	s.mu.Lock()
	s.started = append(s.started, srv)
	s.mu.Unlock()
	s.recordPID(srv)
	return srv, nil
}

func (s *servers) recordPID(srv *server) {
	if s.pidFile == "" {
		return
	}
	f, err := os.OpenFile(s.pidFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%d %s\n", srv.cmd.Process.Pid, srv.cmd.Path)
}

// running reports an error with the log's tail if the server has exited.
func (srv *server) running() error {
	select {
	case <-srv.exited:
		return fmt.Errorf("%s exited (%s); last lines of %s:\n%s", srv.name, exitReason(srv.waitErr), srv.logPath, tail(srv.logPath, 30))
	default:
		return nil
	}
}

// stop sends SIGTERM to the server's PID and SIGKILL after the grace period.
func (srv *server) stop() error {
	select {
	case <-srv.exited:
		return nil
	default:
	}
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("cannot stop %s (pid %d): %w", srv.name, srv.cmd.Process.Pid, err)
	}
	select {
	case <-srv.exited:
		return nil
	case <-time.After(stopGracePeriod):
	}
	if err := srv.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("cannot kill %s (pid %d): %w", srv.name, srv.cmd.Process.Pid, err)
	}
	<-srv.exited
	return nil
}

// stopAll stops the servers in the reverse order of their start: clients before the API server, the API
// server before etcd.
func (s *servers) stopAll() error {
	s.mu.Lock()
	started := append([]*server(nil), s.started...)
	s.mu.Unlock()
	var errs []error
	for i := len(started) - 1; i >= 0; i-- {
		if err := started[i].stop(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// printPeakMemory prints each running server's peak resident memory (VmHWM), so that memory growth shows
// in CI logs next to the phase durations.
func (s *servers) printPeakMemory(w io.Writer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	parts := make([]string, 0, len(s.started))
	for _, srv := range s.started {
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", srv.cmd.Process.Pid))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(status), "\n") {
			if kb, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				kib, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(kb), "kB")))
				parts = append(parts, fmt.Sprintf("%s %d MB", srv.name, kib/1024))
			}
		}
	}
	fmt.Fprintf(w, "e2e: peak RSS: %s\n", strings.Join(parts, ", "))
}

// printLogs prints the tail of every server's log, for a failed run.
func (s *servers) printLogs(w io.Writer, lines int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, srv := range s.started {
		fmt.Fprintf(w, "\n===== %s (pid %d), last %d lines of %s =====\n%s", srv.name, srv.cmd.Process.Pid, lines, srv.logPath, tail(srv.logPath, lines))
	}
}

// reapRecordedPIDs kills processes listed in a pid file that are still alive and still run the recorded
// binary: the safety net for a harness process that died before its teardown.
func reapRecordedPIDs(pidFile string) []string {
	data, err := os.ReadFile(pidFile)
	if err != nil {
		return nil
	}
	var reaped []string
	scanner := bufio.NewScanner(bytes.NewReader(data))
	for scanner.Scan() {
		pidText, binary, ok := strings.Cut(scanner.Text(), " ")
		if !ok {
			continue
		}
		pid, err := strconv.Atoi(pidText)
		if err != nil {
			continue
		}
		// A PID may have been reused since: only kill it if it still runs the binary recorded for it.
		exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		if err != nil || exe != binary {
			continue
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err == nil {
			reaped = append(reaped, fmt.Sprintf("%d %s", pid, binary))
		}
	}
	return reaped
}

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)\n", path, err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "")
}

// runCommand runs a short-lived command and returns its stdout; the error carries its stderr.
func runCommand(ctx context.Context, env []string, stdin []byte, binary string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append(os.Environ(), env...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("%s %s: %w: %s", filepath.Base(binary), strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// exitReason says how a server's process ended; a clean exit is still unexpected for a server.
func exitReason(waitErr error) string {
	if waitErr == nil {
		return "exit status 0"
	}
	return waitErr.Error()
}
