package names

import "testing"

func TestLower(t *testing.T) {
	cases := map[string]struct {
		reason string
		in     string
		want   string
	}{
		"AlreadyLowerIsUnchanged": {
			reason: "A name that is already valid keeps its exact form, with no hash.",
			in:     "prod-eu-1",
			want:   "prod-eu-1",
		},
		"UpperCaseIsLoweredAndHashed": {
			reason: "Lowering loses information, so a hash of the original keeps Prod and prod apart.",
			in:     "Prod",
			want:   "prod-5f56359e",
		},
		"UnderscoreBecomesDash": {
			reason: "Kubernetes names allow no underscore.",
			in:     "prod_eu",
			want:   "prod-eu-c0dc854d",
		},
		"TrailingUnderscoreLeavesNoDoubleDash": {
			reason: "The hash is joined with exactly one dash.",
			in:     "prod_",
			want:   "prod-103fbc18",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Lower(tc.in); got != tc.want {
				t.Errorf("%s\nLower(%q): want %q, got %q", tc.reason, tc.in, tc.want, got)
			}
		})
	}
	if Lower("Prod") == Lower("prod") || Lower("Prod") == Lower("PROD") {
		t.Errorf("names differing only in case must stay different")
	}
}
