package main

import (
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// TestPushedDigestIsWhatTheTagNamed: the list the release signs names each package by the digest its tag named
// once pushed, in the tag's repository, read from a registry as the Crossplane CLI pushed to it.
func TestPushedDigestIsWhatTheTagNamed(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	tag := strings.TrimPrefix(srv.URL, "http://") + "/kiso-dev/function-isolation:v1.2.3"
	img, err := random.Image(256, 1)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(tag)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatal(err)
	}
	digest, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	got, err := pushedDigest(t.Context(), tag)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.TrimSuffix(tag, ":v1.2.3") + "@" + digest.String(); got != want {
		t.Errorf("pushedDigest(%s) = %s, want %s", tag, got, want)
	}
	if _, err := pushedDigest(t.Context(), strings.TrimSuffix(tag, ":v1.2.3")+":v9.9.9"); err == nil {
		t.Error("pushedDigest read a digest for a tag never pushed")
	}
}
