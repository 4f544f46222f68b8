package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// installApply matches the files the README's Install section applies, in order.
var installApply = regexp.MustCompile(`(?m)^kubectl apply -f (\S+)`)

// TestInstallStepsApply keeps the README's Install section true: every file it tells a platform engineer to apply
// exists and is accepted by the real API server with the real schemas (server-side dry run: the providers and the
// Configuration would pull from public registries, which the suite installs from its loopback registry instead),
// in the README's order; and every file under examples/install is one of those steps.
func TestInstallStepsApply(t *testing.T) {
	readme := string(readRepoFileT(t, "README.md"))
	start := strings.Index(readme, "\n## Install\n")
	if start < 0 {
		t.Fatal("README.md has no Install section")
	}
	section := readme[start+1:]
	if end := strings.Index(section[1:], "\n## "); end >= 0 {
		section = section[:end+1]
	}
	var files []string
	for _, m := range installApply.FindAllStringSubmatch(section, -1) {
		files = append(files, m[1])
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
	// The claim's namespace, as the README creates it and gives it to organization acme.
	acme := []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: acme\n  labels: {kiso.dev/organization: acme}\n")
	env.ApplyT(t, acme)
	t.Cleanup(func() { deleteAtCleanup(t, acme) })

	for _, f := range files {
		out := env.TryT(t, nil, "apply", "--dry-run=server", "-f", filepath.Join(env.RepoRoot, filepath.FromSlash(f)))
		if out.ExitCode != 0 {
			t.Errorf("README Install step `kubectl apply -f %s` is refused:\n%s", f, strings.TrimSpace(out.Stderr))
		}
	}
}
