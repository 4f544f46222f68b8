package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/crossplane/function-sdk-go/errors"
)

type pushCmd struct{}

// pushedList is the file, in the output directory, that lists every package push pushed, one per line, by the
// digest its tag named once pushed (registry/path@sha256:...): what the release workflow signs and describes
// (.github/workflows/release.yml), so that it names no package itself and signs what was pushed, not what the tag
// names later.
const pushedList = "pushed"

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
	var pushed []string
	push := func(pkg string, files []string) error {
		for _, f := range files {
			if _, err := os.Stat(f); err != nil {
				return errors.Wrapf(err, "cannot push %s: build it first (make xpkg), for the same platforms", pkg)
			}
		}
		target := registry + "/" + pkg + ":" + b.version
		if err := run(exec.CommandContext(ctx, b.crossplane, "xpkg", "push", "-f", strings.Join(files, ","), target)); err != nil { //nolint:gosec // the CLI hack/build-tool.sh built
			return err
		}
		digest, err := pushedDigest(ctx, target)
		if err != nil {
			return err
		}
		pushed = append(pushed, digest)
		return os.WriteFile(filepath.Join(b.out, pushedList), []byte(strings.Join(pushed, "\n")+"\n"), 0o600)
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

// pushedDigest is the package a tag names, by its digest, with the credentials the Crossplane CLI pushed with (the
// Docker configuration).
func pushedDigest(ctx context.Context, tag string) (string, error) {
	ref, err := name.ParseReference(tag)
	if err != nil {
		return "", errors.Wrapf(err, "cannot parse %s", tag)
	}
	desc, err := remote.Head(ref, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain))
	if err != nil {
		return "", errors.Wrapf(err, "cannot read the digest of %s", tag)
	}
	return ref.Context().Digest(desc.Digest.String()).String(), nil
}
