package main

import (
	"archive/tar"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

func TestRuntimeImageRunsTheBinaryAsNonRoot(t *testing.T) {
	for _, p := range []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}} {
		t.Run(p.String(), func(t *testing.T) {
			img, err := runtimeImage([]byte("binary"), p)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			got := struct {
				OS, Architecture, User string
				Entrypoint             []string
			}{cfg.OS, cfg.Architecture, cfg.Config.User, cfg.Config.Entrypoint}
			want := struct {
				OS, Architecture, User string
				Entrypoint             []string
			}{p.OS, p.Architecture, "65532:65532", []string{"/function"}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRuntimeImageHoldsOnlyTheBinaryOwnedByRoot(t *testing.T) {
	img, err := runtimeImage([]byte("binary"), v1.Platform{OS: "linux", Architecture: "arm64"})
	if err != nil {
		t.Fatal(err)
	}
	r := mutate.Extract(img)
	defer r.Close()
	tr := tar.NewReader(r)
	type file struct {
		Name     string
		Mode     int64
		UID, GID int
		ModTime  time.Time
		Content  string
	}
	var got []file
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		content, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, file{h.Name, h.Mode, h.Uid, h.Gid, h.ModTime.UTC(), string(content)})
	}
	// Writable by root only: the function, running as 65532, cannot replace itself.
	want := []file{{Name: "function", Mode: 0o755, ModTime: time.Unix(0, 0).UTC(), Content: "binary"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
}

func TestRuntimeImageDigestDependsOnlyOnTheBinary(t *testing.T) {
	p := v1.Platform{OS: "linux", Architecture: "amd64"}
	digest := func(binary string) v1.Hash {
		t.Helper()
		img, err := runtimeImage([]byte(binary), p)
		if err != nil {
			t.Fatal(err)
		}
		d, err := img.Digest()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	first := digest("binary")
	// No time of the build is in the image: every time it holds is the epoch, so building again at any
	// later moment gives the same digest (checked on the times themselves, not by waiting for the clock).
	img, err := runtimeImage([]byte("binary"), p)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	times := []time.Time{cfg.Created.Time}
	for _, h := range cfg.History {
		times = append(times, h.Created.Time)
	}
	for _, at := range times {
		if !at.IsZero() && !at.Equal(time.Unix(0, 0)) {
			t.Errorf("the image records a time of its build, %s; only the epoch keeps its digest the binary's alone", at)
		}
	}
	if again := digest("binary"); again != first {
		t.Errorf("the same binary built %s, then %s", first, again)
	}
	if other := digest("other binary"); other == first {
		t.Errorf("two binaries built the same image %s", first)
	}
}
