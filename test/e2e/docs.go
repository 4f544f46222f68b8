package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kiso-dev/kiso/internal/docblocks"
)

// docBlock returns the one sh block of a page of the repository (README.md, docs/install.md) that holds want, so
// that a scenario runs the commands a reader copies, not its own version of them.
func docBlock(root, page, want string) (string, error) {
	blocks, err := docblocks.File(root, page)
	if err != nil {
		return "", err
	}
	b, err := docblocks.Holding(blocks, want)
	if err != nil {
		return "", fmt.Errorf("%s: %w", page, err)
	}
	return b.Text, nil
}

// runDocBlock runs a page's sh block with sh, in dir, as a reader at a shell whose kubectl (the one built from the
// API server's release, first on PATH) reaches the cluster of kubeconfig, and returns what it prints.
func runDocBlock(ctx context.Context, kubectl, kubeconfig, dir, block string) (string, error) {
	shellEnv := []string{
		"KUBECONFIG=" + kubeconfig,
		"PATH=" + filepath.Dir(kubectl) + string(os.PathListSeparator) + os.Getenv("PATH"),
	}
	out, err := runCommandWith(ctx, dir, shellEnv, nil, "sh", "-c", block)
	return string(out), err
}

// runDocBlockT runs the one sh block of page that holds want as runDocBlock does, from the repository's root,
// against the management cluster, each placeholder (the block's <xr>, <cluster>) replaced by the name a reader
// would type, and returns what it prints. A placeholder the block does not hold fails the scenario: the page and
// the scenario have drifted.
func runDocBlockT(t *testing.T, page, want string, placeholders map[string]string) string {
	t.Helper()
	block, err := docBlock(env.RepoRoot, page, want)
	if err != nil {
		t.Fatal(err)
	}
	for placeholder, name := range placeholders {
		if !strings.Contains(block, placeholder) {
			t.Fatalf("%s's block holding %q has no placeholder %s:\n%s", page, want, placeholder, block)
		}
		block = strings.ReplaceAll(block, placeholder, name)
	}
	out, err := runDocBlock(t.Context(), env.Kubectl.binary, env.Kubeconfig, env.RepoRoot, block)
	if err != nil {
		t.Fatalf("%s's commands\n%s\nfailed: %v\n%s", page, block, err, out)
	}
	t.Logf("%s:\n$ %s%s", page, strings.ReplaceAll(strings.TrimSpace(block), "\n", "\n$ ")+"\n", out)
	return out
}
