package layout

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCRDSourcesReadsEveryModuleOfCRDsEnv: hack/schemas.sh sources hack/crds.env with the shell, the e2e
// reads it here; both must see every module with its files.
func TestCRDSourcesReadsEveryModuleOfCRDsEnv(t *testing.T) {
	sources, err := CRDSources(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"KARPENTER", "PROVIDER_AWS", "PROMETHEUS"} {
		s, ok := sources[name]
		if !ok {
			t.Errorf("hack/crds.env: no %s", name)
			continue
		}
		for _, f := range s.Files {
			if filepath.Ext(f) != ".yaml" {
				t.Errorf("%s: %q is not a CRD file", name, f)
			}
		}
	}
	if got := sources["KARPENTER"].ModuleVersion(); got == "" || got[0] == '@' {
		t.Errorf("KARPENTER module@version is %q", got)
	}
}

func TestCRDSourcesRefusesAModuleWithoutVersionOrFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "hack"), 0o750); err != nil {
		t.Fatal(err)
	}
	env := "A_MODULE=example.com/a\nA_VERSION=v1.0.0\nA_CRDS=\"\nx.yaml\n\"\nB_MODULE=example.com/b\nB_CRDS='y.yaml'\n"
	if err := os.WriteFile(filepath.Join(dir, "hack", "crds.env"), []byte(env), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := CRDSources(dir); err == nil {
		t.Error("B has no version, but CRDSources did not refuse it")
	}
	env = "A_MODULE=example.com/a\nA_VERSION=v1.0.0\nA_CRDS=\"\nx.yaml\nz.yaml\n\"\n# B_MODULE=commented/out\n"
	if err := os.WriteFile(filepath.Join(dir, "hack", "crds.env"), []byte(env), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := CRDSources(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]CRDSource{"A": {Module: "example.com/a", Version: "v1.0.0", Files: []string{"x.yaml", "z.yaml"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CRDSources (-want +got):\n%s", diff)
	}
}

// npmVersion is a semantic version as npm writes it.
var npmVersion = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`)

func TestToolVersionReadsBuildEnv(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join(root, "tools"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		v, err := ToolVersion(root, e.Name())
		if err != nil {
			t.Error(err)
			continue
		}
		vars, err := shellVars(filepath.Join(root, "tools", e.Name(), "build.env"))
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case vars["NPM"] != "":
			// An npm package's version, as npm install pkg@version takes it: no leading v.
			if !npmVersion.MatchString(v) {
				t.Errorf("tools/%s: VERSION %q is not an npm package version", e.Name(), v)
			}
		case v[0] != 'v':
			t.Errorf("tools/%s: VERSION %q is not a Go module version", e.Name(), v)
		}
	}
}
