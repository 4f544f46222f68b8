package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// repo writes files (path: content) under a temporary repository root.
func repo(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for path, content := range files {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(path)), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, path), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestDiscoverFunctions(t *testing.T) {
	cases := map[string]struct {
		reason  string
		files   map[string]string
		want    []string
		wantErr bool
	}{
		"MainPackagesWithMetadata": {
			reason: "every directory of functions/ holding a main package is a function; shared packages are not",
			files: map[string]string{
				"functions/isolation/main.go":                   "package main\n",
				"functions/cluster/main.go":                     "package main\n",
				"functions/internal/server/server.go":           "package server\n",
				"functions/internal/doc.go":                     "package internal\n",
				"package/functions/isolation/crossplane.yaml":   "",
				"package/functions/cluster/crossplane.yaml":     "",
				"package/functions/cluster/input.kiso.dev.yaml": "",
			},
			want: []string{"cluster", "isolation"},
		},
		"MetadataWithoutMainPackageIsSkipped": {
			reason: "package metadata may come before its function's code",
			files: map[string]string{
				"functions/isolation/main.go":                 "package main\n",
				"package/functions/isolation/crossplane.yaml": "",
				"package/functions/next/crossplane.yaml":      "",
			},
			want: []string{"isolation"},
		},
		"MainPackageWithoutMetadata": {
			reason: "a function that cannot be packaged is an error, not a package missing from a release",
			files: map[string]string{
				"functions/isolation/main.go":                 "package main\n",
				"functions/cluster/main.go":                   "package main\n",
				"package/functions/isolation/crossplane.yaml": "",
			},
			wantErr: true,
		},
		"NoFunction": {
			reason:  "a build with no function packages nothing a Configuration depends on",
			files:   map[string]string{"functions/internal/doc.go": "package internal\n", "package/functions/.keep": ""},
			wantErr: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fns, err := discoverFunctions(repo(t, tc.files))
			if (err != nil) != tc.wantErr {
				t.Fatalf("%s\ndiscoverFunctions(): error %v, want error %t", tc.reason, err, tc.wantErr)
			}
			var got []string
			for _, fn := range fns {
				got = append(got, fn.name)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\ndiscoverFunctions() (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

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
