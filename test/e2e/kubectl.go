package e2e

import (
	"context"
	"fmt"
	"os"
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

// Apply applies a YAML stream with `kubectl apply -f -`, as a user applies a claim.
func (k *Kubectl) Apply(ctx context.Context, manifest []byte) error {
	_, err := k.Run(ctx, manifest, "apply", "-f", "-")
	return err
}

// ApplyServerSide applies files with server-side apply; large CRDs exceed the annotation client-side apply
// keeps.
func (k *Kubectl) ApplyServerSide(ctx context.Context, files ...string) error {
	args := []string{"apply", "--server-side", "--force-conflicts"}
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
