package main

import (
	"context"
	"os"
	"os/exec"
	"strings"

	"github.com/crossplane/function-sdk-go/errors"
)

type pushCmd struct{}

// Run pushes each function's packages, one per platform, as one multi-platform index, then the Configuration,
// whose dependencies then resolve on a cluster of any of the platforms. The Configuration is built again
// first, for this registry and version, so that it depends on the functions it is pushed beside whatever the
// last build was for.
func (pushCmd) Run(ctx context.Context, c *cli) error {
	b, cleanup, err := newBuilder(ctx, c)
	if err != nil {
		return err
	}
	defer cleanup()
	registry := strings.TrimSuffix(c.Registry, "/")
	if err := checkFunctionNames(registry, b.functions); err != nil {
		return err
	}
	push := func(pkg string, files []string) error {
		for _, f := range files {
			if _, err := os.Stat(f); err != nil {
				return errors.Wrapf(err, "cannot push %s: build it first (make xpkg), for the same platforms", pkg)
			}
		}
		target := registry + "/" + pkg + ":" + b.version
		return run(exec.CommandContext(ctx, b.crossplane, "xpkg", "push", "-f", strings.Join(files, ","), target)) //nolint:gosec // the CLI hack/build-tool.sh built
	}
	for _, fn := range b.functions {
		files := make([]string, 0, len(b.platforms))
		for _, p := range b.platforms {
			files = append(files, b.packageFile(fn, p))
		}
		if err := push(fn.Package, files); err != nil {
			return err
		}
	}
	if err := b.configuration(ctx, registry); err != nil {
		return errors.Wrap(err, "cannot build the Configuration package")
	}
	return push(configurationName, []string{b.configurationFile()})
}
