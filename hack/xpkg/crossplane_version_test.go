package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"
	"sigs.k8s.io/yaml"
)

// oldestCrossplane is the oldest Crossplane kiso's design holds on: v2.4 watches the resources a function
// requires, so a change to one reaches a settled organization at once, not at its hour-long TTL.
const oldestCrossplane = "v2.4.0"

// TestEveryPackageRequiresTheCrossplaneKisoReliesOn: Crossplane refuses to install a package whose
// spec.crossplane.version its own version does not satisfy, so the floor is enforced where a platform installs
// kiso. Every package must refuse v2.3 and accept v2.4.0 and the core the end-to-end suite runs.
func TestEveryPackageRequiresTheCrossplaneKisoReliesOn(t *testing.T) {
	inRepositoryRoot(t)
	env, err := os.ReadFile(filepath.Join("tools", "crossplane-core", "build.env"))
	if err != nil {
		t.Fatal(err)
	}
	var tested string
	for _, line := range strings.Split(string(env), "\n") {
		if v, ok := strings.CutPrefix(line, "VERSION="); ok {
			tested = v
		}
	}
	files, err := filepath.Glob(filepath.Join("package", "*", "crossplane.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	fns, err := filepath.Glob(filepath.Join("package", "functions", "*", "crossplane.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, fns...)
	if len(files) < 3 {
		t.Fatalf("found %v: want the Configuration's and each function's metadata", files)
	}
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var meta struct {
			Spec struct {
				Crossplane struct {
					Version string `json:"version"`
				} `json:"crossplane"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(raw, &meta); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		c, err := semver.NewConstraint(meta.Spec.Crossplane.Version)
		if err != nil {
			t.Fatalf("%s: spec.crossplane.version %q: %v", file, meta.Spec.Crossplane.Version, err)
		}
		for version, want := range map[string]bool{"v2.3.2": false, "v2.0.0": false, oldestCrossplane: true, tested: true} {
			if got := c.Check(semver.MustParse(version)); got != want {
				t.Errorf("%s: spec.crossplane.version %q accepts Crossplane %s: %t, want %t", file, meta.Spec.Crossplane.Version, version, got, want)
			}
		}
	}
}
