package layout

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestModuleDirFindsEachModuleOfCRDsEnv: every module hack/crds.env lists is where ModuleDir says, with the CRD
// files it names; Karpenter's needs a newer Go than the project's, which go mod download reports as an error.
func TestModuleDirFindsEachModuleOfCRDsEnv(t *testing.T) {
	sources, err := CRDSources(root)
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range sources {
		dir, err := ModuleDir(t.Context(), s.ModuleVersion())
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(s.Files[0]))); err != nil {
			t.Errorf("%s: ModuleDir(%s) = %s, without %s: %v", name, s.ModuleVersion(), dir, s.Files[0], err)
		}
	}
}

// TestModuleDirNamesAVersionNotServed: a version that does not exist is an error naming it, not a folder.
func TestModuleDirNamesAVersionNotServed(t *testing.T) {
	const missing = "golang.org/x/mod@v0.0.0-no-such-version"
	dir, err := ModuleDir(t.Context(), missing)
	if err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("ModuleDir(%s) = %q, %v; want an error naming it", missing, dir, err)
	}
}
