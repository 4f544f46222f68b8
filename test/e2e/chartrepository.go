package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"sigs.k8s.io/yaml"
)

// A ChartSource is where a provider-helm Release finds a chart: its spec.forProvider.chart.
type ChartSource struct {
	// Repository is the URL of a classic chart repository (an index.yaml and the packaged charts it lists).
	Repository string
	Name       string
	Version    string
}

// serveKarpenterChart packages Karpenter's AWS chart into dir, at the version Karpenter publishes it under, with
// an index.yaml listing it, and serves dir over plain HTTP on a free loopback port, for the rest of the run.
//
// A classic repository rather than the harness's OCI registry: provider-helm's registry client speaks only
// HTTPS (a Release's plainHTTP does not reach it), while it fetches a classic repository over plain HTTP. The
// server lives in the test binary, inside the network namespace, and ends with it.
func serveKarpenterChart(chartDir, version, dir string) (ChartSource, error) {
	karpenter, err := loader.Load(chartDir)
	if err != nil {
		return ChartSource{}, fmt.Errorf("cannot load chart %s: %w", chartDir, err)
	}
	karpenter.Metadata.Version, karpenter.Metadata.AppVersion = version, version
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return ChartSource{}, fmt.Errorf("cannot create %s: %w", dir, err)
	}
	archive, err := chartutil.Save(karpenter, dir)
	if err != nil {
		return ChartSource{}, fmt.Errorf("cannot package chart %s: %w", chartDir, err)
	}
	content, err := os.ReadFile(archive)
	if err != nil {
		return ChartSource{}, fmt.Errorf("cannot read %s: %w", archive, err)
	}
	digest := sha256.Sum256(content)

	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return ChartSource{}, fmt.Errorf("cannot listen for the chart repository: %w", err)
	}
	url := "http://" + listener.Addr().String()
	index, err := yaml.Marshal(repositoryIndex{
		APIVersion: "v1",
		Entries: map[string][]indexEntry{karpenter.Metadata.Name: {{
			Metadata: karpenter.Metadata,
			URLs:     []string{url + "/" + filepath.Base(archive)},
			Digest:   hex.EncodeToString(digest[:]),
		}}},
	})
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "index.yaml"), index, 0o600)
	}
	if err != nil {
		_ = listener.Close()
		return ChartSource{}, fmt.Errorf("cannot write the chart repository's index: %w", err)
	}
	server := &http.Server{Handler: http.FileServer(http.Dir(dir)), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := server.Serve(listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(os.Stderr, "e2e: the chart repository at %s stopped: %v\n", url, err)
		}
	}()
	return ChartSource{Repository: url, Name: karpenter.Metadata.Name, Version: version}, nil
}

// repositoryIndex is a classic chart repository's index.yaml: each chart's versions, with their metadata, where
// to download them and their SHA-256. Written here rather than with Helm's repo package, which would bring its
// command line's dependencies (kubectl's, kustomize, an OCI client) into the harness.
type repositoryIndex struct {
	APIVersion string                  `json:"apiVersion"`
	Entries    map[string][]indexEntry `json:"entries"`
}

type indexEntry struct {
	*chart.Metadata
	URLs   []string `json:"urls"`
	Digest string   `json:"digest"`
}
