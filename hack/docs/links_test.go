// Package docs checks the repository's Markdown: every relative link reaches a file, and every #anchor a heading
// of it, so moving a section between pages cannot leave a reader at a dead link.
package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// link matches a Markdown link's target: [text](target).
var link = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// heading matches an ATX heading's text.
var heading = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *$`)

// TestEveryRelativeLinkResolves reads every Markdown file outside testdata and the output folder.
func TestEveryRelativeLinkResolves(t *testing.T) {
	root := filepath.Join("..", "..")
	files := markdownFiles(t, root)
	if len(files) < 10 {
		t.Fatalf("found only %d Markdown files under %s", len(files), root)
	}
	for _, file := range files {
		text := readT(t, file)
		for _, m := range link.FindAllStringSubmatch(inlineCode.ReplaceAllString(withoutFences(text), ""), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			dest := file
			if path != "" {
				dest = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s links to %s, which does not exist", rel(root, file), target)
					continue
				}
			}
			if anchor == "" || !strings.HasSuffix(dest, ".md") {
				continue
			}
			if !hasAnchor(readT(t, dest), anchor) {
				t.Errorf("%s links to %s, but %s has no heading with that anchor", rel(root, file), target, rel(root, dest))
			}
		}
	}
}

// TestAnchors holds the anchor rule to headings this repository has.
func TestAnchors(t *testing.T) {
	for text, want := range map[string]string{
		"Crossplane needs RBAC for Karpenter's kinds":    "crossplane-needs-rbac-for-karpenters-kinds",
		"Troubleshooting: from a condition to its cause": "troubleshooting-from-a-condition-to-its-cause",
		"Names, paths and taking over an existing setup": "names-paths-and-taking-over-an-existing-setup",
		"`make demo` and the e2e suite":                  "make-demo-and-the-e2e-suite",
	} {
		if got := anchorOf(text); got != want {
			t.Errorf("anchorOf(%q) = %q, want %q", text, got, want)
		}
	}
}

func markdownFiles(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "_output" || d.Name() == "node_modules" || (strings.HasPrefix(d.Name(), ".") && path != root)) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// inlineCode matches a code span, whose brackets are code, not links.
var inlineCode = regexp.MustCompile("`[^`\n]*`")

// withoutFences drops fenced code blocks, whose brackets are code, not links, and whose # are comments.
func withoutFences(text string) string {
	var b strings.Builder
	fenced := false
	for line := range strings.SplitSeq(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func hasAnchor(text, anchor string) bool {
	for _, m := range heading.FindAllStringSubmatch(withoutFences(text), -1) {
		if anchorOf(m[1]) == anchor {
			return true
		}
	}
	return false
}

// anchorOf is the anchor GitHub gives a heading: lower case, letters, digits, hyphens and underscores kept,
// spaces turned into hyphens, everything else dropped.
func anchorOf(text string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

func readT(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func rel(root, path string) string {
	r, err := filepath.Rel(root, path)
	if err != nil {
		return path
	}
	return filepath.ToSlash(r)
}

// makeCommand matches `make target` where the docs tell a reader to run it.
var makeCommand = regexp.MustCompile("(?m)(?:^|`|\\$ )make ([a-z][a-z0-9-]*)")

// makeTarget matches a target the Makefile defines.
var makeTarget = regexp.MustCompile(`(?m)^([a-z][a-z0-9-]*):`)

// TestEveryMakeCommandInTheDocsIsATarget: a `make X` a reader copies from the docs exists, so renaming a target
// cannot leave a page telling readers to run one that is gone.
func TestEveryMakeCommandInTheDocsIsATarget(t *testing.T) {
	root := filepath.Join("..", "..")
	targets := map[string]bool{}
	for _, m := range makeTarget.FindAllStringSubmatch(readT(t, filepath.Join(root, "Makefile")), -1) {
		targets[m[1]] = true
	}
	seen := 0
	for _, file := range markdownFiles(t, root) {
		for _, m := range makeCommand.FindAllStringSubmatch(readT(t, file), -1) {
			seen++
			if !targets[m[1]] {
				t.Errorf("%s tells the reader to run `make %s`, which the Makefile does not define", rel(root, file), m[1])
			}
		}
	}
	if seen < 10 {
		t.Errorf("found only %d make commands in the docs; the pattern no longer matches how they are written", seen)
	}
}
