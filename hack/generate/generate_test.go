package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestGeneratedFilesAreCurrent regenerates every file in memory and fails when one on disk differs, so a
// change to the Go types or markers cannot land without its XRDs and constants.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	root := filepath.Join("..", "..")
	files, err := generate(root)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range files {
		got, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(path)))
		if err != nil {
			t.Errorf("%s: %v (run make generate)", path, err)
			continue
		}
		if diff := cmp.Diff(strings.Split(string(want), "\n"), strings.Split(string(got), "\n")); diff != "" {
			t.Errorf("%s is stale; run make generate (-generated, +on disk):\n%s", path, diff)
		}
	}
}

// TestFunctionInputs: every function under functions/ with an input/ folder has its input generated, one
// without is skipped, and an input/ folder without v1alpha1 fails naming the folder it expects.
func TestFunctionInputs(t *testing.T) {
	cases := map[string]struct {
		reason  string
		dirs    []string
		want    []functionInput
		wantErr string
	}{
		"InputIsFound": {
			reason: "a function's input/v1alpha1 is its input package, whose CRD goes with its package metadata",
			dirs:   []string{"functions/quota/input/v1alpha1"},
			want:   []functionInput{{dir: "functions/quota/input/v1alpha1", packageDir: "package/functions/quota"}},
		},
		"FunctionWithoutInputIsSkipped": {
			reason: "a function may take no input",
		},
		"InputWithoutV1alpha1Fails": {
			reason:  "an input/ folder with another version would otherwise go without a CRD unnoticed",
			dirs:    []string{"functions/quota/input/v1beta1"},
			wantErr: "functions/quota/input/v1alpha1",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			writeFile(t, root, "functions/quota/main.go", "package main\n")
			writeFile(t, root, "package/functions/quota/crossplane.yaml", "metadata:\n  name: function-quota\n")
			for _, d := range tc.dirs {
				if err := os.MkdirAll(filepath.Join(root, filepath.FromSlash(d)), 0o750); err != nil {
					t.Fatal(err)
				}
			}
			got, err := functionInputs(root)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("%s\nfunctionInputs(): error %v, want one naming %s", tc.reason, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s\nfunctionInputs(): %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(functionInput{})); diff != "" {
				t.Errorf("%s\nfunctionInputs(): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func writeFile(t *testing.T, root, path, content string) {
	t.Helper()
	name := filepath.Join(root, filepath.FromSlash(path))
	if err := os.MkdirAll(filepath.Dir(name), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
