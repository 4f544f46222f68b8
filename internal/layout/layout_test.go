package layout

import (
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// root is the repository, for the tests that check what it declares.
const root = "../.."

// TestEveryFunctionIsPackagedUnderItsDirectoryName: hack/xpkg pushes functions/<dir> as the repository
// function-<dir>, and Crossplane names the Function after that repository; metadata.name must say the same, or
// the tools that read it (hack/render, the e2e) would look for a Function nobody installs.
func TestEveryFunctionIsPackagedUnderItsDirectoryName(t *testing.T) {
	fns, err := Functions(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(fns) == 0 {
		t.Fatal("no main package under functions/")
	}
	for _, fn := range fns {
		if want := "function-" + fn.Dir; fn.Package != want {
			t.Errorf("package/functions/%s/crossplane.yaml: metadata.name is %q, want %q", fn.Dir, fn.Package, want)
		}
	}
}

// TestEveryCompositionCallsKisoFunctions: each XRD has a Composition, and each step of a Composition's pipeline
// calls one of kiso's functions, so make render and make examples can start what every example needs.
func TestEveryCompositionCallsKisoFunctions(t *testing.T) {
	fns, err := Functions(root)
	if err != nil {
		t.Fatal(err)
	}
	comps, err := Compositions(root)
	if err != nil {
		t.Fatal(err)
	}
	xrds, err := XRDs(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range xrds {
		renders := func(c Composition) bool { return strings.HasPrefix(c.APIVersion, x.Group+"/") && c.Kind == x.Kind }
		if !slices.ContainsFunc(comps, renders) {
			t.Errorf("%s: no Composition under compositions/ renders %s", x.Path, x.Kind)
		}
	}
	for _, c := range comps {
		if len(c.FunctionRefs) == 0 {
			t.Errorf("%s: the pipeline calls no function", c.Path)
		}
		for _, ref := range c.FunctionRefs {
			calls := 0
			for _, fn := range fns {
				if fn.Calls(ref) {
					calls++
				}
			}
			if calls != 1 {
				t.Errorf("%s: functionRef %q names %d of kiso's functions, want 1", c.Path, ref, calls)
			}
		}
	}
}

// TestTheConfigurationDependsOnEveryFunction: Crossplane installs kiso's functions as the Configuration's
// dependencies, naming each Function after its package's repository path (xpkg.crossplane.io/kiso-dev/function-x
// becomes kiso-dev-function-x); every function must be one, under the name its Compositions call it by.
func TestTheConfigurationDependsOnEveryFunction(t *testing.T) {
	fns, err := Functions(root)
	if err != nil {
		t.Fatal(err)
	}
	comps, err := Compositions(root)
	if err != nil {
		t.Fatal(err)
	}
	var conf struct {
		Spec struct {
			DependsOn []struct {
				Kind    string `json:"kind"`
				Package string `json:"package"`
			} `json:"dependsOn"`
		} `json:"spec"`
	}
	if err := readYAML(filepath.Join(root, "package", "configuration", "crossplane.yaml"), &conf); err != nil {
		t.Fatal(err)
	}
	installed := map[string]string{} // package name: the Function's name
	for _, d := range conf.Spec.DependsOn {
		if d.Kind != "Function" {
			continue
		}
		_, repository, _ := strings.Cut(d.Package, "/") // the registry host goes
		installed[path.Base(d.Package)] = strings.ReplaceAll(repository, "/", "-")
	}
	for _, fn := range fns {
		name, ok := installed[fn.Package]
		if !ok {
			t.Errorf("package/configuration/crossplane.yaml: dependsOn lists no Function package %s (functions/%s)", fn.Package, fn.Dir)
			continue
		}
		for _, c := range comps {
			for _, ref := range c.FunctionRefs {
				if fn.Calls(ref) && ref != name {
					t.Errorf("%s calls %q, but Crossplane installs functions/%s as %q", c.Path, ref, fn.Dir, name)
				}
			}
		}
	}
}
