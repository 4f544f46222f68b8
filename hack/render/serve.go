package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kiso-dev/kiso/internal/process"
)

// serveCommand is the hidden command by which the driver re-runs itself inside a network namespace.
const serveCommand = "__serve"

// functionStartTimeout bounds a function's start, until it listens: render fails outright if it dials too early.
const functionStartTimeout = 30 * time.Second

// renderFailedPrefix starts the golden of a render that failed (for example on a Fatal result): the scenario
// that must fail is then checked as precisely as one that must succeed.
const renderFailedPrefix = "# crossplane render failed"

// plan is everything the rendering phase needs, handed to the copy of the driver in the network namespace.
type plan struct {
	Mode      mode
	Tmp       string
	CLI       string // the Crossplane CLI
	Core      string // Crossplane core, which render runs for its function pipeline
	Functions []servedFunction
	Examples  []example
	Debug     bool
	Loopback  bool // set lo up first: a new network namespace starts with it down
}

// A servedFunction is a built function and the name the Compositions call it by.
type servedFunction struct {
	Name    string
	Package string
	Binary  string
}

// serveInNamespace renders in a fresh network and PID namespace when this process may create one. Inside, only
// loopback exists: the insecure function servers (and the SDK's metrics listener) are unreachable from outside
// and cannot collide with anything else running; and the kernel ends the servers with the namespace's first
// process however it ends, even by SIGKILL.
func serveInNamespace(ctx context.Context, p plan) error {
	_, ipErr := exec.LookPath("ip")
	if os.Getenv("KISO_NETNS") == "0" || ipErr != nil {
		return serve(ctx, p)
	}
	p.Loopback = true
	planFile := filepath.Join(p.Tmp, "plan.json")
	data, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("cannot encode the render plan: %w", err)
	}
	if err := os.WriteFile(planFile, data, 0o600); err != nil { //nolint:gosec // in this run's work directory
		return fmt.Errorf("cannot write the render plan: %w", err)
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("cannot find this program: %w", err)
	}
	cmd := exec.CommandContext(ctx, self, serveCommand, planFile)
	cmd.Stdout = os.Stdout
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET | syscall.CLONE_NEWPID, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) {
			p.Loopback = false
			return serve(ctx, p)
		}
		return fmt.Errorf("cannot start the renders in a network namespace: %w", err)
	}
	if err := cmd.Wait(); err != nil {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) && exitErr.ExitCode() == 1 {
			return errFailed
		}
		return fmt.Errorf("the renders in the network namespace failed: %w", err)
	}
	return nil
}

// serveFromFile runs a plan the parent wrote, inside the network namespace.
func serveFromFile(ctx context.Context, planFile string) error {
	data, err := os.ReadFile(planFile) //nolint:gosec // written by the parent for this run
	if err != nil {
		return fmt.Errorf("cannot read the render plan: %w", err)
	}
	var p plan
	if err := json.Unmarshal(data, &p); err != nil {
		return fmt.Errorf("cannot decode the render plan: %w", err)
	}
	return serve(ctx, p)
}

// serve starts the functions, renders every example into its Out file, and stops the functions.
func serve(ctx context.Context, p plan) error {
	if p.Loopback {
		if out, err := exec.CommandContext(ctx, "ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
			return fmt.Errorf("cannot set lo up: %w: %s", err, out)
		}
	}
	servers, functionsFile, err := startFunctions(ctx, p)
	if servers != nil {
		defer func() { _ = servers.StopAll() }()
	}
	if err != nil {
		return err
	}

	failed := false
	for _, ex := range p.Examples {
		args := []string{
			"render", ex.XR, ex.Composition, functionsFile,
			"--include-function-results", "--include-full-xr", "--crossplane-binary=" + p.Core,
		}
		if ex.XRD != "" {
			args = append(args, "--xrd="+ex.XRD)
		}
		if ex.Required != "" {
			args = append(args, "--required-resources="+ex.Required)
		}
		if ex.Observed != "" {
			args = append(args, "--observed-resources="+ex.Observed)
		}
		out, stderr, code := renderOnce(ctx, p.CLI, args)
		if code != 0 {
			out = failedRender(code, stderr)
		} else if p.Mode == modeCheck {
			// The same request must render byte-identical output; a second run catches map-order effects.
			again, _, _ := renderOnce(ctx, p.CLI, args)
			if !bytes.Equal(out, again) {
				fmt.Fprintf(os.Stderr, "NONDETERMINISTIC %s: two renders differ\n", ex.Label)
				if err := os.WriteFile(ex.Out+".again", again, 0o600); err == nil {
					_ = os.WriteFile(ex.Out+".first", out, 0o600)
					showDiff(ctx, "first", "second", ex.Out+".first", ex.Out+".again")
				}
				failed = true
			}
		}
		if err := os.WriteFile(ex.Out, out, 0o600); err != nil {
			return fmt.Errorf("cannot write the render of %s: %w", ex.Label, err)
		}
		if p.Debug && len(stderr) > 0 {
			_, _ = os.Stderr.Write(stderr)
		}
	}
	if p.Debug {
		servers.PrintLogs(os.Stderr, 200)
	}
	if failed {
		return errFailed
	}
	return nil
}

// renderOnce runs crossplane render and returns its normalized output, its stderr and its exit code.
func renderOnce(ctx context.Context, cli string, args []string) (out, stderr []byte, code int) {
	var o, e bytes.Buffer
	cmd := exec.CommandContext(ctx, cli, args...) //nolint:gosec // the Crossplane CLI hack/build-tool.sh built
	cmd.Stdout = &o
	cmd.Stderr = &e
	if err := cmd.Run(); err != nil {
		code = -1
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			code = exitErr.ExitCode()
		}
		if code == -1 {
			e.WriteString(err.Error() + "\n")
		}
	}
	return normalize(o.Bytes()), e.Bytes(), code
}

// failedRender is the golden of a failed render: its exit code, and its error output as comments.
func failedRender(code int, stderr []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s (exit code %d):\n", renderFailedPrefix, code)
	lines := strings.SplitAfter(string(stderr), "\n")
	for _, line := range lines {
		if line != "" {
			b.WriteString("# " + line)
		}
	}
	return b.Bytes()
}

// startFunctions starts every function on a free loopback port, waits until each listens, and writes the
// Functions file render reads: the Development runtime makes render dial a running function instead of
// pulling and running its package's image.
func startFunctions(ctx context.Context, p plan) (*process.Group, string, error) {
	servers, err := process.NewGroup(p.Tmp, "")
	if err != nil {
		return nil, "", err
	}
	var file bytes.Buffer
	for i, fn := range p.Functions {
		port, err := process.FreePort()
		if err != nil {
			return servers, "", err
		}
		address := "127.0.0.1:" + strconv.Itoa(port)
		args := []string{"--insecure", "--address=" + address}
		if p.Debug {
			args = append(args, "--debug")
		}
		srv, err := servers.Start(fn.Name, fn.Binary, args, nil)
		if err != nil {
			return servers, "", err
		}
		if err := process.WaitForListener(ctx, srv, address, functionStartTimeout); err != nil {
			return servers, "", fmt.Errorf("function %s did not start listening: %w", fn.Name, err)
		}

		obj := map[string]any{
			"apiVersion": "pkg.crossplane.io/v1",
			"kind":       "Function",
			"metadata": map[string]any{
				"name": fn.Name,
				"annotations": map[string]any{
					"render.crossplane.io/runtime":                    "Development",
					"render.crossplane.io/runtime-development-target": address,
				},
			},
			// Render never pulls the package: this only names it.
			"spec": map[string]any{"package": "kiso.invalid/" + fn.Package + ":v0.0.0-dev"},
		}
		doc, err := yaml.Marshal(obj)
		if err != nil {
			return servers, "", fmt.Errorf("cannot encode the Function %s: %w", fn.Name, err)
		}
		if i > 0 {
			file.WriteString("---\n")
		}
		file.Write(doc)
	}
	path := filepath.Join(p.Tmp, "functions.yaml")
	if err := os.WriteFile(path, file.Bytes(), 0o600); err != nil {
		return servers, "", fmt.Errorf("cannot write the Functions file: %w", err)
	}
	return servers, path, nil
}
