package e2e

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kiso-dev/kiso/internal/docblocks"
)

// installApply matches a command of the README's Install section that applies a file.
var installApply = regexp.MustCompile(`^kubectl apply -f (\S+)$`)

// installRunsAsWritten are the commands of the README's Install blocks this test runs as written: the wait for
// kiso's Configuration (the harness installs it under the same name), and the namespaces the platform gives acme.
var installRunsAsWritten = regexp.MustCompile(`^(kubectl wait configuration\.pkg\.crossplane\.io/kiso |kubectl create namespace |for ns in )`)

// installMarker marks the README's blocks this test runs.
var installMarker = regexp.MustCompile(`^run by TestInstallStepsApply\b`)

// TestInstallStepsApply keeps the README's Install section true: it runs every command of the section's blocks
// marked as run by it, in the README's order. Every file they apply exists and is accepted by the real API server
// with the real schemas (server-side dry run: the providers and the Configuration would pull from public
// registries, which the suite installs from its loopback registry instead); the wait for kiso's Configuration and
// the namespaces' creation run as written. Every file under examples/install is one of those steps.
func TestInstallStepsApply(t *testing.T) {
	blocks := installBlocksT(t)
	var files, commands []string
	for _, block := range blocks {
		for _, c := range docblocks.Commands(block) {
			if m := installApply.FindStringSubmatch(c); m != nil {
				files = append(files, m[1])
			} else if !installRunsAsWritten.MatchString(c) {
				t.Errorf("README.md's Install runs `%s`, which TestInstallStepsApply does not run: run it here, or move it to a block marked as not run here", c)
			}
			commands = append(commands, c)
		}
	}
	if len(files) == 0 {
		t.Fatal("README.md's Install section applies no file")
	}

	installDir := filepath.Join(env.RepoRoot, "examples", "install")
	entries, err := os.ReadDir(installDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if f := "examples/install/" + e.Name(); !slices.Contains(files, f) {
			t.Errorf("%s is not a step of README.md's Install section", f)
		}
	}

	// The ProviderConfig's kind comes with provider-aws's family provider, which does not run here.
	if _, err := env.Kubectl.Run(t.Context(), nil, "apply", "--server-side", "-f", filepath.Join(env.ProviderAWSCRDDir, "aws.upbound.io_providerconfigs.yaml")); err != nil {
		t.Fatalf("cannot apply provider-aws's ProviderConfig CRD: %v", err)
	}

	for _, c := range commands {
		if m := installApply.FindStringSubmatch(c); m != nil {
			out := env.TryT(t, nil, "apply", "--dry-run=server", "-f", filepath.Join(env.RepoRoot, filepath.FromSlash(m[1])))
			if out.ExitCode != 0 {
				t.Errorf("README Install step `%s` is refused:\n%s", c, strings.TrimSpace(out.Stderr))
			}
			continue
		}
		if strings.Contains(c, "create namespace") {
			t.Cleanup(func() { deleteNamespacesOfT(t, c) })
		}
		if out, err := runDocBlock(t.Context(), env.Kubectl.binary, env.Kubeconfig, env.RepoRoot, c); err != nil {
			t.Errorf("README Install step `%s` failed: %v\n%s", c, err, out)
		}
	}
}

// installBlocksT returns the sh blocks of the README that are marked as run by TestInstallStepsApply: the
// Install section's, in order.
func installBlocksT(t *testing.T) []string {
	t.Helper()
	all, err := docblocks.File(env.RepoRoot, "README.md")
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	for _, b := range all {
		if installMarker.MatchString(b.Marker) {
			blocks = append(blocks, b.Text)
		}
	}
	if len(blocks) == 0 {
		t.Fatalf("README.md has no sh block marked as run by TestInstallStepsApply")
	}
	return blocks
}

// installNamespace matches the names a README command creates namespaces under: one name, or a loop's list.
var installNamespace = regexp.MustCompile(`create namespace (\S+)|for ns in ([^;]+);`)

// deleteNamespacesOfT deletes the namespaces a README command created.
func deleteNamespacesOfT(t *testing.T, command string) {
	t.Helper()
	for _, m := range installNamespace.FindAllStringSubmatch(command, -1) {
		for name := range strings.FieldsSeq(m[1] + " " + m[2]) {
			if name == "$ns" {
				continue
			}
			if _, err := env.Kubectl.Run(context.Background(), nil, "delete", "namespace", name, "--ignore-not-found"); err != nil {
				t.Errorf("cannot clean up: %v", err)
			}
		}
	}
}
