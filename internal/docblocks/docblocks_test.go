package docblocks

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadTakesEachBlockWithItsMarker(t *testing.T) {
	page := "text\n\n<!-- run by TestDemo: its step X -->\n```sh\nkubectl get a \\\n  -A   # all\n# note\n```\n\n```sh\nmake demo\n```\n"
	got, err := Read("docs/x.md", page)
	if err != nil {
		t.Fatal(err)
	}
	want := []Block{
		{Page: "docs/x.md", Line: 4, Marker: "run by TestDemo: its step X", Text: "kubectl get a \\\n  -A   # all\n# note\n"},
		{Page: "docs/x.md", Line: 10, Text: "make demo\n"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Read (-want +got):\n%s", diff)
	}
	if _, err := Read("docs/x.md", "```sh\nmake demo\n"); err == nil || !strings.Contains(err.Error(), "docs/x.md:1") {
		t.Errorf("an unclosed block: got %v, want an error naming docs/x.md:1", err)
	}
}

func TestCommandsReadsAsAShellDoes(t *testing.T) {
	block := "# set up\n\nkubectl get a \\\n  -A   # all\nfor ns in a b; do echo \"$ns # not a comment\"; done\necho a#b 'c #d' # e\n#only\n"
	want := []string{
		"kubectl get a   -A",
		`for ns in a b; do echo "$ns # not a comment"; done`,
		"echo a#b 'c #d'",
	}
	if diff := cmp.Diff(want, Commands(block)); diff != "" {
		t.Errorf("Commands (-want +got):\n%s", diff)
	}
}

func TestHoldingWantsExactlyOne(t *testing.T) {
	blocks := []Block{{Text: "make demo\n"}, {Text: "make test\n"}, {Text: "make test-e2e\n"}}
	if b, err := Holding(blocks, "make demo"); err != nil || b.Text != "make demo\n" {
		t.Errorf("Holding make demo: %+v, %v", b, err)
	}
	if _, err := Holding(blocks, "make test"); err == nil {
		t.Error("two blocks hold make test, and Holding chose one")
	}
	if _, err := Holding(blocks, "kubectl"); err == nil {
		t.Error("no block holds kubectl, and Holding returned one")
	}
}

// FuzzCommands: whatever a block holds, each command is what a shell would run: never empty, never a comment,
// never a line left continued, and never carrying a comment outside quotes.
func FuzzCommands(f *testing.F) {
	f.Add("kubectl get a \\\n  -A   # all\n")
	f.Add("echo 'a # b' \"c\" # d\n")
	f.Add("#x\n\n \\\n#y\n")
	f.Fuzz(func(t *testing.T, block string) {
		for _, c := range Commands(block) {
			switch {
			case c == "" || c != strings.TrimSpace(c):
				t.Errorf("command %q is empty or untrimmed", c)
			case strings.HasPrefix(c, "#"):
				t.Errorf("command %q is a comment", c)
			case strings.Contains(c, "\n"):
				t.Errorf("command %q spans lines", c)
			case withoutComment(c) != c:
				t.Errorf("command %q still carries a comment", c)
			}
		}
	})
}

// FuzzRead: every block Read finds starts at a ```sh fence on the line it names, and its text is the lines up to
// the next fence.
func FuzzRead(f *testing.F) {
	f.Add("a\n<!-- run by X -->\n```sh\nmake demo\n```\n")
	f.Add("```sh\n```\n```sh\nx\n```")
	f.Fuzz(func(t *testing.T, page string) {
		blocks, err := Read("p.md", page)
		if err != nil {
			return
		}
		lines := strings.Split(page, "\n")
		for _, b := range blocks {
			if b.Line < 1 || b.Line > len(lines) || strings.TrimSpace(lines[b.Line-1]) != "```sh" {
				t.Fatalf("block at line %d does not start at a ```sh fence", b.Line)
			}
			rest := strings.Join(lines[b.Line:], "\n")
			if !strings.HasPrefix(rest, b.Text) {
				t.Fatalf("block at line %d: text %q is not what follows its fence", b.Line, b.Text)
			}
			for line := range strings.Lines(b.Text) {
				if strings.TrimSpace(line) == "```" {
					t.Fatalf("block at line %d runs past its closing fence", b.Line)
				}
			}
		}
	})
}
