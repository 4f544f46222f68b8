package names

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestJoin(t *testing.T) {
	long := strings.Repeat("a", 40)
	cases := map[string]struct {
		reason string
		parts  []string
		want   string
	}{
		"ShortNameKept": {
			reason: "A name within the limit is the parts joined, unchanged.",
			parts:  []string{"kiso", "acme", "web"},
			want:   "kiso-acme-web",
		},
		"ExactlyAtLimitKept": {
			reason: "A name of exactly 63 characters is not shortened.",
			parts:  []string{"kiso", strings.Repeat("b", 58)},
			want:   "kiso-" + strings.Repeat("b", 58),
		},
		"LongNameHashed": {
			reason: "A longer name is cut and given a stable hash suffix.",
			parts:  []string{"kiso", long, long},
			want:   "kiso-" + strings.Repeat("a", 40) + "-" + strings.Repeat("a", 8) + "-dc88f44a",
		},
		"NoDashBeforeHash": {
			reason: "A cut that ends in a dash does not leave a double dash before the hash.",
			parts:  []string{"kiso", strings.Repeat("c", 48), "d", long},
			want:   "kiso-" + strings.Repeat("c", 48) + "-87d3d140",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Join(MaxLabelValue, tc.parts...)
			if got != tc.want {
				t.Errorf("%s\nJoin(...): want %q, got %q", tc.reason, tc.want, got)
			}
			if len(got) > MaxLabelValue {
				t.Errorf("Join(...): %d characters, more than %d", len(got), MaxLabelValue)
			}
			if errs := validation.IsDNS1123Label(got); len(errs) > 0 {
				t.Errorf("Join(...) = %q is not a DNS-1123 label: %v", got, errs)
			}
		})
	}
}

func TestJoinDistinguishesLongNames(t *testing.T) {
	prefix := strings.Repeat("x", 70)
	a, b := Join(MaxLabelValue, "kiso", prefix+"1"), Join(MaxLabelValue, "kiso", prefix+"2")
	if a == b {
		t.Errorf("two long names that differ only after the cut both became %q", a)
	}
}
