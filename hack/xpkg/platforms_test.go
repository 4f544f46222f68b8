package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

func TestParsePlatforms(t *testing.T) {
	cases := map[string]struct {
		reason  string
		specs   []string
		want    []v1.Platform
		wantErr bool
	}{
		"Default": {
			reason: "the platforms EKS nodes run: x86 and Graviton",
			specs:  []string{"linux/amd64", "linux/arm64"},
			want:   []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}},
		},
		"Variant":   {reason: "a variant would need GOARM or GOAMD64 set to match", specs: []string{"linux/arm/v7"}, wantErr: true},
		"NoOS":      {reason: "GOOS must be known", specs: []string{"arm64"}, wantErr: true},
		"Duplicate": {reason: "two packages of one platform make an ambiguous index", specs: []string{"linux/arm64", "linux/arm64"}, wantErr: true},
		"None":      {reason: "a function package for no platform cannot run", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := parsePlatforms(tc.specs)
			if (err != nil) != tc.wantErr {
				t.Fatalf("%s\nparsePlatforms(): error %v, want error %t", tc.reason, err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nparsePlatforms() (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}
