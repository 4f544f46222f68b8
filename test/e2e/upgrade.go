package e2e

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"

	"github.com/kiso-dev/kiso/internal/layout"
)

// upgradeScenario is the scenario that checks the upgrade from the last release: the run installs that release
// first, onboards organizations with running nodes on it, and upgrades to this tree before the scenarios start.
const upgradeScenario = "TestAnUpgradeFromTheLastReleaseReplacesNoNode"

// upgradeSelected reports whether go test's -run selects the upgrade scenario (a run of the whole suite does); a
// run of other scenarios installs this tree directly.
func upgradeSelected() bool {
	f := flag.Lookup("test.run")
	if f == nil || f.Value.String() == "" {
		return true
	}
	top, _, _ := strings.Cut(f.Value.String(), "/")
	re, err := regexp.Compile(top)
	return err == nil && re.MatchString(upgradeScenario)
}

// A packageSet is one build of kiso's packages: the tree it was built from, where, and at which version.
type packageSet struct {
	Source        string
	Dir           string
	Version       string
	Functions     []kisoFunction
	Configuration string
}

// packages is the package set of this tree.
func (p *prepared) packages() packageSet {
	return packageSet{Source: p.RepoRoot, Dir: p.PackageDir, Version: packageVersion, Functions: p.Functions, Configuration: p.Configuration}
}

// A release is the last release's packages, built from its commit as a user upgrading from it ran it.
type release struct {
	packageSet
	Commit string
}

// buildLastRelease extracts the last release's tree (CHANGELOG's newest dated version) from the git history into
// dir and builds its packages there at its version.
func buildLastRelease(ctx context.Context, repoRoot, dir string) (*release, error) {
	version, commit, err := layout.LastRelease(ctx, repoRoot)
	if err != nil {
		return nil, err
	}
	src := filepath.Join(dir, "src")
	if err := layout.ExtractCommit(ctx, repoRoot, commit, src); err != nil {
		return nil, err
	}
	out, err := releasePackagesDir(ctx, repoRoot, src, version, commit)
	if err != nil {
		return nil, err
	}
	fns, configuration, err := builtPackages(src, out)
	if err != nil {
		return nil, err
	}
	return &release{packageSet: packageSet{Source: src, Dir: out, Version: version, Functions: fns, Configuration: configuration}, Commit: commit}, nil
}

// releasePackagesDir returns the directory of the release's packages, built from its tree src once per machine:
// they depend only on its commit, the Go toolchain and the platform, so they are kept in the machine's cache
// (hack/cache.sh) under those, as the tools are. A run on a warm cache builds nothing of the release; what
// would take a build a few seconds on a quiet machine takes it half a minute beside make verify.
func releasePackagesDir(ctx context.Context, repoRoot, src, version, commit string) (string, error) {
	out, err := runCommand(ctx, nil, nil, "bash", "-c", `. "$1/hack/cache.sh" && hack_cache_dir "$1"`, "cache-dir", repoRoot)
	if err != nil {
		return "", err
	}
	key := strings.Join([]string{"release", version, commit, runtime.Version(), runtime.GOOS, runtime.GOARCH}, "-")
	cacheDir := strings.TrimSpace(string(out))
	cached := filepath.Join(cacheDir, key)
	if _, err := os.Stat(cached); err == nil {
		return cached, nil
	}
	if err := os.MkdirAll(cacheDir, 0o750); err != nil {
		return "", fmt.Errorf("cannot make the cache directory: %w", err)
	}
	// Built beside the cache entry and renamed into it whole: a run that stops midway leaves no entry, and two runs
	// building at once each rename a complete one.
	building, err := os.MkdirTemp(filepath.Dir(cached), key+".building-")
	if err != nil {
		return "", fmt.Errorf("cannot make the release's cache entry: %w", err)
	}
	defer func() { _ = os.RemoveAll(building) }()
	if _, _, err := buildPackages(ctx, src, building, version); err != nil {
		return "", err
	}
	if err := os.Rename(building, cached); err != nil && !errors.Is(err, os.ErrExist) {
		if _, statErr := os.Stat(cached); statErr != nil {
			return "", fmt.Errorf("cannot keep the release's packages in the cache: %w", err)
		}
	}
	return cached, nil
}

// An upgradeRecord is what the upgrade from the last release observed, for the upgrade scenario to judge.
type upgradeRecord struct {
	From string
	// Err is why the upgrade could not be observed to its end (the scenario fails with it); the rest holds
	// what was observed until then.
	Err error
	// Organizations are the claims onboarded on the release, as namespace/name.
	Organizations []string
	// Before and After are the fleet's pools and nodes before the upgrade and once this tree's functions had
	// rendered every organization and the cluster, and applied what they rendered.
	Before, After fleetSnapshot
}

// A fleetSnapshot is what replaces a node if it changes: each pool's node template and NodeClass spec, and the
// NodeClaims and pods that run on them.
type fleetSnapshot struct {
	Templates   map[string]string // NodePool -> its spec.template, as JSON
	NodeClasses map[string]string // NodeClass -> its spec, as JSON
	NodeClaims  map[string]string // NodeClaim -> its node
	Drifted     []string          // NodeClaims Karpenter says are drifted
	Pods        map[string]string // namespace/pod -> its node
}
