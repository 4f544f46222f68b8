package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/internal/layout"
)

// compatibilityPage is where a platform reads what kiso needs and what it is tested with.
const compatibilityPage = "docs/compatibility.md"

// TestTheCompatibilityMatrixIsWhatIsRequiredAndRun: the matrix a platform reads before installing must say what
// the packages require and what the end-to-end suite runs, so neither can change without the page.
func TestTheCompatibilityMatrixIsWhatIsRequiredAndRun(t *testing.T) {
	inRepositoryRoot(t)
	rows := compatibilityRows(t)

	crossplane := rows["Crossplane"]
	for _, file := range packageMetadataFiles(t) {
		var meta struct {
			Spec struct {
				Crossplane struct {
					Version string `json:"version"`
				} `json:"crossplane"`
				DependsOn []struct {
					Package string `json:"package"`
					Version string `json:"version"`
				} `json:"dependsOn"`
			} `json:"spec"`
		}
		readYAML(t, file, &meta)
		if want := "`" + meta.Spec.Crossplane.Version + "`"; crossplane.requires != want {
			t.Errorf("%s: Crossplane requires %s, the package %s", compatibilityPage, crossplane.requires, want)
		}
		for _, dep := range meta.Spec.DependsOn {
			if !strings.Contains(dep.Package, "/provider-aws-") {
				continue
			}
			if want := "`" + dep.Version + "`"; rows["provider-aws (iam, sqs, cloudwatchevents, eks)"].requires != want {
				t.Errorf("%s: provider-aws requires %s, %s depends on %s %s", compatibilityPage, rows["provider-aws (iam, sqs, cloudwatchevents, eks)"].requires, file, dep.Package, want)
			}
		}
	}

	runs := map[string]string{
		"Crossplane":          toolVersion(t, "crossplane-core"),
		"Kubernetes":          toolVersion(t, "kubernetes"),
		"provider-kubernetes": toolVersion(t, "provider-kubernetes"),
		"provider-helm":       toolVersion(t, "provider-helm"),
	}
	for component, version := range runs {
		if got := rows[component].runs; got != version {
			t.Errorf("%s: the e2e runs %s %q, tools/ builds %s", compatibilityPage, component, got, version)
		}
	}
	karpenter := rows["Karpenter"].runs
	if want := toolVersion(t, "karpenter-kwok") + " (KWOK provider)"; !strings.HasPrefix(karpenter, want) {
		t.Errorf("%s: the e2e runs Karpenter %q, want it to start %q (tools/karpenter-kwok)", compatibilityPage, karpenter, want)
	}
	if want := "chart `karpenter.install` installs: " + v1alpha1.DefaultChartInstallVersion; !strings.HasSuffix(karpenter, want) {
		t.Errorf("%s: Karpenter %q, want it to end %q (the chart version karpenter.install defaults to)", compatibilityPage, karpenter, want)
	}
	if want := providerAWSCRDVersion(t) + " CRDs"; !strings.HasPrefix(rows["provider-aws (iam, sqs, cloudwatchevents, eks)"].runs, want) {
		t.Errorf("%s: provider-aws %q, want it to start %q (hack/crds.env)", compatibilityPage, rows["provider-aws (iam, sqs, cloudwatchevents, eks)"].runs, want)
	}
}

// A compatibilityRow is one component's line of the matrix.
type compatibilityRow struct{ requires, runs string }

// compatibilityRows reads the matrix between the page's markers, by component.
func compatibilityRows(t *testing.T) map[string]compatibilityRow {
	t.Helper()
	page, err := os.ReadFile(compatibilityPage)
	if err != nil {
		t.Fatal(err)
	}
	table := regexp.MustCompile(`(?s)<!-- compatibility -->\n(.*?)<!-- /compatibility -->`).FindSubmatch(page)
	if table == nil {
		t.Fatalf("%s: no table between <!-- compatibility --> markers", compatibilityPage)
	}
	rows := map[string]compatibilityRow{}
	for _, line := range strings.Split(strings.TrimSpace(string(table[1])), "\n")[2:] {
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 3 {
			t.Fatalf("%s: row %q has %d cells, want 3", compatibilityPage, line, len(cells))
		}
		rows[strings.TrimSpace(cells[0])] = compatibilityRow{requires: strings.TrimSpace(cells[1]), runs: strings.TrimSpace(cells[2])}
	}
	for _, component := range []string{"Crossplane", "Kubernetes", "Karpenter", "provider-aws (iam, sqs, cloudwatchevents, eks)", "provider-kubernetes", "provider-helm"} {
		if _, ok := rows[component]; !ok {
			t.Errorf("%s: no row for %s", compatibilityPage, component)
		}
	}
	return rows
}

// packageMetadataFiles lists the crossplane.yaml of the Configuration and of each function.
func packageMetadataFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("package", "*", "crossplane.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	fns, err := filepath.Glob(filepath.Join("package", "functions", "*", "crossplane.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return append(files, fns...)
}

func readYAML(t *testing.T, file string, into any) {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, into); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

// toolVersion is the VERSION a tool's build.env pins.
func toolVersion(t *testing.T, tool string) string {
	t.Helper()
	env, err := os.ReadFile(filepath.Join("tools", tool, "build.env"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(env), "\n") {
		if v, ok := strings.CutPrefix(line, "VERSION="); ok {
			return v
		}
	}
	t.Fatalf("tools/%s/build.env sets no VERSION", tool)
	return ""
}

// providerAWSCRDVersion is the provider-aws release whose CRDs the renders are validated against and the e2e
// applies (hack/crds.env).
func providerAWSCRDVersion(t *testing.T) string {
	t.Helper()
	sources, err := layout.CRDSources(".")
	if err != nil {
		t.Fatal(err)
	}
	aws, ok := sources["PROVIDER_AWS"]
	if !ok {
		t.Fatal("hack/crds.env lists no PROVIDER_AWS module")
	}
	return aws.Version
}
