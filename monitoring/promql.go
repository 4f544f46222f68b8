package monitoring

import (
	"slices"
	"strings"

	"github.com/crossplane/function-sdk-go/errors"
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
	var names []string
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			end, err := skipString(expr, i)
			if err != nil {
				return nil, err
			}
			i = end
		case c == '{' || c == '[':
			end, err := skipBrackets(expr, i)
			if err != nil {
				return nil, err
			}
			i = end
		case c == '#':
			for i < len(expr) && expr[i] != '\n' {
				i++
			}
		case c == '$':
			i++
			if i < len(expr) && expr[i] == '{' {
				end, err := skipBrackets(expr, i)
				if err != nil {
					return nil, err
				}
				i = end
				continue
			}
			for i < len(expr) && isIdent(expr[i]) {
				i++
			}
		case isDigit(c) || (c == '.' && i+1 < len(expr) && isDigit(expr[i+1])):
			for i < len(expr) && (isIdent(expr[i]) || expr[i] == '.') {
				i++
			}
		case isIdentStart(c):
			start := i
			for i < len(expr) && isIdent(expr[i]) {
				i++
			}
			word := expr[start:i]
			next := i
			for next < len(expr) && isSpace(expr[next]) {
				next++
			}
			switch {
			case slices.Contains(promqlGrouping, word):
				if next < len(expr) && expr[next] == '(' {
					end, err := skipBrackets(expr, next)
					if err != nil {
						return nil, err
					}
					i = end
				}
			case slices.Contains(promqlWords, word), slices.Contains(promqlAggregations, word):
			case next < len(expr) && expr[next] == '(':
				// A function.
			default:
				names = append(names, word)
			}
		default:
			i++
		}
	}
	slices.Sort(names)
	return slices.Compact(names), nil
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
	return 0, errors.Errorf("unterminated string in %q", expr)
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
				return 0, errors.Errorf("unbalanced %q at %d in %q", c, j, expr)
			}
			open = open[:len(open)-1]
			if len(open) == 0 {
				return j + 1, nil
			}
		}
	}
	return 0, errors.Errorf("unclosed %q in %q", strings.TrimSpace(string(expr[i])), expr)
}

func isIdentStart(c byte) bool {
	return c == '_' || c == ':' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isIdent(c byte) bool { return isIdentStart(c) || isDigit(c) }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
