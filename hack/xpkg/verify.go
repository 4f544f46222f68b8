package main

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"path"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	xperrors "github.com/crossplane/function-sdk-go/errors"
)

type verifyCmd struct{}

// Run checks the built packages as a cluster would run them, for every platform: each function's package
// file is an image whose config names that platform, runs its entrypoint as the non-root user, and whose
// entrypoint is a static binary for that platform's machine. The end-to-end suite runs one platform's package;
// this is where the others are proven.
func (verifyCmd) Run(c *cli) error {
	// Only what names the built files: verifying needs neither the Crossplane CLI nor a scratch directory.
	b := &builder{out: c.Output}
	var err error
	if b.platforms, err = parsePlatforms(c.Platforms); err != nil {
		return err
	}
	if b.functions, err = functions(); err != nil {
		return err
	}
	for _, fn := range b.functions {
		for _, p := range b.platforms {
			file := b.packageFile(fn, p)
			if err := verifyFunctionPackage(file, p); err != nil {
				return xperrors.Wrapf(err, "%s", file)
			}
			fmt.Fprintf(os.Stderr, "verified %s: %s, user %s, %s a static %s binary\n", file, p, nonRootUser, entrypoint, elfMachines[p.Architecture])
		}
	}
	if _, err := os.Stat(b.configurationFile()); err != nil {
		return xperrors.Wrap(err, "cannot find the Configuration package")
	}
	return nil
}

// elfMachines is the ELF machine a binary for each architecture kiso builds for must name.
var elfMachines = map[string]elf.Machine{
	"amd64": elf.EM_X86_64,
	"arm64": elf.EM_AARCH64,
}

// verifyFunctionPackage checks one function package file against the platform it was built for.
func verifyFunctionPackage(file string, p v1.Platform) error {
	img, err := tarball.ImageFromPath(file, nil)
	if err != nil {
		return xperrors.Wrap(err, "cannot read the package")
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return xperrors.Wrap(err, "cannot read the package's config")
	}
	if cfg.OS != p.OS || cfg.Architecture != p.Architecture {
		return fmt.Errorf("config is for %s/%s, want %s", cfg.OS, cfg.Architecture, p)
	}
	if cfg.Config.User != nonRootUser {
		return fmt.Errorf("runs as user %q, want %q", cfg.Config.User, nonRootUser)
	}
	if len(cfg.Config.Entrypoint) != 1 || cfg.Config.Entrypoint[0] != entrypoint {
		return fmt.Errorf("entrypoint %q, want [%s]", cfg.Config.Entrypoint, entrypoint)
	}
	binary, err := fileInImage(img, entrypoint)
	if err != nil {
		return err
	}
	return verifyBinary(binary, p)
}

// fileInImage reads one regular file of an image's flattened file system.
func fileInImage(img v1.Image, name string) ([]byte, error) {
	r := mutate.Extract(img)
	defer func() { _ = r.Close() }()
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("image holds no %s", name)
		}
		if err != nil {
			return nil, xperrors.Wrap(err, "cannot read the image's files")
		}
		if path.Clean("/"+h.Name) != name {
			continue
		}
		if h.Typeflag != tar.TypeReg {
			return nil, fmt.Errorf("%s is not a regular file", name)
		}
		if h.Uid != 0 || h.Mode&0o022 != 0 {
			return nil, fmt.Errorf("%s is owned by uid %d with mode %o: the function could replace its own binary", name, h.Uid, h.Mode)
		}
		return io.ReadAll(tr)
	}
}

// verifyBinary checks that a binary runs on the platform's machine and needs no dynamic loader: the runtime
// image has nothing but the binary.
func verifyBinary(binary []byte, p v1.Platform) error {
	want, ok := elfMachines[p.Architecture]
	if !ok {
		return fmt.Errorf("no ELF machine known for architecture %s", p.Architecture)
	}
	f, err := elf.NewFile(bytes.NewReader(binary))
	if err != nil {
		return xperrors.Wrapf(err, "%s is not an ELF binary", entrypoint)
	}
	defer func() { _ = f.Close() }()
	if f.Machine != want {
		return fmt.Errorf("%s is built for %s, want %s", entrypoint, f.Machine, want)
	}
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			return fmt.Errorf("%s needs a dynamic loader; the runtime image has none", entrypoint)
		}
	}
	return nil
}
