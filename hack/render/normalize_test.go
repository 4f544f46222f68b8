package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNormalize(t *testing.T) {
	cases := map[string]struct {
		reason string
		in     string
		want   string
	}{
		"NoEvents": {
			reason: "Documents without composed-resource events keep their order.",
			in:     "---\nkind: B\n---\nkind: A\n",
			want:   "---\nkind: B\n---\nkind: A\n",
		},
		"EventsSortedAtFirstPlace": {
			reason: "Composed-resource events sort among themselves at the first one's place; other documents stay.",
			in: "---\nkind: XR\n---\nkind: Result\nmessage: 'Composed resource \"z\" is not yet ready'\n" +
				"---\nkind: Pool\n---\nkind: Result\nmessage: 'Composed resource \"a\" is not yet ready'\n---\nkind: Context\n",
			want: "---\nkind: XR\n---\nkind: Result\nmessage: 'Composed resource \"a\" is not yet ready'\n" +
				"---\nkind: Result\nmessage: 'Composed resource \"z\" is not yet ready'\n---\nkind: Pool\n---\nkind: Context\n",
		},
		"FoldedMessageSortsByWholeDocument": {
			reason: "A folded message sorts by its whole document, a newline before any printable character.",
			in:     "---\nmessage: Composed resource \"x\"\n  b\n---\nmessage: Composed resource \"x\"\n  a\n",
			want:   "---\nmessage: Composed resource \"x\"\n  a\n---\nmessage: Composed resource \"x\"\n  b\n",
		},
		"MissingFinalNewline": {
			reason: "Every document comes out ending in a newline.",
			in:     "---\nkind: A",
			want:   "---\nkind: A\n",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, string(normalize([]byte(tc.in)))); diff != "" {
				t.Errorf("%s\nnormalize(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestFailedRender(t *testing.T) {
	got := string(failedRender(1, []byte("crossplane: error: one\ntwo")))
	want := "# crossplane render failed (exit code 1):\n# crossplane: error: one\n# two"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("failedRender(...): -want, +got:\n%s", diff)
	}
}
