// Package layout reads what kiso's source tree declares: its composition functions, Compositions, XRDs and
// examples. Tools derive their lists from here, so a function added under functions/ needs no list edited.
package layout

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// A Function is one of kiso's composition functions.
type Function struct {
	// Dir is its directory under functions/, which holds a main package.
	Dir string
	// Package is metadata.name of its package metadata, package/functions/<Dir>/crossplane.yaml.
	Package string
}

// Calls says whether a Composition's functionRef names this function. Crossplane names an installed Function
// after its package's repository path (<owner>-<package>), and the owner is the registry's, not the source's.
func (f Function) Calls(functionRef string) bool {
	return functionRef == f.Package || strings.HasSuffix(functionRef, "-"+f.Package)
}

// Functions lists every directory functions/<dir>/ holding a main package, sorted by name, with the name its
// package metadata gives it.
func Functions(root string) ([]Function, error) {
	entries, err := os.ReadDir(filepath.Join(root, "functions"))
	if err != nil {
		return nil, fmt.Errorf("cannot list functions: %w", err)
	}
	var fns []Function
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(root, "functions", e.Name())
		isMain, err := isMainPackage(dir)
		if err != nil {
			return nil, err
		}
		if !isMain {
			continue
		}
		var meta struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		metaFile := filepath.Join(root, "package", "functions", e.Name(), "crossplane.yaml")
		if err := readYAML(metaFile, &meta); err != nil {
			return nil, fmt.Errorf("functions/%s has no package metadata: %w", e.Name(), err)
		}
		if meta.Metadata.Name == "" {
			return nil, fmt.Errorf("%s: metadata.name is empty", metaFile)
		}
		fns = append(fns, Function{Dir: e.Name(), Package: meta.Metadata.Name})
	}
	return fns, nil
}

// isMainPackage says whether dir holds a non-test Go file of package main.
func isMainPackage(dir string) (bool, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return false, fmt.Errorf("cannot list %s: %w", dir, err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.PackageClauseOnly)
		if err != nil {
			return false, fmt.Errorf("cannot parse %s: %w", f, err)
		}
		if parsed.Name.Name == "main" {
			return true, nil
		}
	}
	return false, nil
}

// A Composition is one file under compositions/.
type Composition struct {
	Path string
	// APIVersion and Kind are the composite type it renders.
	APIVersion, Kind string
	// FunctionRefs are the functions its pipeline calls, in step order.
	FunctionRefs []string
	// KeyDomains are the keyDomain each step's input sets ("" where it sets none), in step order.
	KeyDomains []string
}

// Compositions reads every compositions/*.yaml, sorted by file name.
func Compositions(root string) ([]Composition, error) {
	files, err := filepath.Glob(filepath.Join(root, "compositions", "*.yaml"))
	if err != nil {
		return nil, fmt.Errorf("cannot list compositions: %w", err)
	}
	comps := make([]Composition, 0, len(files))
	for _, f := range files {
		var c struct {
			Spec struct {
				CompositeTypeRef struct {
					APIVersion string `json:"apiVersion"`
					Kind       string `json:"kind"`
				} `json:"compositeTypeRef"`
				Pipeline []struct {
					FunctionRef struct {
						Name string `json:"name"`
					} `json:"functionRef"`
					Input struct {
						KeyDomain string `json:"keyDomain"`
					} `json:"input"`
				} `json:"pipeline"`
			} `json:"spec"`
		}
		if err := readYAML(f, &c); err != nil {
			return nil, err
		}
		comp := Composition{Path: f, APIVersion: c.Spec.CompositeTypeRef.APIVersion, Kind: c.Spec.CompositeTypeRef.Kind}
		for _, step := range c.Spec.Pipeline {
			comp.FunctionRefs = append(comp.FunctionRefs, step.FunctionRef.Name)
			comp.KeyDomains = append(comp.KeyDomains, step.Input.KeyDomain)
		}
		comps = append(comps, comp)
	}
	return comps, nil
}

// An XRD is one apis/*/definition.yaml.
type XRD struct {
	Path string
	// Group and Kind name its composite resource; ClaimKind its claim, if it offers one.
	Group, Kind, ClaimKind string
}

// XRDs reads every apis/*/definition.yaml, sorted by path.
func XRDs(root string) ([]XRD, error) {
	files, err := filepath.Glob(filepath.Join(root, "apis", "*", "definition.yaml"))
	if err != nil {
		return nil, fmt.Errorf("cannot list XRDs: %w", err)
	}
	xrds := make([]XRD, 0, len(files))
	for _, f := range files {
		var d struct {
			Spec struct {
				Group string `json:"group"`
				Names struct {
					Kind string `json:"kind"`
				} `json:"names"`
				ClaimNames *struct {
					Kind string `json:"kind"`
				} `json:"claimNames"`
			} `json:"spec"`
		}
		if err := readYAML(f, &d); err != nil {
			return nil, err
		}
		xrd := XRD{Path: f, Group: d.Spec.Group, Kind: d.Spec.Names.Kind}
		if d.Spec.ClaimNames != nil {
			xrd.ClaimKind = d.Spec.ClaimNames.Kind
		}
		xrds = append(xrds, xrd)
	}
	return xrds, nil
}

// CompositionFor returns the Composition that renders apiVersion and kind.
func CompositionFor(comps []Composition, apiVersion, kind string) (Composition, bool) {
	i := slices.IndexFunc(comps, func(c Composition) bool { return c.APIVersion == apiVersion && c.Kind == kind })
	if i < 0 {
		return Composition{}, false
	}
	return comps[i], true
}

// XRDFor returns the XRD that defines kind, as a composite resource or as a claim, in apiVersion's group.
func XRDFor(xrds []XRD, apiVersion, kind string) (XRD, bool) {
	group, _, _ := strings.Cut(apiVersion, "/")
	i := slices.IndexFunc(xrds, func(x XRD) bool { return x.Group == group && (x.Kind == kind || x.ClaimKind == kind) })
	if i < 0 {
		return XRD{}, false
	}
	return xrds[i], true
}

// TypeOf reads the apiVersion and kind of the first object in a YAML file.
func TypeOf(path string) (apiVersion, kind string, err error) {
	var obj struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := readYAML(path, &obj); err != nil {
		return "", "", err
	}
	return obj.APIVersion, obj.Kind, nil
}

// readYAML decodes the first object of a YAML file.
func readYAML(path string, into any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("cannot read %s: %w", path, err)
	}
	objs, err := Objects(data)
	if err != nil {
		return fmt.Errorf("cannot parse %s: %w", path, err)
	}
	if len(objs) == 0 {
		return fmt.Errorf("%s holds no object", path)
	}
	raw, err := yaml.Marshal(objs[0])
	if err != nil {
		return fmt.Errorf("cannot parse %s: %w", path, err)
	}
	if err := yaml.Unmarshal(raw, into); err != nil {
		return fmt.Errorf("cannot parse %s: %w", path, err)
	}
	return nil
}

// Objects decodes every object of a multi-document YAML stream, skipping empty documents.
func Objects(data []byte) ([]map[string]any, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objs []map[string]any
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("cannot split YAML documents: %w", err)
		}
		var obj map[string]any
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			return nil, fmt.Errorf("cannot decode a YAML document: %w", err)
		}
		if obj != nil {
			objs = append(objs, obj)
		}
	}
}
