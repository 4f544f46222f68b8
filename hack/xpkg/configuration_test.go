package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// inRepositoryRoot runs the test from the repository root, where hack/xpkg reads its sources.
func inRepositoryRoot(t *testing.T) {
	t.Helper()
	t.Chdir(filepath.Join("..", ".."))
}

// TestTheConfigurationDependsOnEveryFunctionWhereItIsPushed: Crossplane installs kiso's functions as the
// Configuration's dependencies, so the Configuration pushed to a registry must depend on every function pushed
// beside it, at its own version, and keep the dependencies its metadata file lists.
func TestTheConfigurationDependsOnEveryFunctionWhereItIsPushed(t *testing.T) {
	inRepositoryRoot(t)
	fns, err := functions()
	if err != nil {
		t.Fatal(err)
	}
	meta, err := configurationMetadata("registry.example:5000/kiso-dev", "v1.2.3", fns)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Spec struct {
			DependsOn []dependency `json:"dependsOn"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(meta, &got); err != nil {
		t.Fatal(err)
	}
	var functionDeps []dependency
	providers := 0
	for _, d := range got.Spec.DependsOn {
		switch d.Kind {
		case "Function":
			functionDeps = append(functionDeps, d)
		case "Provider":
			providers++
		}
	}
	var want []dependency
	for _, fn := range fns {
		want = append(want, dependency{APIVersion: "pkg.crossplane.io/v1", Kind: "Function", Package: "registry.example:5000/kiso-dev/" + fn.Package, Version: "v1.2.3"})
	}
	if diff := cmp.Diff(want, functionDeps); diff != "" {
		t.Errorf("function dependencies (-want +got):\n%s", diff)
	}
	if providers == 0 {
		t.Errorf("the provider dependencies of %s are gone:\n%s", configurationMeta, meta)
	}
}

// TestTheConfigurationMetadataListsNoFunction: a function listed by hand would be a second list to keep.
func TestTheConfigurationMetadataListsNoFunction(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", configurationMeta))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "kind: Function") {
		t.Errorf("%s lists a Function under dependsOn; hack/xpkg adds every function itself", configurationMeta)
	}
}

// TestPushRefusesARegistryThatRenamesTheFunctions: the Compositions call the functions by the names Crossplane
// gives them when installed from ghcr.io/kiso-dev (kiso-dev-function-<name>); pushed under another owner they
// would be installed under another name and no XR would render.
func TestPushRefusesARegistryThatRenamesTheFunctions(t *testing.T) {
	inRepositoryRoot(t)
	fns, err := functions()
	if err != nil {
		t.Fatal(err)
	}
	for _, registry := range []string{"ghcr.io/kiso-dev", "127.0.0.1:5000/kiso-dev", "xpkg.crossplane.io/kiso-dev"} {
		if err := checkFunctionNames(registry, fns); err != nil {
			t.Errorf("%s: %v", registry, err)
		}
	}
	for _, registry := range []string{"ghcr.io/acme", "ghcr.io/acme/kiso-dev", "ghcr.io"} {
		err := checkFunctionNames(registry, fns)
		if err == nil {
			t.Errorf("%s: pushed, though Crossplane would install the functions under other names", registry)
			continue
		}
		if !strings.Contains(err.Error(), "would install it as") {
			t.Errorf("%s: the error does not say the name Crossplane would give: %v", registry, err)
		}
	}
}

func TestInstalledNameIsCrossplanesPackageName(t *testing.T) {
	// Names Crossplane gives packages it installs as dependencies.
	for ref, want := range map[string]string{
		"ghcr.io/kiso-dev/function-isolation":        "kiso-dev-function-isolation",
		"127.0.0.1:5000/kiso-dev/function-cluster":   "kiso-dev-function-cluster",
		"xpkg.upbound.io/upbound/provider-aws-iam":   "upbound-provider-aws-iam",
		"xpkg.crossplane.io/crossplane-contrib/a.b":  "crossplane-contrib-a-b",
		"ghcr.io/kiso_dev/fn":                        "kisodev-fn",
		"ghcr.io/" + strings.Repeat("a", 70) + "/fn": strings.Repeat("a", 63),
	} {
		got, err := installedName(ref)
		if err != nil {
			t.Errorf("%s: %v", ref, err)
			continue
		}
		if got != want {
			t.Errorf("installedName(%q) = %q, want %q", ref, got, want)
		}
	}
}
