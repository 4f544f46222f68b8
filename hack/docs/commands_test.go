package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kiso-dev/kiso/internal/docblocks"
)

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
	blocks, err := docblocks.Pages(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) < 10 {
		t.Fatalf("found only %d sh blocks in README.md and docs/*.md; the pattern no longer matches how they are written", len(blocks))
	}
	funcs := goFunctions(t, root)
	for _, b := range blocks {
		where := b.Where()
		if m := runByMarker.FindStringSubmatch(b.Marker); m != nil {
			checkRunBy(t, root, where, b, m[1], funcs)
			continue
		}
		if m := notRunMarker.FindStringSubmatch(b.Marker); m != nil {
			if !needsAWSOrInternet.MatchString(b.Text) {
				t.Errorf("%s is marked %q, but none of its commands needs AWS or a public registry: run it in a test", where, b.Marker)
			}
			continue
		}
		t.Errorf("%s: a sh block needs a marker on the line before its fence: <!-- run by TestX --> naming the test that "+
			"runs it, or <!-- not run here: why --> if it needs AWS or a public registry (found %q)", where, b.Marker)
	}
}

// checkRunBy holds a run-by marker to a function declared once in the repository, in a file that names the page.
func checkRunBy(t *testing.T, root, where string, b docblocks.Block, name string, funcs map[string][]string) {
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
	if !strings.Contains(readT(t, files[0]), `"`+b.Page+`"`) {
		t.Errorf("%s is run by %s, but %s, which declares it, never names %q", where, name, rel(root, files[0]), b.Page)
	}
}

// checkRunByCI holds a block marked as run by CI to make targets the Makefile defines, CI running make test.
func checkRunByCI(t *testing.T, root, where string, b docblocks.Block) {
	t.Helper()
	if !strings.Contains(readT(t, filepath.Join(root, ".github", "workflows", "ci.yml")), "run: make test\n") {
		t.Errorf("%s is run by CI, but .github/workflows/ci.yml no longer runs make test", where)
	}
	makefile := readT(t, filepath.Join(root, "Makefile"))
	for _, line := range docblocks.Commands(b.Text) {
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

// TestCommandBlockMarkers holds the markers to how pages write them.
func TestCommandBlockMarkers(t *testing.T) {
	for marker, runBy := range map[string]string{
		"run by TestDemo":             "TestDemo",
		"run by TestDemo: its step X": "TestDemo",
		"run by CI":                   "CI",
		"run by TestDemo's step":      "",
		"run by":                      "",
		"not run here: it calls AWS":  "",
	} {
		got := ""
		if m := runByMarker.FindStringSubmatch(marker); m != nil {
			got = m[1]
		}
		if got != runBy {
			t.Errorf("%q is read as run by %q, want %q", marker, got, runBy)
		}
	}
	if notRunMarker.MatchString("not run here: ") {
		t.Error("a not-run marker without a reason is accepted")
	}
}
