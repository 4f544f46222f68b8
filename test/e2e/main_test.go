package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kiso-dev/kiso/internal/layout"
	"github.com/kiso-dev/kiso/internal/process"
)

// Environment variables that control a run.
const (
	// enableEnv must be "1" to run: the suite boots a control plane, which `go test ./...` should not do
	// by accident.
	enableEnv = "KISO_E2E"
	// keepEnv set to "1" keeps the run's directory (logs, kubeconfig, certificates) after it ends.
	keepEnv = "KISO_E2E_KEEP"
	// debugEnv set to "1" makes Crossplane log at debug level, e.g. why a package does not install.
	debugEnv = "KISO_E2E_DEBUG"
)

// bootTimeout bounds everything from starting etcd to the XRDs being Established.
const bootTimeout = 5 * time.Minute

// upgradeBootTimeout bounds the upgrade from the last release, after the boot: organizations onboard with running
// pods, this tree goes in, its functions render each organization twice, and the organizations go again.
const upgradeBootTimeout = 15 * time.Minute

func TestMain(m *testing.M) {
	flag.Parse()
	if os.Getenv(enableEnv) != "1" {
		fmt.Printf("skipping kiso's end-to-end tests: set %s=1 (test/e2e/run.sh does)\n", enableEnv)
		os.Exit(0)
	}
	if os.Getenv(inNamespaceEnv) == "1" {
		os.Exit(runInNamespace(m))
	}
	os.Exit(runOnHost(m))
}

// runOnHost prepares tools and packages while the network is reachable, then runs the suite in a network
// namespace with only loopback, or on the host's 127.0.0.1 where no namespace can be made.
func runOnHost(m *testing.M) int {
	phases := newPhaseTimer()
	defer phases.total("total")
	ctx := context.Background()

	repoRoot, err := layout.Root()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	workDir, err := os.MkdirTemp("", "kiso-e2e-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "cannot create the run's directory: %v\n", err)
		return 1
	}
	failed := true
	defer func() {
		if failed || os.Getenv(keepEnv) == "1" {
			fmt.Printf("e2e: kept the run's directory %s\n", workDir)
			return
		}
		_ = os.RemoveAll(workDir)
	}()

	p, err := prepare(ctx, repoRoot, workDir, phases)
	if err != nil {
		fmt.Fprintf(os.Stderr, "cannot prepare the end-to-end run: %v\n", err)
		return 1
	}
	preparedFile := filepath.Join(workDir, "prepared.json")
	if err := writeJSON(preparedFile, p); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}

	code := 0
	if os.Getenv(namespaceModeEnv) == "off" {
		fmt.Printf("e2e: %s=off: running on the host's 127.0.0.1\n", namespaceModeEnv)
		code = runSuite(m, p, workDir, false)
	} else {
		code, err = runInNetworkNamespace(preparedFile)
		if errors.Is(err, errNoNetworkNamespace) {
			fmt.Printf("e2e: %v; running on the host's 127.0.0.1 instead\n", err)
			code = runSuite(m, p, workDir, false)
		} else if err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	// The namespaced run stops what it started; this catches what a crash of it left behind.
	if reaped := process.ReapRecorded(filepath.Join(workDir, "pids")); len(reaped) > 0 {
		fmt.Printf("e2e: killed processes a previous stage left running: %v\n", reaped)
		code = 1
	}
	failed = code != 0
	return code
}

// runInNamespace is the copy of the test binary inside the network namespace.
func runInNamespace(m *testing.M) int {
	if err := bringUpLoopback(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	preparedFile := os.Getenv(preparedEnv)
	p := &prepared{}
	if err := readJSON(preparedFile, p); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("e2e: running in a network namespace with only loopback")
	return runSuite(m, p, filepath.Dir(preparedFile), true)
}

// runSuite boots the environment, runs the tests against it, and stops every server it started. Karpenter,
// kube-scheduler, kwok and Crossplane's RBAC manager run only in a network namespace (isolatedNetwork); on
// the host's network, the scenarios that need them are skipped.
func runSuite(m *testing.M, p *prepared, workDir string, isolatedNetwork bool) int {
	phases := newPhaseTimer()
	runDir := filepath.Join(workDir, "run")
	servers, err := process.NewGroup(filepath.Join(runDir, "logs"), filepath.Join(workDir, "pids"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}

	ctx, cancel := context.WithTimeout(context.Background(), bootTimeout)
	if !isolatedNetwork {
		fmt.Println("e2e: not in a network namespace: Karpenter, kube-scheduler, kwok and Crossplane's RBAC manager do not run, Crossplane runs as the administrator, and the scenarios that need them are skipped")
	}
	e, err := bootEnvironment(ctx, p, runDir, servers, phases, isolatedNetwork)
	cancel()
	phases.total("boot")
	code := 0
	if err != nil {
		fmt.Fprintf(os.Stderr, "cannot boot the end-to-end environment: %v\n", err)
		e.printDiagnostics(context.Background())
		code = 1
	} else {
		env = e
		if p.Release != nil {
			ctx, cancel := context.WithTimeout(context.Background(), upgradeBootTimeout)
			err = phases.run("upgrade from the last release ("+p.Release.Version+")", func() error {
				e.Upgrade, err = upgradeFromRelease(ctx, e, p)
				return err
			})
			cancel()
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "cannot install this tree over the last release: %v\n", err)
			e.printDiagnostics(context.Background())
			code = 1
		} else {
			code = m.Run()
			if code != 0 {
				e.printDiagnostics(context.Background())
			}
		}
	}

	if e != nil && e.Timings != nil {
		e.Timings.print(os.Stdout)
	}
	servers.PrintPeakMemory(os.Stdout, "e2e: ")
	if err := phases.run("stop servers", servers.StopAll); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	if code != 0 {
		fmt.Printf("e2e: logs and kubeconfig are in %s\n", runDir)
	}
	return code
}

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("cannot encode %s: %w", path, err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	return nil
}

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("cannot read %s: %w", path, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("cannot decode %s: %w", path, err)
	}
	return nil
}
