package process

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func sleeper(t *testing.T) string {
	t.Helper()
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep binary")
	}
	return sleep
}

func TestStopEndsTheServerAndRunningSaysSo(t *testing.T) {
	g, err := NewGroup(t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := g.Start("sleeper", sleeper(t), []string{"60"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Running(); err != nil {
		t.Fatalf("a server just started is not running: %v", err)
	}
	if err := g.StopAll(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Running(); err == nil || !strings.Contains(err.Error(), "sleeper exited") {
		t.Errorf("after StopAll, Running = %v, want an error saying sleeper exited", err)
	}
}

func TestWaitForListenerFailsEarlyWhenTheServerExits(t *testing.T) {
	g, err := NewGroup(t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.StopAll() })
	srv, err := g.Start("quitter", sleeper(t), []string{"0"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = WaitForListener(t.Context(), srv, "127.0.0.1:"+strconv.Itoa(port), time.Minute)
	if err == nil || !strings.Contains(err.Error(), "quitter exited") {
		t.Errorf("WaitForListener = %v, want an error saying quitter exited", err)
	}
	if time.Since(start) > 30*time.Second {
		t.Errorf("WaitForListener waited for its timeout instead of failing when the server exited")
	}
}

func TestReapRecordedKillsWhatADeadRunLeft(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pids")
	g, err := NewGroup(dir, pidFile)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := g.Start("orphan", sleeper(t), []string{"60"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	reaped := ReapRecorded(pidFile)
	if len(reaped) != 1 {
		t.Fatalf("reaped %v, want the one server started", reaped)
	}
	select {
	case <-srv.exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the reaped server still runs")
	}
	if again := ReapRecorded(pidFile); len(again) != 0 {
		t.Errorf("reaped %v again, though nothing recorded runs any more", again)
	}
}

func TestFreePortsAreDistinct(t *testing.T) {
	ports, err := FreePorts(5)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if seen[p] || p == 0 {
			t.Errorf("port %d returned twice or zero: %v", p, ports)
		}
		seen[p] = true
	}
}

func TestUsageReadsTheServersCPUAndMemory(t *testing.T) {
	g, err := NewGroup(t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	// A shell that burns CPU until stopped.
	srv, err := g.Start("spinner", "/bin/sh", []string{"-c", "while :; do :; done"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.StopAll() })
	deadline := time.Now().Add(30 * time.Second)
	for {
		u := g.Usage()
		if len(u) != 1 || u[0].Name != srv.Name {
			t.Fatalf("usage %+v, want one entry for %s", u, srv.Name)
		}
		if u[0].CPUSeconds > 0 && u[0].PeakRSSMB >= 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a spinning process shows no CPU time: %+v", u)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
