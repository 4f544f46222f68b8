package fncall

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type (
	visited  []string
	requirer interface{ require(*visited) }
	failer   interface{ fail(*visited) error }
	both     string
	onlyOne  string
)

func (b both) require(v *visited) { *v = append(*v, "require "+string(b)) }
func (b both) fail(v *visited) error {
	*v = append(*v, "fail "+string(b))
	return errors.New(string(b))
}
func (o onlyOne) require(v *visited) { *v = append(*v, "require "+string(o)) }

// TestEachVisitsWhoTakesPartInListOrder: a phase visits only the concerns with its method, in the list's order,
// and a phase that can fail stops at the first failure.
func TestEachVisitsWhoTakesPartInListOrder(t *testing.T) {
	concerns := []any{both("a"), onlyOne("b"), 42, both("c")}
	var got visited
	Each(concerns, func(c requirer) { c.require(&got) })
	err := EachUntil(concerns, func(c failer) error { return c.fail(&got) })
	want := visited{"require a", "require b", "require c", "fail a"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("visits: -want, +got:\n%s", diff)
	}
	if err == nil || err.Error() != "a" {
		t.Errorf("EachUntil returned %v, want the first failure, a", err)
	}
}
