// Package process supervises the long-running processes kiso's tools start (function servers for make render,
// the control plane of the end-to-end suite): each with a log file, stopped by its own PID in the reverse order
// of its start, and killed by the kernel if the tool dies first.
package process

import (
	"bufio"
	"bytes"
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

// StopGracePeriod is how long a server gets to exit on SIGTERM before it is killed.
const StopGracePeriod = 10 * time.Second

// A Server is a long-running process a Group started; its output goes to a log file.
type Server struct {
	Name    string
	LogPath string
	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error
}

// A Group tracks every process a tool starts, so that teardown stops exactly those, by PID.
type Group struct {
	mu      sync.Mutex
	started []*Server
	logDir  string
	// pidFile lists the PIDs started here, so that a later run can reap them if this one dies (ReapRecorded).
	pidFile string
}

// NewGroup returns a Group writing logs into logDir and, unless pidFile is empty, each PID into pidFile.
func NewGroup(logDir, pidFile string) (*Group, error) {
	if err := os.MkdirAll(logDir, 0o750); err != nil {
		return nil, fmt.Errorf("cannot create log directory: %w", err)
	}
	return &Group{logDir: logDir, pidFile: pidFile}, nil
}

// LogPath is where the server named name writes its output.
func (g *Group) LogPath(name string) string { return filepath.Join(g.logDir, name+".log") }

// Start runs binary with args in the background, its output appended to LogPath(name).
func (g *Group) Start(name, binary string, args, env []string) (*Server, error) {
	logPath := g.LogPath(name)
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("cannot open log of %s: %w", name, err)
	}
	cmd := exec.Command(binary, args...) //nolint:noctx // stopped by Stop, in order, not by a context
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	// Pdeathsig kills the server if the tool dies without tearing down; its own process group keeps a
	// terminal's Ctrl-C from reaching it before the tool has stopped it in order.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("cannot start %s: %w", name, err)
	}
	srv := &Server{Name: name, LogPath: logPath, cmd: cmd, exited: make(chan struct{})}
	go func() {
		srv.waitErr = cmd.Wait()
		_ = logFile.Close()
		close(srv.exited)
	}()
	g.mu.Lock()
	g.started = append(g.started, srv)
	g.mu.Unlock()
	g.recordPID(srv)
	return srv, nil
}

func (g *Group) recordPID(srv *Server) {
	if g.pidFile == "" {
		return
	}
	f, err := os.OpenFile(g.pidFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%d %s\n", srv.cmd.Process.Pid, srv.cmd.Path)
}

// PID is the server's process ID.
func (srv *Server) PID() int { return srv.cmd.Process.Pid }

// Running reports an error with the log's tail if the server has exited.
func (srv *Server) Running() error {
	select {
	case <-srv.exited:
		return fmt.Errorf("%s exited (%s); last lines of %s:\n%s", srv.Name, exitReason(srv.waitErr), srv.LogPath, Tail(srv.LogPath, 30))
	default:
		return nil
	}
}

// Stop sends SIGTERM to the server's PID and SIGKILL after StopGracePeriod.
func (srv *Server) Stop() error {
	select {
	case <-srv.exited:
		return nil
	default:
	}
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("cannot stop %s (pid %d): %w", srv.Name, srv.PID(), err)
	}
	select {
	case <-srv.exited:
		return nil
	case <-time.After(StopGracePeriod):
	}
	if err := srv.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("cannot kill %s (pid %d): %w", srv.Name, srv.PID(), err)
	}
	<-srv.exited
	return nil
}

// StopAll stops the servers in the reverse order of their start: clients before the servers they use.
func (g *Group) StopAll() error {
	var errs []error
	started := g.servers()
	for i := len(started) - 1; i >= 0; i-- {
		if err := started[i].Stop(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (g *Group) servers() []*Server {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]*Server(nil), g.started...)
}

// PrintPeakMemory prints each running server's peak resident memory (VmHWM), so that memory growth shows in
// CI logs.
func (g *Group) PrintPeakMemory(w io.Writer, prefix string) {
	usage := g.Usage()
	parts := make([]string, 0, len(usage))
	for _, u := range usage {
		parts = append(parts, fmt.Sprintf("%s %d MB", u.Name, u.PeakRSSMB))
	}
	fmt.Fprintf(w, "%speak RSS: %s\n", prefix, strings.Join(parts, ", "))
}

// PrintLogs prints the tail of every server's log, for a failed run.
func (g *Group) PrintLogs(w io.Writer, lines int) {
	for _, srv := range g.servers() {
		fmt.Fprintf(w, "\n===== %s (pid %d), last %d lines of %s =====\n%s", srv.Name, srv.PID(), lines, srv.LogPath, Tail(srv.LogPath, lines))
	}
}

// ReapRecorded kills the processes a pid file lists that are still alive and still run the recorded binary:
// the safety net for a tool that died before its teardown.
func ReapRecorded(pidFile string) []string {
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

// Tail returns the last n lines of a file.
func Tail(path string, n int) string {
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

// exitReason says how a server's process ended; a clean exit is still unexpected for a server.
func exitReason(waitErr error) string {
	if waitErr == nil {
		return "exit status 0"
	}
	return waitErr.Error()
}

// Usage is what one server has used so far: CPU time (user and system, all its threads) and peak resident
// memory.
type Usage struct {
	Name       string
	CPUSeconds float64
	PeakRSSMB  int
	// RSSMB is the resident memory now.
	RSSMB int
}

// kibibytes reads a /proc/<pid>/status size ("  1234 kB").
func kibibytes(field string) int {
	kib, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(field), "kB")))
	return kib
}

// Signal sends sig to the running server named name: SIGSTOP freezes it (its state stays, it acts on nothing)
// until SIGCONT.
func (g *Group) Signal(name string, sig syscall.Signal) error {
	for _, srv := range g.servers() {
		if srv.Name == name {
			return syscall.Kill(srv.PID(), sig)
		}
	}
	return fmt.Errorf("no server %s is running", name)
}

// clockTicks is the unit of /proc/<pid>/stat's CPU times (USER_HZ, 100 on Linux on every architecture Go
// supports).
const clockTicks = 100

// Usage reads each running server's CPU time and peak memory from /proc, in the order they were started.
func (g *Group) Usage() []Usage {
	var out []Usage
	for _, srv := range g.servers() {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", srv.PID()))
		if err != nil {
			continue
		}
		// The command name may hold spaces; the fields after it are space-separated: utime and stime are
		// the 14th and 15th fields of the line, the 12th and 13th after the ")".
		_, rest, ok := strings.Cut(string(stat), ") ")
		fields := strings.Fields(rest)
		if !ok || len(fields) < 13 {
			continue
		}
		utime, _ := strconv.ParseFloat(fields[11], 64)
		stime, _ := strconv.ParseFloat(fields[12], 64)
		u := Usage{Name: srv.Name, CPUSeconds: (utime + stime) / clockTicks}
		if status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", srv.PID())); err == nil {
			for _, line := range strings.Split(string(status), "\n") {
				if kb, ok := strings.CutPrefix(line, "VmHWM:"); ok {
					u.PeakRSSMB = kibibytes(kb) / 1024
				}
				if kb, ok := strings.CutPrefix(line, "VmRSS:"); ok {
					u.RSSMB = kibibytes(kb) / 1024
				}
			}
		}
		out = append(out, u)
	}
	return out
}
