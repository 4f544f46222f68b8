package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kiso-dev/kiso/internal/layout"
)

type mode string

const (
	modeRender mode = "render"
	modeCheck  mode = "check"
	modeGolden mode = "golden"
	modeOne    mode = "one"
)

// selection is what the command line asked to render: example directories, or one XR with its inputs.
type selection struct {
	dirs []string
	one  []string // XR [REQUIRED] [OBSERVED]
}

// An example is one render: an XR, its inputs, and what renders it.
type example struct {
	Label       string // how messages name it: its directory under the source tree, or the XR file in one mode
	Dir         string
	XR          string
	Required    string
	Observed    string
	Composition string
	XRD         string   // the XRD defining the XR, if the source tree has one
	Functions   []string // functionRef names the Composition's pipeline calls
	Out         string   // the normalized render
	// Claim is a claim rendered through its XR (examples/claims/): validated, and never compared with a golden.
	Claim string
}

// selectExamples resolves the selection into renders, in the order their output is reported. An example whose
// Composition calls a function that is not under functions/ yet is skipped, with a note.
func selectExamples(src, tmp string, m mode, sel selection, fns []layout.Function) ([]example, error) {
	comps, err := layout.Compositions(src)
	if err != nil {
		return nil, err
	}
	xrds, err := layout.XRDs(src)
	if err != nil {
		return nil, err
	}
	inputs, err := selectInputs(src, m, sel)
	if err != nil {
		return nil, err
	}

	var out []example
	skipped := map[string]bool{}
	if m == modeCheck && len(sel.dirs) == 0 {
		claims, err := claimInputs(src)
		if err != nil {
			return nil, err
		}
		inputs = append(inputs, claims...)
	}
	for _, ex := range inputs {
		if ex.Claim != "" {
			if ex.XR, err = claimXR(xrds, ex.Claim, tmp); err != nil {
				return nil, err
			}
		}
		apiVersion, kind, err := layout.TypeOf(ex.XR)
		if err != nil {
			return nil, err
		}
		comp, ok := layout.CompositionFor(comps, apiVersion, kind)
		if !ok {
			return nil, fmt.Errorf("%s: no Composition under compositions/ renders %s %s", relative(src, ex.XR), apiVersion, kind)
		}
		ex.Composition, ex.Functions = comp.Path, comp.FunctionRefs
		if missing := uncalled(fns, comp.FunctionRefs); missing != "" {
			msg := fmt.Sprintf("%s calls %s, which names no main package under functions/ (by its package/functions/<dir>/crossplane.yaml)", relative(src, comp.Path), missing)
			if m == modeOne {
				return nil, fmt.Errorf("cannot render %s: %s", ex.XR, msg)
			}
			if !skipped[comp.Path] {
				fmt.Fprintf(os.Stderr, "skipping the examples of %s %s: %s\n", apiVersion, kind, msg)
				skipped[comp.Path] = true
			}
			continue
		}
		if xrd, ok := layout.XRDFor(xrds, apiVersion, kind); ok {
			ex.XRD = xrd.Path
		}
		ex.Out = filepath.Join(tmp, "out", fmt.Sprintf("%03d.yaml", len(out)))
		out = append(out, ex)
	}
	return out, nil
}

// selectInputs finds the XR and input files of each example the selection names.
func selectInputs(src string, m mode, sel selection) ([]example, error) {
	var inputs []example
	if m == modeOne {
		ex := example{}
		paths := []*string{&ex.XR, &ex.Required, &ex.Observed}
		for i, p := range sel.one {
			if p == "" {
				continue
			}
			abs, err := filepath.Abs(p)
			if err != nil {
				return nil, fmt.Errorf("cannot resolve %s: %w", p, err)
			}
			*paths[i] = abs
		}
		ex.Dir, ex.Label = filepath.Dir(ex.XR), ex.XR
		inputs = append(inputs, ex)
	} else {
		dirs := sel.dirs
		if len(dirs) == 0 {
			// Sorted by the XR's path, as the goldens are listed.
			xrs, err := filepath.Glob(filepath.Join(src, "examples", "*", "*", "xr.yaml"))
			if err != nil {
				return nil, fmt.Errorf("cannot list examples: %w", err)
			}
			slices.Sort(xrs)
			for _, xr := range xrs {
				dirs = append(dirs, filepath.Dir(xr))
			}
		}
		for _, d := range dirs {
			abs, err := filepath.Abs(d)
			if err != nil {
				return nil, fmt.Errorf("cannot resolve %s: %w", d, err)
			}
			ex := example{Dir: abs, XR: filepath.Join(abs, "xr.yaml"), Label: relative(src, abs)}
			if !exists(ex.XR) {
				return nil, fmt.Errorf("%s: no xr.yaml", abs)
			}
			if f := filepath.Join(abs, "required.yaml"); exists(f) {
				ex.Required = f
			}
			if f := filepath.Join(abs, "observed.yaml"); exists(f) {
				ex.Observed = f
			}
			inputs = append(inputs, ex)
		}
	}
	return inputs, nil
}

// uncalled returns the first functionRef that none of fns answers to, or "".
func uncalled(fns []layout.Function, refs []string) string {
	for _, ref := range refs {
		if functionFor(fns, ref) == nil {
			return ref
		}
	}
	return ""
}

// functionFor returns the function a functionRef names, or nil. When two package names both end the ref
// (function-x and other-function-x), the longer one is the ref's.
func functionFor(fns []layout.Function, ref string) *layout.Function {
	var found *layout.Function
	for i := range fns {
		if fns[i].Calls(ref) && (found == nil || len(fns[i].Package) > len(found.Package)) {
			found = &fns[i]
		}
	}
	return found
}

func relative(base, path string) string {
	if rel, err := filepath.Rel(base, path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}

func exists(path string) bool {
	_, err := os.Stat(path) //nolint:gosec // the examples the command line names are meant to be read
	return err == nil
}
