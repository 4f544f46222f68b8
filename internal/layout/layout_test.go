package layout

import (
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

// TestCompositionsShareOneKeyDomain: every step of kiso's Compositions says its keyDomain, and all say the same:
// the cluster function's policies check the keys the isolation function writes, and a claim whose cluster
// checks another domain is PlacementEnforced=False (KeyDomainMismatch). A platform that changes the domain
// changes it in every file (docs/install.md, The label domain).
func TestCompositionsShareOneKeyDomain(t *testing.T) {
	comps, err := Compositions(root)
	if err != nil {
		t.Fatal(err)
	}
	domains := map[string][]string{}
	for _, c := range comps {
		for i, d := range c.KeyDomains {
			if d == "" {
				t.Errorf("%s: step %d (%s) sets no keyDomain in its input", c.Path, i, c.FunctionRefs[i])
				continue
			}
			domains[d] = append(domains[d], c.Path)
		}
	}
	if len(domains) > 1 {
		t.Errorf("kiso's Compositions set different keyDomains: %v", domains)
	}
}
