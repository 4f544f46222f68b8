package docblocks

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Commands returns a block's commands as a shell reads them: blank lines and comment lines dropped, lines ending
// in a backslash joined to the next, and a comment after a command cut (a # that starts a word outside quotes).
func Commands(text string) []string {
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
		if command := strings.TrimSpace(withoutComment(cur.String())); command != "" {
			out = append(out, command)
		}
		cur.Reset()
	}
	return out
}

// withoutComment cuts a shell comment off a command line: from a # at the start of a word that no quote holds. A
// word starts after any ASCII white space strings.TrimSpace would trim (a vertical tab too), so that a command is never
// left starting with a #.
func withoutComment(line string) string {
	var quote byte
	for i := range len(line) {
		switch c := line[i]; {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '#' && (i == 0 || line[i-1] < utf8.RuneSelf && unicode.IsSpace(rune(line[i-1]))):
			return line[:i]
		}
	}
	return line
}
