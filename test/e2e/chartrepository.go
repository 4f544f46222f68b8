package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/Masterminds/semver/v3"
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

// serveKarpenterCharts serves Karpenter's AWS chart and its CRD chart (karpenter-crd) at the version Karpenter
// publishes them under (see servedChart), and both again at a later version, the bump, for a scenario that
// upgrades Karpenter: the same charts, but for the NodePool CRD's description, which names the version
// (bumpedNodePoolDescription), so that the scenario sees the upgrade reach the CRDs. It returns where a Release
// finds Karpenter's chart at the first version, and the bump.
func serveKarpenterCharts(p *prepared, dir string) (ChartSource, string, error) {
	base := p.KarpenterAWSChartVersion
	bump, err := bumpedVersion(base)
	if err != nil {
		return ChartSource{}, "", err
	}
	var served []servedChart
	for _, version := range []string{base, bump} {
		crds := servedChart{dir: p.KarpenterCRDChart, version: version, appVersion: base}
		if version == bump {
			crds.edit = describeNodePoolCRD(bump)
		}
		served = append(served, servedChart{dir: p.KarpenterAWSChart, version: version, appVersion: base}, crds)
	}
	repository, err := serveCharts(served, dir)
	if err != nil {
		return ChartSource{}, "", err
	}
	return ChartSource{Repository: repository, Name: karpenterChartName, Version: base}, bump, nil
}

// karpenterChartName is the name of Karpenter's AWS chart.
const karpenterChartName = "karpenter"

// bumpedVersion is the version the harness serves Karpenter's charts under for an upgrade: the next patch
// release, marked as the harness's (1.15.0 gives 1.15.1-e2e), which Karpenter never publishes.
func bumpedVersion(version string) (string, error) {
	v, err := semver.NewVersion(version)
	if err != nil {
		return "", fmt.Errorf("cannot read Karpenter's chart version %q: %w", version, err)
	}
	bumped, err := v.IncPatch().SetPrerelease("e2e")
	if err != nil {
		return "", err
	}
	return bumped.String(), nil
}

// nodePoolCRDTemplate is the template of the CRD chart that renders the NodePool CRD, and nodePoolDescription the
// line of its schema's top-level description.
const (
	nodePoolCRDTemplate = "templates/karpenter.sh_nodepools.yaml"
	nodePoolDescription = "description: NodePool is the Schema for the NodePools API\n"
)

// bumpedNodePoolDescription is the NodePool CRD's schema description in the CRD chart served under version.
func bumpedNodePoolDescription(version string) string {
	return "NodePool is the Schema for the NodePools API (as the e2e harness serves it under " + version + ")"
}

// describeNodePoolCRD changes the NodePool CRD's schema description to bumpedNodePoolDescription.
func describeNodePoolCRD(version string) func(*chart.Chart) error {
	return func(c *chart.Chart) error {
		for _, f := range c.Templates {
			if f.Name != nodePoolCRDTemplate {
				continue
			}
			if !bytes.Contains(f.Data, []byte(nodePoolDescription)) {
				return fmt.Errorf("chart %s: %s has no line %q", c.Name(), f.Name, nodePoolDescription)
			}
			f.Data = bytes.Replace(f.Data, []byte(nodePoolDescription), []byte("description: "+bumpedNodePoolDescription(version)+"\n"), 1)
			return nil
		}
		return fmt.Errorf("chart %s has no %s", c.Name(), nodePoolCRDTemplate)
	}
}

// A servedChart is one version of a chart the harness's repository serves: the chart's folder, in a module zip,
// the version and app version it is served under, and a change to it, if any. Karpenter's Chart.yaml can lag
// the release (v1.15.0's says 1.14.1): Karpenter publishes its charts under the release's version, and so does
// the harness.
type servedChart struct {
	dir, version, appVersion string
	edit                     func(*chart.Chart) error
}

// serveCharts packages each chart into dir, with an index.yaml listing them all, and serves dir over plain HTTP
// on a free loopback port, for the rest of the run; it returns the repository's URL.
//
// A classic repository rather than the harness's OCI registry: provider-helm's registry client speaks only
// HTTPS (a Release's plainHTTP does not reach it), while it fetches a classic repository over plain HTTP. The
// server lives in the test binary, inside the network namespace, and ends with it. provider-helm keeps each
// chart it pulls by name and version, for good, in a folder every run on the machine shares (/tmp/charts): a
// change to what the harness serves under a version needs a new version.
func serveCharts(charts []servedChart, dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return "", fmt.Errorf("cannot create %s: %w", dir, err)
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("cannot listen for the chart repository: %w", err)
	}
	url := "http://" + listener.Addr().String()
	index := repositoryIndex{APIVersion: "v1", Entries: map[string][]indexEntry{}}
	for _, c := range charts {
		entry, err := packageChart(c, dir, url)
		if err != nil {
			_ = listener.Close()
			return "", err
		}
		index.Entries[entry.Name] = append(index.Entries[entry.Name], entry)
	}
	content, err := yaml.Marshal(index)
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "index.yaml"), content, 0o600)
	}
	if err != nil {
		_ = listener.Close()
		return "", fmt.Errorf("cannot write the chart repository's index: %w", err)
	}
	server := &http.Server{Handler: http.FileServer(http.Dir(dir)), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := server.Serve(listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(os.Stderr, "e2e: the chart repository at %s stopped: %v\n", url, err)
		}
	}()
	return url, nil
}

// packageChart packages one served chart into dir and returns its entry in the index of the repository at url.
func packageChart(c servedChart, dir, url string) (indexEntry, error) {
	loaded, err := loader.Load(c.dir)
	if err != nil {
		return indexEntry{}, fmt.Errorf("cannot load chart %s: %w", c.dir, err)
	}
	loaded.Metadata.Version, loaded.Metadata.AppVersion = c.version, c.appVersion
	if c.edit != nil {
		if err := c.edit(loaded); err != nil {
			return indexEntry{}, err
		}
	}
	archive, err := chartutil.Save(loaded, dir)
	if err != nil {
		return indexEntry{}, fmt.Errorf("cannot package chart %s: %w", c.dir, err)
	}
	content, err := os.ReadFile(archive)
	if err != nil {
		return indexEntry{}, fmt.Errorf("cannot read %s: %w", archive, err)
	}
	digest := sha256.Sum256(content)
	return indexEntry{Metadata: loaded.Metadata, URLs: []string{url + "/" + filepath.Base(archive)}, Digest: hex.EncodeToString(digest[:])}, nil
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
