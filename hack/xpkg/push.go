package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/crossplane/function-sdk-go/errors"
)

type pushCmd struct {
	Registry string `arg:"" help:"Registry and path the packages are pushed under, e.g. ghcr.io/kiso-dev."`
}

// Run pushes each function's packages, one per platform, as one multi-platform index, then the Configuration,
// whose dependencies then resolve on a cluster of any of the platforms.
func (c pushCmd) Run(ctx context.Context, g *cli) error {
	platforms, err := parsePlatforms(g.Platforms)
	if err != nil {
		return err
	}
	fns, err := functions()
	if err != nil {
		return err
	}
	crossplane, err := crossplaneCLI(ctx)
	if err != nil {
		return err
	}
	b := &builder{out: g.Output}
	registry := strings.TrimSuffix(c.Registry, "/")
	push := func(pkg string, files []string) error {
		for _, f := range files {
			if _, err := os.Stat(f); err != nil {
				return errors.Wrapf(err, "cannot push %s: build it first (make xpkg), for the same platforms", pkg)
			}
		}
		target := registry + "/" + pkg + ":" + g.Version
		return run(exec.CommandContext(ctx, crossplane, "xpkg", "push", "-f", strings.Join(files, ","), target)) //nolint:gosec // the CLI hack/build-tool.sh built
	}
	for _, fn := range fns {
		files := make([]string, 0, len(platforms))
		for _, p := range platforms {
			files = append(files, b.packageFile(fn, p))
		}
		if err := push(fn.Package, files); err != nil {
			return err
		}
	}
	return push(configurationName, []string{filepath.Join(g.Output, configurationName+".xpkg")})
}
