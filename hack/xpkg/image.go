package main

import (
	"archive/tar"
	"bytes"
	"io"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/crossplane/function-sdk-go/errors"
)

const (
	// entrypoint is where a function's binary lives in its runtime image.
	entrypoint = "/function"
	// nonRootUser is the user and group a function runs as: the conventional "nonroot" of distroless images,
	// numeric so that a pod's runAsNonRoot can verify it without an /etc/passwd.
	nonRootUser = "65532:65532"
)

// epoch is the mtime of every file in a runtime image: a build time would change the digest of every build.
var epoch = time.Unix(0, 0).UTC()

// runtimeImage is a function's runtime image for one platform: its static binary as /function on an empty
// base, run as a non-root user. Owners, modes and mtimes are fixed, so the digest depends on the binary alone.
func runtimeImage(binary []byte, platform v1.Platform) (v1.Image, error) {
	var layerTar bytes.Buffer
	w := tar.NewWriter(&layerTar)
	// Owned by root and not writable by the user the function runs as; readable and executable by all.
	hdr := &tar.Header{
		Typeflag: tar.TypeReg,
		Name:     entrypoint[1:],
		Mode:     0o755,
		Size:     int64(len(binary)),
		ModTime:  epoch,
		Format:   tar.FormatPAX,
	}
	if err := w.WriteHeader(hdr); err != nil {
		return nil, errors.Wrap(err, "cannot write the runtime layer")
	}
	if _, err := w.Write(binary); err != nil {
		return nil, errors.Wrap(err, "cannot write the runtime layer")
	}
	if err := w.Close(); err != nil {
		return nil, errors.Wrap(err, "cannot write the runtime layer")
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar.Bytes())), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, errors.Wrap(err, "cannot build the runtime layer")
	}

	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{
		Layer:   layer,
		History: v1.History{Created: v1.Time{Time: epoch}, CreatedBy: "kiso hack/xpkg: the function's binary"},
	})
	if err != nil {
		return nil, errors.Wrap(err, "cannot add the runtime layer")
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, errors.Wrap(err, "cannot read the runtime image's config")
	}
	cfg = cfg.DeepCopy()
	cfg.Created = v1.Time{Time: epoch}
	cfg.OS = platform.OS
	cfg.Architecture = platform.Architecture
	cfg.Config.Entrypoint = []string{entrypoint}
	cfg.Config.User = nonRootUser
	img, err = mutate.ConfigFile(img, cfg)
	return img, errors.Wrap(err, "cannot configure the runtime image")
}
