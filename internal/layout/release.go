package layout

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// changelogRelease matches a dated version heading of CHANGELOG.md: "## v1.2.3 (2026-12-05)".
var changelogRelease = regexp.MustCompile(`(?m)^## (v\d+\.\d+\.\d+) \(\d{4}-\d{2}-\d{2}\)`)

// NewestDatedVersion is the newest version CHANGELOG's text dates, or "" if it dates none.
func NewestDatedVersion(changelog []byte) string {
	m := changelogRelease.FindSubmatch(changelog)
	if m == nil {
		return ""
	}
	return string(m[1])
}

// LastRelease is the newest dated version in the repository's CHANGELOG.md and the commit that released it: its
// tag, else the commit that dated it there (a release commit is tagged after it lands). Both the upgrade check
// and the end-to-end upgrade build it from the git history, as a user upgrading from it would have run it.
func LastRelease(ctx context.Context, root string) (version, commit string, err error) {
	text, err := os.ReadFile(filepath.Join(root, "CHANGELOG.md"))
	if err != nil {
		return "", "", fmt.Errorf("cannot read CHANGELOG.md: %w", err)
	}
	version = NewestDatedVersion(text)
	if version == "" {
		return "", "", fmt.Errorf("CHANGELOG.md dates no release")
	}
	if out, err := git(ctx, root, "rev-parse", "--verify", "--quiet", version+"^{commit}"); err == nil {
		return version, strings.TrimSpace(string(out)), nil
	}
	out, err := git(ctx, root, "log", "--reverse", "--format=%H", "-G", "^## "+regexp.QuoteMeta(version)+` \(`, "--", "CHANGELOG.md")
	if err != nil {
		return "", "", err
	}
	commits := strings.Fields(string(out))
	if len(commits) == 0 {
		return "", "", fmt.Errorf("no tag %s and no commit dating it in CHANGELOG.md: building the last release needs the repository's history (a full clone)", version)
	}
	return version, commits[0], nil
}

// ExtractCommit writes the tree of a commit of the repository at root into dir.
func ExtractCommit(ctx context.Context, root, commit, dir string) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("cannot create %s: %w", dir, err)
	}
	archive := exec.CommandContext(ctx, "git", "archive", "--format=tar", commit)
	archive.Dir = root
	untar := exec.CommandContext(ctx, "tar", "-x", "-C", dir)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		return fmt.Errorf("cannot extract %s: %w", commit, err)
	}
	untar.Stdin = pipe
	untar.Stderr = os.Stderr
	archive.Stderr = os.Stderr
	if err := untar.Start(); err != nil {
		return fmt.Errorf("cannot extract %s: %w", commit, err)
	}
	if err := archive.Run(); err != nil {
		return fmt.Errorf("cannot extract %s (building the last release needs the repository's history): %w", commit, err)
	}
	if err := untar.Wait(); err != nil {
		return fmt.Errorf("cannot extract %s: %w", commit, err)
	}
	return nil
}

func git(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
