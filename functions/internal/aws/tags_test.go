package aws

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestValidate(t *testing.T) {
	path := field.NewPath("spec", "tags")
	cases := map[string]struct {
		reason string
		tags   map[string]string
		want   []string
	}{
		"ValidTagsPass": {
			reason: "Ordinary cost tags, with spaces and punctuation AWS allows, pass.",
			tags:   map[string]string{"cost-center": "R 42", "team": "payments", "owner": "ops@example.com", "project": ""},
		},
		"UnsupportedCharacterRefused": {
			reason: "Characters outside AWS's set are refused with the key named.",
			tags:   map[string]string{"cost-center": "R&D"},
			want:   []string{`spec.tags[cost-center]: Invalid value: "R&D": a tag value may hold only letters, digits, spaces and _ . : / = + - @`},
		},
		"ReservedPrefixRefused": {
			reason: "Keys starting with aws: are AWS's own, in any case.",
			tags:   map[string]string{"AWS:createdBy": "me"},
			want:   []string{"spec.tags[AWS:createdBy]: Forbidden: tag keys starting with aws: are reserved by AWS"},
		},
		"TooLongRefused": {
			reason: "Keys over 128 and values over 256 characters are refused.",
			tags:   map[string]string{strings.Repeat("k", 129): "v", "v": strings.Repeat("v", 257)},
			want: []string{
				"spec.tags[" + strings.Repeat("k", 129) + "]: Too long: may not be more than 128 bytes",
				"spec.tags[v]: Too long: may not be more than 256 bytes",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, e := range ValidateTags(path, tc.tags) {
				got = append(got, e.Error())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nValidate(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
