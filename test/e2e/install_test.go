package e2e

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// installApply matches a command of the README's Install section that applies a file.
var installApply = regexp.MustCompile(`^kubectl apply -f (\S+)$`)

// installRunsAsWritten are the commands of the README's Install blocks this test runs as written: the wait for
// kiso's Configuration (the harness installs it under the same name), and the namespaces the platform gives acme.
var installRunsAsWritten = regexp.MustCompile(`^(kubectl wait configuration\.pkg\.crossplane\.io/kiso |kubectl create namespace |for ns in )`)

// installMarker marks the README's blocks this test runs.
const installMarker = "<!-- run by TestInstallStepsApply"

// TestInstallStepsApply keeps the README's Install section true: it runs every command of the section's blocks
// marked as run by it, in the README's order. Every file they apply exists and is accepted by the real API server
// with the real schemas (server-side dry run: the providers and the Configuration would pull from public
// registries, which the suite installs from its loopback registry instead); the wait for kiso's Configuration and
// the namespaces' creation run as written. Every file under examples/install is one of those steps.
func TestInstallStepsApply(t *testing.T) {
	blocks := installBlocksT(t)
	var files, commands []string
	for _, block := range blocks {
		for _, c := range shellCommands(block) {
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

// installBlocksT returns the sh blocks of the README's Install section that are marked as run by
// TestInstallStepsApply.
func installBlocksT(t *testing.T) []string {
	t.Helper()
	readme := string(readRepoFileT(t, "README.md"))
	start := strings.Index(readme, "\n## Install\n")
	if start < 0 {
		t.Fatal("README.md has no Install section")
	}
	section := readme[start+1:]
	if end := strings.Index(section[1:], "\n## "); end >= 0 {
		section = section[:end+1]
	}
	var blocks []string
	for _, part := range strings.Split(section, installMarker)[1:] {
		_, block, fenced := strings.Cut(part, "```sh\n")
		block, _, closed := strings.Cut(block, "```")
		if !fenced || !closed {
			t.Fatalf("README.md's Install section has a marker %q with no sh block after it", installMarker)
		}
		blocks = append(blocks, block)
	}
	if len(blocks) == 0 {
		t.Fatalf("README.md's Install section has no block marked %q", installMarker)
	}
	return blocks
}

// shellCommands returns a block's commands: comments and blank lines dropped, continued lines joined, a comment
// after a command cut.
func shellCommands(block string) []string {
	var out []string
	var cur strings.Builder
	for line := range strings.Lines(block) {
		line = strings.TrimRight(line, "\n")
		if cur.Len() == 0 && (strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#")) {
			continue
		}
		if continued, ok := strings.CutSuffix(line, "\\"); ok {
			cur.WriteString(continued)
			continue
		}
		command, _, _ := strings.Cut(line, "   #")
		cur.WriteString(command)
		out = append(out, strings.TrimSpace(cur.String()))
		cur.Reset()
	}
	return out
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
