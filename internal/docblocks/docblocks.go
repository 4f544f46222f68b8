// Package docblocks reads the shell blocks a reader copies from kiso's pages (README.md, docs/*.md) and the
// commands in them. The docs test holds every block to a marker saying what runs it, and the end-to-end suite
// runs the blocks themselves; both read them here, so a page is parsed one way.
package docblocks

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// A Block is one ```sh block of a page, with the marker on the line before its fence.
type Block struct {
	Page   string // the page, relative to the repository's root: README.md, docs/install.md
	Line   int    // the fence's line, counted from 1
	Marker string // the HTML comment before the fence, without <!-- and -->; "" if there is none
	Text   string // the block's lines, each ending in a newline
}

// Where names the block as an editor jumps to it: docs/install.md:42.
func (b Block) Where() string {
	return fmt.Sprintf("%s:%d", b.Page, b.Line)
}

// Pages reads the blocks of README.md and every docs/*.md under root, README.md first.
func Pages(root string) ([]Block, error) {
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	var blocks []Block
	for _, page := range append([]string{"README.md"}, relative(root, pages)...) {
		found, err := File(root, page)
		if err != nil {
			return nil, err
		}
		blocks = append(blocks, found...)
	}
	return blocks, nil
}

// File reads the blocks of one page, named relative to root with forward slashes.
func File(root, page string) ([]Block, error) {
	text, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(page)))
	if err != nil {
		return nil, err
	}
	return Read(page, string(text))
}

// Read returns the sh blocks of a page's text, in order.
func Read(page, text string) ([]Block, error) {
	lines := strings.Split(text, "\n")
	var blocks []Block
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "```sh" {
			continue
		}
		b := Block{Page: page, Line: i + 1}
		if i > 0 {
			b.Marker = marker(lines[i-1])
		}
		end := i + 1
		for end < len(lines) && strings.TrimSpace(lines[end]) != "```" {
			end++
		}
		if end == len(lines) {
			return nil, fmt.Errorf("%s: a sh block is never closed", b.Where())
		}
		for _, line := range lines[i+1 : end] {
			b.Text += line + "\n"
		}
		blocks = append(blocks, b)
		i = end
	}
	return blocks, nil
}

// Holding returns the one block of blocks whose text holds want, so that a test runs the commands a reader
// copies rather than its own version of them.
func Holding(blocks []Block, want string) (Block, error) {
	var found []Block
	for _, b := range blocks {
		if strings.Contains(b.Text, want) {
			found = append(found, b)
		}
	}
	if len(found) != 1 {
		return Block{}, fmt.Errorf("%d sh blocks hold %q; want one", len(found), want)
	}
	return found[0], nil
}

// marker returns the inside of an HTML comment that is the whole line, trimmed; "" for any other line.
func marker(line string) string {
	inner, opened := strings.CutPrefix(strings.TrimSpace(line), "<!--")
	inner, closed := strings.CutSuffix(inner, "-->")
	if !opened || !closed {
		return ""
	}
	return strings.TrimSpace(inner)
}

// relative names paths under root as a page is named: relative, with forward slashes.
func relative(root string, paths []string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		r, err := filepath.Rel(root, p)
		if err != nil {
			r = p
		}
		out = append(out, filepath.ToSlash(r))
	}
	return out
}
