package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// renderDocsEnv set to 1 runs the render command of docs/development.md; make examples sets it, as it builds the
// functions and the Crossplane CLI anyway, and go test ./... leaves it to make examples.
const renderDocsEnv = "KISO_RENDER_DOCS"

// developmentPage is the page whose render command the test runs.
const developmentPage = "docs/development.md"

// renderCommandXR is the XR the page's make render renders.
var renderCommandXR = regexp.MustCompile(`\bXR=(\S+)`)

// TestTheDevelopmentPagesRenderCommandRenders runs docs/development.md's `make render XR=...` as a reader would,
// with sh from the repository's root, and holds its output to the example's expected.yaml.
func TestTheDevelopmentPagesRenderCommandRenders(t *testing.T) {
	if os.Getenv(renderDocsEnv) != "1" {
		t.Skip("make examples runs it (" + renderDocsEnv + "=1): it builds the functions and runs the Crossplane CLI")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	block := shBlockHolding(t, filepath.Join(root, filepath.FromSlash(developmentPage)), "make render XR=")
	m := renderCommandXR.FindStringSubmatch(block)
	if m == nil {
		t.Fatalf("docs/development.md's render command names no XR:\n%s", block)
	}
	expected, err := os.ReadFile(filepath.Join(root, filepath.Dir(filepath.FromSlash(m[1])), "expected.yaml"))
	if err != nil {
		t.Fatal(err)
	}

	cmd := exec.CommandContext(t.Context(), "sh", "-c", block)
	cmd.Dir = root
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("docs/development.md's render command failed (%v):\n%s\n%s", err, stdout.String(), stderr.String())
	}
	// make prints the recipe it runs before the render.
	if !bytes.Contains(stdout.Bytes(), expected) {
		t.Errorf("docs/development.md's render command prints\n%s\nwhich does not hold %s's expected.yaml:\n%s", stdout.String(), filepath.Dir(m[1]), expected)
	}
}

// shBlockHolding returns the one sh block of a page that holds want.
func shBlockHolding(t *testing.T, page, want string) string {
	t.Helper()
	text, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, part := range strings.Split(string(text), "```sh\n")[1:] {
		block, _, closed := strings.Cut(part, "```")
		if closed && strings.Contains(block, want) {
			found = append(found, block)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s has %d sh blocks holding %q; want one", page, len(found), want)
	}
	return found[0]
}
