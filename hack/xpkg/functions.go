package main

import (
	"fmt"
	"go/build"
	"os"
	"path/filepath"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/crossplane/function-sdk-go/errors"
)

// Where the sources of kiso's packages live, relative to the repository root.
const (
	functionsDir        = "functions"
	functionPackagesDir = "package/functions"
)

// A function is one of kiso's composition functions: the main package functions/<name> and the package
// metadata (crossplane.yaml, and any other YAML such as its input's CRD) in package/functions/<name>.
type function struct {
	name string
}

// pkg is the function's package (repository) name.
func (f function) pkg() string { return "function-" + f.name }

func (f function) source() string {
	return "./" + filepath.ToSlash(filepath.Join(functionsDir, f.name))
}

func (f function) metadataDir() string { return filepath.Join(functionPackagesDir, f.name) }

// discoverFunctions lists kiso's functions from the repository, so that a new function is packaged by adding
// its directories, not by editing a list: every directory of functions/ holding a main package, which must
// have its package metadata. Metadata whose function has no main package yet is skipped, with a note.
func discoverFunctions(root string) ([]function, error) {
	sources, err := subdirectories(filepath.Join(root, functionsDir))
	if err != nil {
		return nil, err
	}
	metadata, err := subdirectories(filepath.Join(root, functionPackagesDir))
	if err != nil {
		return nil, err
	}
	var fns []function
	for _, name := range sources {
		p, err := build.ImportDir(filepath.Join(root, functionsDir, name), 0)
		if err != nil || p.Name != "main" {
			continue // a shared package such as functions/internal, or no Go files
		}
		fn := function{name: name}
		if _, err := os.Stat(filepath.Join(root, fn.metadataDir(), "crossplane.yaml")); err != nil {
			return nil, errors.Wrapf(err, "cannot package %s: it needs its package metadata", fn.source())
		}
		fns = append(fns, fn)
	}
	for _, name := range metadata {
		if !slices.ContainsFunc(fns, func(fn function) bool { return fn.name == name }) {
			fmt.Fprintf(os.Stderr, "skipping %s: %s has no main package yet\n", filepath.Join(functionPackagesDir, name), filepath.Join(functionsDir, name))
		}
	}
	if len(fns) == 0 {
		return nil, errors.Errorf("cannot find a function: no directory of %s holds a main package", functionsDir)
	}
	return fns, nil
}

// subdirectories lists the names of dir's subdirectories, sorted.
func subdirectories(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, errors.Wrapf(err, "cannot list %s", dir)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names, nil // os.ReadDir sorts by name
}

// parsePlatforms parses os/arch pairs. Variants are refused: they would need GOARM or GOAMD64 to match.
func parsePlatforms(specs []string) ([]v1.Platform, error) {
	platforms := make([]v1.Platform, 0, len(specs))
	for _, s := range specs {
		p, err := v1.ParsePlatform(s)
		if err != nil {
			return nil, errors.Wrapf(err, "cannot parse platform %q", s)
		}
		if p.OS == "" || p.Architecture == "" || p.Variant != "" || p.OSVersion != "" {
			return nil, errors.Errorf("platform %q: want os/arch, such as linux/arm64", s)
		}
		if slices.ContainsFunc(platforms, p.Equals) {
			return nil, errors.Errorf("platform %q is listed twice", s)
		}
		platforms = append(platforms, *p)
	}
	if len(platforms) == 0 {
		return nil, errors.New("cannot build for no platform")
	}
	return platforms, nil
}

// platformSuffix names a platform in file names: linux-arm64.
func platformSuffix(p v1.Platform) string {
	return strings.Join([]string{p.OS, p.Architecture}, "-")
}
