package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"sigs.k8s.io/yaml"

	"github.com/crossplane/function-sdk-go/errors"

	"github.com/kiso-dev/kiso/internal/layout"
)

// Configuration package sources, relative to the repository root.
const (
	configurationMeta = "package/configuration/crossplane.yaml"
	configurationName = "configuration-kiso"
)

// A dependency is one entry of a package's spec.dependsOn.
type dependency struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Package    string `json:"package"`
	Version    string `json:"version"`
}

// configurationMetadata is the Configuration's package metadata: package/configuration/crossplane.yaml with
// a dependency on each of kiso's functions, as pushed to registry at version. The functions are not listed
// in the file, so that each function under functions/ is a dependency without a list to keep, and so that
// a package pushed anywhere depends on the functions pushed beside it. The version is exact: the
// Compositions and the functions' inputs change together.
func configurationMetadata(registry, version string, fns []layout.Function) ([]byte, error) {
	data, err := os.ReadFile(configurationMeta)
	if err != nil {
		return nil, errors.Wrap(err, "cannot read the Configuration's metadata")
	}
	var meta map[string]any
	if err := yaml.Unmarshal(data, &meta); err != nil {
		return nil, errors.Wrapf(err, "cannot parse %s", configurationMeta)
	}
	spec, ok := meta["spec"].(map[string]any)
	if !ok {
		return nil, errors.Errorf("%s has no spec", configurationMeta)
	}
	existing, _ := spec["dependsOn"].([]any)
	for _, d := range existing {
		if d, ok := d.(map[string]any); ok && d["kind"] == "Function" {
			return nil, errors.Errorf("%s lists Function %v under dependsOn: every function is added when the package is built", configurationMeta, d["package"])
		}
	}
	deps := make([]any, 0, len(fns)+len(existing))
	for _, fn := range fns {
		deps = append(deps, dependency{APIVersion: "pkg.crossplane.io/v1", Kind: "Function", Package: registry + "/" + fn.Package, Version: version})
	}
	spec["dependsOn"] = append(deps, existing...)
	return yaml.Marshal(meta)
}

// checkFunctionNames refuses a registry under which Crossplane would install a function by a name other than
// the one the Compositions call it by: Crossplane names the Function it installs for a dependency after the
// package's repository path (ghcr.io/kiso-dev/function-x becomes kiso-dev-function-x).
func checkFunctionNames(registry string, fns []layout.Function) error {
	comps, err := layout.Compositions(".")
	if err != nil {
		return err
	}
	for _, fn := range fns {
		installed, err := installedName(registry + "/" + fn.Package)
		if err != nil {
			return err
		}
		for _, c := range comps {
			for _, ref := range c.FunctionRefs {
				if fn.Calls(ref) && ref != installed {
					return errors.Errorf("%s calls %s %q, but from %s Crossplane would install it as %q: push to a registry path whose repository gives %q (such as ghcr.io/%s)",
						c.Path, fn.Package, ref, registry, installed, ref, strings.TrimSuffix(ref, "-"+fn.Package))
				}
			}
		}
	}
	return nil
}

// installedName is the name Crossplane gives a package it installs as a dependency: the repository path
// without the registry host, as a DNS label (lower-case letters and digits kept, '.', '/', ':' and '-' each
// a '-', at most 63 characters, no '-' at either end).
func installedName(ref string) (string, error) {
	repo, err := name.NewRepository(ref)
	if err != nil {
		return "", errors.Wrapf(err, "cannot parse repository %q", ref)
	}
	path := repo.RepositoryStr()
	var label strings.Builder
	for i := 0; i < len(path) && i < 63; i++ {
		switch c := path[i]; {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
			label.WriteByte(c)
		case c == '.', c == '/', c == ':', c == '-':
			label.WriteByte('-')
		}
	}
	return strings.Trim(label.String(), "-"), nil
}

// configuration builds the Configuration package for packages pushed to registry at the builder's version:
// its metadata, every apis/<api>/definition.yaml and every compositions/*.yaml, so the package always holds
// what the repository holds.
func (b *builder) configuration(ctx context.Context, registry string) error {
	meta, err := configurationMetadata(registry, b.version, b.functions)
	if err != nil {
		return err
	}
	root := filepath.Join(b.work, configurationName)
	if err := os.MkdirAll(root, 0o750); err != nil {
		return errors.Wrapf(err, "cannot create %s", root)
	}
	if err := os.WriteFile(filepath.Join(root, "crossplane.yaml"), meta, 0o600); err != nil {
		return errors.Wrap(err, "cannot write the Configuration's metadata")
	}
	definitions, err := filepath.Glob("apis/*/definition.yaml")
	if err != nil {
		return errors.Wrap(err, "cannot list the XRDs")
	}
	for _, d := range definitions {
		if err := copyFile(d, filepath.Join(root, d)); err != nil {
			return err
		}
	}
	if err := copyYAML("compositions", filepath.Join(root, "compositions")); err != nil {
		return err
	}
	xpkg := b.configurationFile()
	if err := run(exec.CommandContext(ctx, b.crossplane, "xpkg", "build", "--package-root="+root, //nolint:gosec // the CLI hack/build-tool.sh built
		"--examples-root="+filepath.Join(b.work, "examples"), "-o", xpkg)); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "built %s, depending on the functions at %s:%s\n", xpkg, registry, b.version)
	return nil
}

// configurationFile is where the Configuration package is written.
func (b *builder) configurationFile() string {
	return filepath.Join(b.out, configurationName+".xpkg")
}
