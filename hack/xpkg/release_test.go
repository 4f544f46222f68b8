package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/mod/semver"
	"sigs.k8s.io/yaml"
)

// changelogVersion matches a release's heading in CHANGELOG.md: "## v1.2.3 (2026-12-05)" once released,
// "## Unreleased: v1.2.3" while it is being made.
var changelogVersion = regexp.MustCompile(`(?m)^## (?:(Unreleased): (v\S+)|(v\S+) \((\d{4}-\d{2}-\d{2})\))$`)

// A changelogRelease is one release's heading.
type changelogRelease struct {
	version  string
	released bool
}

func changelogReleases(t *testing.T, text string) []changelogRelease {
	t.Helper()
	var releases []changelogRelease
	for _, m := range changelogVersion.FindAllStringSubmatch(text, -1) {
		r := changelogRelease{version: m[2], released: m[1] == ""}
		if r.released {
			r.version = m[3]
		}
		if !semver.IsValid(r.version) || semver.Canonical(r.version) != r.version {
			t.Errorf("CHANGELOG.md: %q is not a full semantic version (v1.2.3)", r.version)
		}
		releases = append(releases, r)
	}
	return releases
}

// TestTheInstallNamesTheNewestRelease keeps a release consistent: CHANGELOG.md lists versions newest first, at
// most the newest unreleased; the install's Configuration is the newest *released* version (dated in
// CHANGELOG.md), so a platform following main's README installs a package a tag published, never one only main
// has; releasing dates the version and moves the install to it in one commit; and a commit tagged vX.Y.Z (what
// publishes the packages) has vX.Y.Z released, with its date, at the top of CHANGELOG.md.
func TestTheInstallNamesTheNewestRelease(t *testing.T) {
	root := filepath.Join("..", "..")
	changelog, err := os.ReadFile(filepath.Join(root, "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	releases := changelogReleases(t, string(changelog))
	if len(releases) == 0 {
		t.Fatal("CHANGELOG.md names no release (## vX.Y.Z (date) or ## Unreleased: vX.Y.Z)")
	}
	for i, r := range releases {
		if i > 0 && !r.released {
			t.Errorf("CHANGELOG.md: %s is unreleased below a newer version; only the newest may be", r.version)
		}
		if i > 0 && semver.Compare(releases[i-1].version, r.version) <= 0 {
			t.Errorf("CHANGELOG.md: %s is listed above %s; newest first", releases[i-1].version, r.version)
		}
	}
	newest := releases[0]

	var configuration struct {
		Spec struct {
			Package string `json:"package"`
		} `json:"spec"`
	}
	install, err := os.ReadFile(filepath.Join(root, "examples", "install", "configuration.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(install, &configuration); err != nil {
		t.Fatal(err)
	}
	var released string
	for _, r := range releases {
		if r.released {
			released = r.version
			break
		}
	}
	if _, tag, _ := strings.Cut(configuration.Spec.Package, ":"); released == "" || tag != released {
		t.Errorf("examples/install/configuration.yaml installs %s, want the newest released (dated) version in CHANGELOG.md, %q", configuration.Spec.Package, released)
	}

	// A clone without git history (an exported tarball) has no tags to check.
	out, err := exec.CommandContext(t.Context(), "git", "-C", root, "tag", "--points-at", "HEAD", "--list", "v*").Output()
	if err != nil {
		t.Logf("cannot list the tags of HEAD (%v); the tag rule is not checked", err)
		return
	}
	for tag := range strings.FieldsSeq(string(out)) {
		if tag != newest.version || !newest.released {
			t.Errorf("HEAD is tagged %s, but the top of CHANGELOG.md is %+v: release %s there, with its date, before tagging", tag, newest, tag)
		}
	}
}

// TestTheReleaseSignsAndDescribesWhatItPushes: the release workflow (not run here: it needs GitHub's OIDC token,
// ghcr.io and a GitHub release) may mint the OIDC token cosign signs with and write the tag's release; after make
// push, one step signs, describes (syft) and attests every package in the list push writes, read from where push
// writes it by default, and attaches the SBOMs to the release.
func TestTheReleaseSignsAndDescribesWhatItPushes(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", ".github", "workflows", "release.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var workflow struct {
		Permissions map[string]string `json:"permissions"`
		Jobs        map[string]struct {
			Steps []struct {
				Uses string `json:"uses"`
				Run  string `json:"run"`
			} `json:"steps"`
		} `json:"jobs"`
	}
	if err := yaml.Unmarshal(raw, &workflow); err != nil {
		t.Fatal(err)
	}
	for permission, want := range map[string]string{"id-token": "write", "contents": "write", "packages": "write"} {
		if got := workflow.Permissions[permission]; got != want {
			t.Errorf("release.yml: permissions.%s is %q, want %q", permission, got, want)
		}
	}
	// Where push writes the list unless told otherwise: the default of its --output flag.
	output, _ := reflect.TypeFor[cli]().FieldByName("Output")
	list := output.Tag.Get("default") + "/" + pushedList
	pushedAt, signedAt := -1, -1
	var uses []string
	for i, step := range workflow.Jobs["release"].Steps {
		uses = append(uses, step.Uses)
		switch {
		case strings.Contains(step.Run, "make push"):
			pushedAt = i
		case strings.Contains(step.Run, list):
			signedAt = i
			for _, want := range []string{"cosign sign --yes", "syft ", "cosign attest --yes --type spdxjson", "gh release create", "gh release upload"} {
				if !strings.Contains(step.Run, want) {
					t.Errorf("release.yml: the step that reads %s does not run %q", list, want)
				}
			}
		}
	}
	if pushedAt < 0 || signedAt < pushedAt {
		t.Errorf("release.yml: want make push, then a step that reads %s (make push at step %d, the list read at step %d)", list, pushedAt, signedAt)
	}
	for _, action := range []string{"sigstore/cosign-installer@", "anchore/sbom-action/download-syft@"} {
		if !slices.ContainsFunc(uses, func(u string) bool { return strings.HasPrefix(u, action) }) {
			t.Errorf("release.yml installs no %s", strings.TrimSuffix(action, "@"))
		}
	}
}
