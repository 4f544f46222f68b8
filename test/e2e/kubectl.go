package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// kubectlTimeout bounds one kubectl invocation.
const kubectlTimeout = 2 * time.Minute

// Kubectl runs the kubectl built from the same Kubernetes release as the API server, the way a user would.
type Kubectl struct {
	binary     string
	kubeconfig string
}

// Run runs kubectl with args and returns its stdout; the error carries its stderr.
func (k *Kubectl) Run(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, kubectlTimeout)
	defer cancel()
	return runCommand(ctx, []string{"KUBECONFIG=" + k.kubeconfig}, stdin, k.binary, args...)
}

// An Outcome is what one kubectl invocation printed and how it exited: what a user reads when the apiserver
// refuses a request.
type Outcome struct {
	Stdout, Stderr string
	ExitCode       int
}

// Try runs kubectl with args and returns its outcome, whatever its exit status; the error says only that
// kubectl could not run to its end.
func (k *Kubectl) Try(ctx context.Context, stdin []byte, args ...string) (Outcome, error) {
	ctx, cancel := context.WithTimeout(ctx, kubectlTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, k.binary, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+k.kubeconfig)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exitErr *exec.ExitError
	if err != nil && (!errors.As(err, &exitErr) || ctx.Err() != nil) {
		return Outcome{}, fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return Outcome{Stdout: stdout.String(), Stderr: stderr.String(), ExitCode: cmd.ProcessState.ExitCode()}, nil
}

// TryT runs kubectl as Try does, failing the test only if kubectl could not run to its end.
func (e *Environment) TryT(t *testing.T, stdin []byte, args ...string) Outcome {
	t.Helper()
	return e.Kubectl.TryT(t, stdin, args...)
}

// TryT runs this kubectl as Try does, failing the test only if kubectl could not run to its end.
func (k *Kubectl) TryT(t *testing.T, stdin []byte, args ...string) Outcome {
	t.Helper()
	out, err := k.Try(t.Context(), stdin, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Apply applies a YAML stream with `kubectl apply -f -`, as a user applies a claim.
func (k *Kubectl) Apply(ctx context.Context, manifest []byte) error {
	_, err := k.Run(ctx, manifest, "apply", "-f", "-")
	return err
}

// ApplyServerSide applies files with server-side apply; large CRDs exceed the annotation client-side apply
// keeps.
func (k *Kubectl) ApplyServerSide(ctx context.Context, files ...string) error {
	args := make([]string, 0, 3+2*len(files))
	args = append(args, "apply", "--server-side", "--force-conflicts")
	for _, f := range files {
		args = append(args, "-f", f)
	}
	_, err := k.Run(ctx, nil, args...)
	return err
}

// Delete deletes what a YAML stream names and, with wait, returns once it is gone.
func (k *Kubectl) Delete(ctx context.Context, manifest []byte, wait bool) error {
	_, err := k.Run(ctx, manifest, "delete", "--ignore-not-found", fmt.Sprintf("--wait=%t", wait), "-f", "-")
	return err
}

// ApplyT applies a YAML stream and fails the test if kubectl fails.
func (e *Environment) ApplyT(t *testing.T, manifest []byte) {
	t.Helper()
	if err := e.Kubectl.Apply(t.Context(), manifest); err != nil {
		t.Fatalf("cannot apply:\n%s\n%v", manifest, err)
	}
}

// ApplyFileT applies a YAML file (e.g. one of examples/) and fails the test if kubectl fails.
func (e *Environment) ApplyFileT(t *testing.T, path string) {
	t.Helper()
	manifest, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("cannot read %s: %v", path, err)
	}
	e.ApplyT(t, manifest)
}

// DeleteT deletes what a YAML stream names, waiting until it is gone.
func (e *Environment) DeleteT(t *testing.T, manifest []byte) {
	t.Helper()
	if err := e.Kubectl.Delete(t.Context(), manifest, true); err != nil {
		t.Fatalf("cannot delete:\n%s\n%v", manifest, err)
	}
}
