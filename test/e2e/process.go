package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// runCommand runs a short-lived command and returns its stdout; the error carries its stderr.
func runCommand(ctx context.Context, env []string, stdin []byte, binary string, args ...string) ([]byte, error) {
	return runCommandWith(ctx, "", env, stdin, binary, args...)
}

// runCommandWith runs a command as runCommand does, in dir.
func runCommandWith(ctx context.Context, dir string, env []string, stdin []byte, binary string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Dir = dir
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
