package main

import (
	"regexp"
	"slices"
	"strings"
)

// composedEvent matches the first line of the `Composed resource "X" is not yet ready|valid` Results.
var composedEvent = regexp.MustCompile(`^message: .?Composed resource "`)

// normalize sorts the `Composed resource "X" is not yet ready|valid` Results among themselves, at the place of
// the first one. Crossplane emits them while ranging over a map, so their order changes from run to run; every
// other document keeps its place. Every document comes out ending in a newline.
func normalize(out []byte) []byte {
	type doc struct {
		text  string
		event bool
	}
	var docs []doc
	var cur strings.Builder
	event := false
	flush := func() {
		if cur.Len() > 0 {
			docs = append(docs, doc{text: cur.String(), event: event})
		}
		cur.Reset()
		event = false
	}
	for _, line := range strings.SplitAfter(string(out), "\n") {
		if line == "" {
			continue
		}
		line = strings.TrimSuffix(line, "\n")
		if strings.TrimRight(line, " \t\r\v\f") == "---" {
			flush()
		}
		if composedEvent.MatchString(line) {
			event = true
		}
		cur.WriteString(line + "\n")
	}
	flush()

	var events []string
	for _, d := range docs {
		if d.event {
			events = append(events, d.text)
		}
	}
	// An event sorts by its whole document (long messages are folded over several lines), newlines ordered
	// after tabs and before every printable character.
	key := func(text string) string {
		k, _, _ := strings.Cut(strings.ReplaceAll(strings.TrimSuffix(text, "\n"), "\n", "\x1e"), "\t")
		return k
	}
	slices.SortStableFunc(events, func(a, b string) int { return strings.Compare(key(a), key(b)) })

	var b strings.Builder
	placed := false
	for _, d := range docs {
		switch {
		case !d.event:
			b.WriteString(d.text)
		case !placed:
			for _, e := range events {
				b.WriteString(e)
			}
			placed = true
		}
	}
	return []byte(b.String())
}
