package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/crossplane/function-sdk-go/errors"

	"github.com/kiso-dev/kiso/internal/layout"
)

// functions lists kiso's functions as the source tree declares them, so that a new one is packaged without a
// list to edit.
func functions() ([]layout.Function, error) {
	fns, err := layout.Functions(".")
	if err != nil {
		return nil, err
	}
	if len(fns) == 0 {
		return nil, errors.New("cannot find a function: no directory of functions/ holds a main package")
	}
	return fns, nil
}

// source is the function's main package, as go build takes it.
func source(fn layout.Function) string { return "./functions/" + fn.Dir }

type buildCmd struct{}

// A builder builds into one output directory, staging package roots in a scratch directory.
type builder struct {
	out, work, version string
	platforms          []v1.Platform
	functions          []layout.Function
	crossplane         string // the Crossplane CLI
}

// newBuilder reads what every command needs: the platforms, kiso's functions, the Crossplane CLI and a
// scratch directory, which cleanup removes.
func newBuilder(ctx context.Context, c *cli) (b *builder, cleanup func(), err error) {
	b = &builder{out: c.Output, version: c.Version}
	if b.platforms, err = parsePlatforms(c.Platforms); err != nil {
		return nil, nil, err
	}
	if b.functions, err = functions(); err != nil {
		return nil, nil, err
	}
	if b.crossplane, err = crossplaneCLI(ctx); err != nil {
		return nil, nil, err
	}
	if b.work, err = os.MkdirTemp("", "kiso-xpkg-"); err != nil {
		return nil, nil, errors.Wrap(err, "cannot create a scratch directory")
	}
	return b, func() { _ = os.RemoveAll(b.work) }, nil
}

// Run builds every package, the Configuration depending on the functions as pushed to the registry. The
// output directory is emptied first, so it holds only this build's packages.
func (buildCmd) Run(ctx context.Context, c *cli) error {
	b, cleanup, err := newBuilder(ctx, c)
	if err != nil {
		return err
	}
	defer cleanup()
	if err := os.RemoveAll(b.out); err != nil {
		return errors.Wrapf(err, "cannot empty %s", b.out)
	}
	if err := os.MkdirAll(filepath.Join(b.out, "bin"), 0o750); err != nil {
		return errors.Wrapf(err, "cannot create %s", b.out)
	}
	for _, fn := range b.functions {
		for _, p := range b.platforms {
			if err := b.function(ctx, fn, p); err != nil {
				return errors.Wrapf(err, "cannot build the %s package of %s", p, source(fn))
			}
		}
		if err := b.hostAliases(fn); err != nil {
			return err
		}
	}
	return errors.Wrap(b.configuration(ctx, c.Registry), "cannot build the Configuration package")
}

// packageFile is where a function's package for one platform is written.
func (b *builder) packageFile(fn layout.Function, p v1.Platform) string {
	return filepath.Join(b.out, fn.Package+"-"+platformSuffix(p)+".xpkg")
}

// binaryFile is where a function's binary for one platform is written.
func (b *builder) binaryFile(fn layout.Function, p v1.Platform) string {
	return filepath.Join(b.out, "bin", fn.Package+"-"+platformSuffix(p))
}

// function builds fn's binary for one platform, its runtime image, and the package embedding that image.
func (b *builder) function(ctx context.Context, fn layout.Function, p v1.Platform) error {
	bin := b.binaryFile(fn, p)
	gobuild := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, source(fn))
	// Static, so that it runs on an empty base image.
	gobuild.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Architecture)
	if err := run(gobuild); err != nil {
		return err
	}
	binary, err := os.ReadFile(bin)
	if err != nil {
		return errors.Wrap(err, "cannot read the function's binary")
	}
	img, err := runtimeImage(binary, p)
	if err != nil {
		return err
	}
	digest, err := img.Digest()
	if err != nil {
		return errors.Wrap(err, "cannot compute the runtime image's digest")
	}

	stage := filepath.Join(b.work, fn.Package+"-"+platformSuffix(p))
	root := filepath.Join(stage, "package")
	// Every YAML file beside the metadata goes in: the function's input CRD, for one.
	if err := copyYAML(filepath.Join("package", "functions", fn.Dir), root); err != nil {
		return err
	}
	// The tag only names the image inside the tarball; crossplane xpkg build reads its only image.
	tag, err := name.NewTag("kiso-dev/" + fn.Package + ":" + b.version)
	if err != nil {
		return errors.Wrap(err, "cannot name the runtime image")
	}
	runtimeTar := filepath.Join(stage, "runtime.tar")
	if err := tarball.WriteToFile(runtimeTar, tag, img); err != nil {
		return errors.Wrap(err, "cannot write the runtime image")
	}
	xpkg := b.packageFile(fn, p)
	// --examples-root names a directory that does not exist: the package has no examples, and none are
	// picked up from the working directory.
	if err := run(exec.CommandContext(ctx, b.crossplane, "xpkg", "build", "--package-root="+root, //nolint:gosec // the CLI hack/build-tool.sh built
		"--examples-root="+filepath.Join(stage, "examples"), "--embed-runtime-image-tarball="+runtimeTar, "-o", xpkg)); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "built %s: runtime image %s (%s, user %s), binary %d bytes\n", xpkg, digest, p, nonRootUser, len(binary))
	return nil
}

// hostAliases links function-<name>.xpkg and bin/function-<name> to this machine's platform's package and
// binary, when it is one of those built: what a local install or run (the end-to-end suite's) wants.
func (b *builder) hostAliases(fn layout.Function) error {
	host := v1.Platform{OS: runtime.GOOS, Architecture: runtime.GOARCH}
	for _, p := range b.platforms {
		if !p.Equals(host) {
			continue
		}
		links := map[string]string{
			filepath.Join(b.out, fn.Package+".xpkg"): b.packageFile(fn, p),
			filepath.Join(b.out, "bin", fn.Package):  b.binaryFile(fn, p),
		}
		for link, target := range links {
			// Relative, so that the output directory can be moved or copied whole.
			if err := os.Symlink(filepath.Base(target), link); err != nil {
				return errors.Wrapf(err, "cannot link %s to this machine's platform's", link)
			}
		}
	}
	return nil
}

// copyYAML copies every *.yaml file of dir (not of its subdirectories) into dest.
func copyYAML(dir, dest string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return errors.Wrapf(err, "cannot list %s", dir)
	}
	if len(files) == 0 {
		return errors.Errorf("cannot find a YAML file in %s", dir)
	}
	for _, f := range files {
		if err := copyFile(f, filepath.Join(dest, filepath.Base(f))); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(src, dest string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return errors.Wrapf(err, "cannot read %s", src)
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o750); err != nil {
		return errors.Wrapf(err, "cannot create %s", filepath.Dir(dest))
	}
	return errors.Wrapf(os.WriteFile(dest, data, 0o600), "cannot write %s", dest) //nolint:gosec // dest is under the scratch directory
}

// crossplaneCLI returns the path of the Crossplane CLI, built once per version by hack/build-tool.sh.
func crossplaneCLI(ctx context.Context) (string, error) {
	cmd := exec.CommandContext(ctx, "hack/build-tool.sh", "crossplane-cli")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", errors.Wrap(err, "cannot build the Crossplane CLI")
	}
	return strings.TrimSpace(string(out)), nil
}

// run runs a command with its output on stderr, naming it in the error if it fails.
func run(cmd *exec.Cmd) error {
	cmd.Stdout = os.Stderr
	cmd.Stderr = os.Stderr
	return errors.Wrapf(cmd.Run(), "%s failed", strings.Join(cmd.Args, " "))
}
