package monitoring

import (
	"fmt"
	"slices"
	"strings"
)

// PromQL words that are not series: set operators, modifiers and aggregations (an aggregation may be followed by
// by/without before its parenthesis, a function never is).
var (
	promqlGrouping     = []string{"by", "without", "on", "ignoring", "group_left", "group_right"}
	promqlWords        = []string{"and", "or", "unless", "bool", "offset", "inf", "nan", "atan2", "start", "end"}
	promqlAggregations = []string{"sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values", "bottomk", "topk", "quantile", "limitk", "limit_ratio"}
)

// MetricNames returns, sorted and each once, the series names a PromQL expression reads: every identifier that
// is not a function, an aggregation, a keyword, a label name (in matchers and in by/on lists), a number or a
// duration. A Grafana variable ($name, ${name}) reads nothing. It is no parser: it knows what kiso's rules and
// dashboards write, and says so when the brackets do not match.
func MetricNames(expr string) ([]string, error) {
	s := scanner{expr: expr}
	for s.i < len(expr) {
		if err := s.step(); err != nil {
			return nil, err
		}
	}
	slices.Sort(s.names)
	return slices.Compact(s.names), nil
}

// scanner walks an expression, collecting the series names it reads.
type scanner struct {
	expr  string
	i     int
	names []string
}

// step moves past one token.
func (s *scanner) step() error {
	c := s.expr[s.i]
	switch {
	case c == '"' || c == '\'' || c == '`':
		return s.skip(skipString)
	case c == '{' || c == '[':
		return s.skip(skipBrackets)
	case c == '#':
		s.skipWhile(func(c byte) bool { return c != '\n' })
	case c == '$':
		s.i++
		if s.i < len(s.expr) && s.expr[s.i] == '{' {
			return s.skip(skipBrackets)
		}
		s.skipWhile(isIdent)
	case isDigit(c) || (c == '.' && s.i+1 < len(s.expr) && isDigit(s.expr[s.i+1])):
		s.skipWhile(func(c byte) bool { return isIdent(c) || c == '.' })
	case isIdentStart(c):
		return s.word()
	default:
		s.i++
	}
	return nil
}

// word reads an identifier and keeps it if it names a series.
func (s *scanner) word() error {
	start := s.i
	s.skipWhile(isIdent)
	word := s.expr[start:s.i]
	next := s.i
	for next < len(s.expr) && isSpace(s.expr[next]) {
		next++
	}
	opens := next < len(s.expr) && s.expr[next] == '('
	switch {
	case slices.Contains(promqlGrouping, word):
		if opens {
			s.i = next
			return s.skip(skipBrackets)
		}
	case slices.Contains(promqlWords, word), slices.Contains(promqlAggregations, word), opens:
		// A keyword, an aggregation or a function.
	default:
		s.names = append(s.names, word)
	}
	return nil
}

// skip moves past what skipper finds at the current position.
func (s *scanner) skip(skipper func(string, int) (int, error)) error {
	end, err := skipper(s.expr, s.i)
	s.i = end
	return err
}

func (s *scanner) skipWhile(ok func(byte) bool) {
	for s.i < len(s.expr) && ok(s.expr[s.i]) {
		s.i++
	}
}

// skipString returns the index past the string literal starting at i.
func skipString(expr string, i int) (int, error) {
	quote := expr[i]
	for j := i + 1; j < len(expr); j++ {
		switch {
		case expr[j] == '\\' && quote != '`':
			j++
		case expr[j] == quote:
			return j + 1, nil
		}
	}
	return 0, fmt.Errorf("unterminated string in %q", expr)
}

// skipBrackets returns the index past the bracket opened at i and everything it holds.
func skipBrackets(expr string, i int) (int, error) {
	var open []byte
	for j := i; j < len(expr); j++ {
		switch c := expr[j]; c {
		case '"', '\'', '`':
			end, err := skipString(expr, j)
			if err != nil {
				return 0, err
			}
			j = end - 1
		case '(', '[', '{':
			open = append(open, c)
		case ')', ']', '}':
			if len(open) == 0 || open[len(open)-1] != map[byte]byte{')': '(', ']': '[', '}': '{'}[c] {
				return 0, fmt.Errorf("unbalanced %q at %d in %q", c, j, expr)
			}
			open = open[:len(open)-1]
			if len(open) == 0 {
				return j + 1, nil
			}
		}
	}
	return 0, fmt.Errorf("unclosed %q in %q", strings.TrimSpace(string(expr[i])), expr)
}

func isIdentStart(c byte) bool {
	return c == '_' || c == ':' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isIdent(c byte) bool { return isIdentStart(c) || isDigit(c) }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
