package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A command block is a ```sh block of README.md or docs/*.md, with the marker on the line before its fence.
type commandBlock struct {
	doc    string // the page, relative to the repository's root: README.md, docs/install.md
	line   int    // the fence's line
	marker string // the HTML comment before the fence, without <!-- and -->; "" if there is none
	text   string // the commands
}

// runByMarker names the Go function that runs a block: `<!-- run by TestX -->`, optionally followed by what it
// does with it after a colon or a space.
var runByMarker = regexp.MustCompile(`^run by ([A-Za-z_][A-Za-z0-9_]*)(?:[ :].*)?$`)

// notRunMarker says why a block cannot run on a machine without AWS credentials or internet access.
var notRunMarker = regexp.MustCompile(`^not run here: (\S.*)$`)

// needsAWSOrInternet is what a block marked as not run here must do: call AWS, pull a chart from a public
// registry, wait for an object that only provider-aws reaching AWS makes Ready, or push to a registry the reader
// names.
var needsAWSOrInternet = regexp.MustCompile(`(?m)^aws |oci://public\.ecr\.aws/|kubectl wait xkarpentercluster |make push REGISTRY=<`)

// ciCommand is the one command a block marked as run by CI may hold: a make target.
var ciCommand = regexp.MustCompile(`^make ([a-z][a-z0-9-]*)\b`)

// TestEveryCommandBlockIsRunOrSaysWhyNot: every sh block a reader copies from README.md or docs/ says, in a
// marker the reader sees, which test runs it (a function that exists and whose file reads that page, so renaming
// either breaks this test), or why nothing here can run it (it needs AWS or a public registry). Without this, a
// command could drift from what the code does and nobody would notice until a reader ran it.
func TestEveryCommandBlockIsRunOrSaysWhyNot(t *testing.T) {
	root := filepath.Join("..", "..")
	blocks := commandBlocks(t, root)
	if len(blocks) < 10 {
		t.Fatalf("found only %d sh blocks in README.md and docs/*.md; the pattern no longer matches how they are written", len(blocks))
	}
	funcs := goFunctions(t, root)
	for _, b := range blocks {
		where := fmt.Sprintf("%s:%d", b.doc, b.line)
		if m := runByMarker.FindStringSubmatch(b.marker); m != nil {
			checkRunBy(t, root, where, b, m[1], funcs)
			continue
		}
		if m := notRunMarker.FindStringSubmatch(b.marker); m != nil {
			if !needsAWSOrInternet.MatchString(b.text) {
				t.Errorf("%s is marked %q, but none of its commands needs AWS or a public registry: run it in a test", where, b.marker)
			}
			continue
		}
		t.Errorf("%s: a sh block needs a marker on the line before its fence: <!-- run by TestX --> naming the test that "+
			"runs it, or <!-- not run here: why --> if it needs AWS or a public registry (found %q)", where, b.marker)
	}
}

// checkRunBy holds a run-by marker to a function declared once in the repository, in a file that names the page.
func checkRunBy(t *testing.T, root, where string, b commandBlock, name string, funcs map[string][]string) {
	t.Helper()
	if name == "CI" {
		checkRunByCI(t, root, where, b)
		return
	}
	files := funcs[name]
	if len(files) != 1 {
		t.Errorf("%s is run by %s, which is declared in %d Go files of the repository (%v); want one", where, name, len(files), files)
		return
	}
	if !strings.Contains(readT(t, files[0]), `"`+b.doc+`"`) {
		t.Errorf("%s is run by %s, but %s, which declares it, never names %q", where, name, rel(root, files[0]), b.doc)
	}
}

// checkRunByCI holds a block marked as run by CI to make targets the Makefile defines, CI running make test.
func checkRunByCI(t *testing.T, root, where string, b commandBlock) {
	t.Helper()
	if !strings.Contains(readT(t, filepath.Join(root, ".github", "workflows", "ci.yml")), "run: make test\n") {
		t.Errorf("%s is run by CI, but .github/workflows/ci.yml no longer runs make test", where)
	}
	makefile := readT(t, filepath.Join(root, "Makefile"))
	for _, line := range commands(b.text) {
		m := ciCommand.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("%s is run by CI, but holds %q, which is no make target", where, line)
			continue
		}
		if !strings.Contains(makefile, "\n"+m[1]+":") {
			t.Errorf("%s is run by CI, but the Makefile defines no target %s", where, m[1])
		}
	}
}

// commandBlocks reads every sh block of README.md and docs/*.md.
func commandBlocks(t *testing.T, root string) []commandBlock {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append([]string{filepath.Join(root, "README.md")}, pages...)
	var blocks []commandBlock
	for _, page := range pages {
		blocks = append(blocks, pageBlocks(t, rel(root, page), readT(t, page))...)
	}
	return blocks
}

// pageBlocks reads one page's sh blocks.
func pageBlocks(t *testing.T, doc, text string) []commandBlock {
	t.Helper()
	lines := strings.Split(text, "\n")
	var blocks []commandBlock
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "```sh" {
			continue
		}
		b := commandBlock{doc: doc, line: i + 1}
		if i > 0 {
			prev := strings.TrimSpace(lines[i-1])
			if inner, ok := strings.CutPrefix(prev, "<!--"); ok {
				inner, closed := strings.CutSuffix(inner, "-->")
				if closed {
					b.marker = strings.TrimSpace(inner)
				}
			}
		}
		end := i + 1
		for end < len(lines) && strings.TrimSpace(lines[end]) != "```" {
			end++
		}
		if end == len(lines) {
			t.Fatalf("%s:%d: a sh block is never closed", doc, i+1)
		}
		b.text = strings.Join(lines[i+1:end], "\n") + "\n"
		blocks = append(blocks, b)
		i = end
	}
	return blocks
}

// commands returns a block's command lines: comments and blank lines dropped, continued lines joined.
func commands(text string) []string {
	var out []string
	var cur strings.Builder
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\n")
		if cur.Len() == 0 && (strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#")) {
			continue
		}
		if continued, ok := strings.CutSuffix(line, "\\"); ok {
			cur.WriteString(continued)
			continue
		}
		cur.WriteString(line)
		out = append(out, strings.TrimSpace(cur.String()))
		cur.Reset()
	}
	return out
}

// goFunction matches the declaration of a top-level function or a method.
var goFunction = regexp.MustCompile(`(?m)^func (?:\([^)]*\) )?([A-Za-z_][A-Za-z0-9_]*)[[(]`)

// goFunctions maps every top-level function of the repository's Go files to the files declaring it.
func goFunctions(t *testing.T, root string) map[string][]string {
	t.Helper()
	funcs := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "_output" || (strings.HasPrefix(d.Name(), ".") && path != root)) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		for _, m := range goFunction.FindAllStringSubmatch(readT(t, path), -1) {
			funcs[m[1]] = append(funcs[m[1]], path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return funcs
}

// TestCommandBlockMarkers holds the reading of markers to how pages write them.
func TestCommandBlockMarkers(t *testing.T) {
	page := "text\n\n<!-- run by TestDemo: its step X -->\n```sh\nkubectl get a \\\n  -A   # all\n# note\n```\n\n```sh\nmake demo\n```\n"
	blocks := pageBlocks(t, "docs/x.md", page)
	if len(blocks) != 2 {
		t.Fatalf("read %d blocks, want 2", len(blocks))
	}
	if m := runByMarker.FindStringSubmatch(blocks[0].marker); m == nil || m[1] != "TestDemo" {
		t.Errorf("first block's marker %q: want it run by TestDemo", blocks[0].marker)
	}
	if got := commands(blocks[0].text); len(got) != 1 || got[0] != "kubectl get a   -A   # all" {
		t.Errorf("commands(%q) = %q", blocks[0].text, got)
	}
	if blocks[1].marker != "" || blocks[1].line != 10 {
		t.Errorf("second block: marker %q at line %d, want none at line 10", blocks[1].marker, blocks[1].line)
	}
	if notRunMarker.MatchString("not run here: ") {
		t.Error("a not-run marker without a reason is accepted")
	}
}
