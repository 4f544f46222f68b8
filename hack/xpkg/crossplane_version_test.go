package main

import (
	"testing"

	"github.com/Masterminds/semver/v3"
)

// oldestCrossplane is the oldest Crossplane kiso's design holds on: v2.4 watches the resources a function
// requires, so a change to one reaches a settled organization at once, not at its hour-long TTL.
const oldestCrossplane = "v2.4.0"

// TestEveryPackageRequiresTheCrossplaneKisoReliesOn: Crossplane refuses to install a package whose
// spec.crossplane.version its own version does not satisfy, so the floor is enforced where a platform installs
// kiso. Every package must refuse v2.3 and accept v2.4.0 and the core the end-to-end suite runs.
func TestEveryPackageRequiresTheCrossplaneKisoReliesOn(t *testing.T) {
	inRepositoryRoot(t)
	tested := toolVersion(t, "crossplane-core")
	files := packageMetadataFiles(t)
	if len(files) < 3 {
		t.Fatalf("found %v: want the Configuration's and each function's metadata", files)
	}
	for _, file := range files {
		var meta struct {
			Spec struct {
				Crossplane struct {
					Version string `json:"version"`
				} `json:"crossplane"`
			} `json:"spec"`
		}
		readYAML(t, file, &meta)
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
