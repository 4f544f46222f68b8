package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/kiso-dev/kiso/internal/layout"
)

// A validator runs `crossplane resource validate` on rendered objects, against the real CRD schemas and the XRDs.
type validator struct {
	cli, schemas string
	// extensions are the schema folders and XRDs, comma-separated as the CLI takes them.
	extensions string
	// crossplaneImage names the Crossplane release whose CRDs hack/schemas.sh laid out in the validate cache.
	crossplaneImage string
	// skip matches the apiVersion of documents validation must not see.
	skip *regexp.Regexp
	// noSchema is the group of a kind whose schema cannot be obtained here, or "".
	noSchema string
}

// A validated file is one example's render, without the documents validation must not see.
type validated struct {
	label, path string
}

func newValidator(root, src, cli, schemas string) (*validator, error) {
	v := &validator{cli: cli, schemas: schemas}
	if schemas == "" {
		return v, nil
	}
	version, err := layout.ToolVersion(root, "crossplane-core")
	if err != nil {
		return nil, err
	}
	v.crossplaneImage = "xpkg.crossplane.io/crossplane/crossplane:" + version
	exts := []string{filepath.Join(schemas, "karpenter"), filepath.Join(schemas, "aws"), filepath.Join(schemas, "prometheus"), filepath.Join(schemas, "providers")}
	// Kinds with no schema obtainable here are not validated (reported); every other kind must have one.
	if rackspace, _ := filepath.Glob(filepath.Join(schemas, "rackspace", "*.yaml")); len(rackspace) > 0 {
		exts = append(exts, filepath.Join(schemas, "rackspace"))
	} else {
		v.noSchema = "karpenter.rackspace.com"
	}
	xrds, err := filepath.Glob(filepath.Join(src, "apis", "*", "definition.yaml"))
	if err != nil {
		return nil, fmt.Errorf("cannot list XRDs: %w", err)
	}
	v.extensions = strings.Join(append(exts, xrds...), ",")
	// The Result and Context objects render appends have no schema.
	skip := `render\.crossplane\.io`
	if v.noSchema != "" {
		skip += "|" + regexp.QuoteMeta(v.noSchema)
	}
	v.skip = regexp.MustCompile(`^(` + skip + `)/`)
	return v, nil
}

// prepare writes the documents of an example's render that validation must see beside its render.
func (v *validator) prepare(ex example, out []byte) validated {
	var kept strings.Builder
	noSchema := false
	for _, doc := range splitDocuments(string(out)) {
		skip := false
		for _, line := range strings.Split(doc, "\n") {
			if rest, ok := strings.CutPrefix(line, "apiVersion:"); ok {
				fields := strings.Fields(rest)
				if len(fields) > 0 && v.skip.MatchString(fields[0]) {
					skip = true
				}
				if len(fields) > 0 && v.noSchema != "" && strings.HasPrefix(fields[0], v.noSchema+"/") {
					noSchema = true
				}
			}
		}
		if !skip {
			kept.WriteString(doc)
			kept.WriteString(wrappedManifest(doc))
		}
	}
	if noSchema {
		fmt.Fprintf(os.Stderr, "note: %s: RackspaceSpotNodeClass not validated (no schema available here)\n", ex.Label)
	}
	path := ex.Out + ".validate.yaml"
	if err := os.WriteFile(path, []byte(kept.String()), 0o600); err != nil {
		fmt.Fprintf(os.Stderr, "cannot write %s: %v\n", path, err)
	}
	return validated{label: ex.Label, path: path}
}

// validate validates the files in one run (loading every schema takes about a second); when that fails, it
// re-runs each file to name the failing examples. It says whether all are valid.
func (v *validator) validate(ctx context.Context, files []validated) bool {
	paths := make([]string, 0, len(files))
	for _, f := range files {
		paths = append(paths, f.path)
	}
	out, ok := v.run(ctx, paths)
	if ok {
		return true
	}
	named := false
	for _, f := range files {
		if fileOut, ok := v.run(ctx, []string{f.path}); !ok {
			fmt.Fprintf(os.Stderr, "INVALID %s:\n%s", f.label, fileOut)
			named = true
		}
	}
	if !named {
		_, _ = os.Stderr.Write(out)
	}
	return false
}

func (v *validator) run(ctx context.Context, paths []string) ([]byte, bool) {
	//nolint:gosec // the CLI hack/build-tool.sh built, on this run's files
	cmd := exec.CommandContext(ctx, v.cli, "resource", "validate", v.extensions, strings.Join(paths, ","),
		"--cache-dir="+filepath.Join(v.schemas, "validate-cache"), "--crossplane-image="+v.crossplaneImage,
		"--error-on-missing-schemas", "--skip-success-results")
	out, err := cmd.CombinedOutput()
	return out, err == nil
}

// splitDocuments splits a YAML stream before each "---" line, keeping every line.
func splitDocuments(stream string) []string {
	var docs []string
	var cur strings.Builder
	for _, line := range strings.SplitAfter(stream, "\n") {
		if strings.TrimRight(line, " \t\r\v\f\n") == "---" && cur.Len() > 0 {
			docs = append(docs, cur.String())
			cur.Reset()
		}
		cur.WriteString(line)
	}
	if cur.Len() > 0 {
		docs = append(docs, cur.String())
	}
	return docs
}

// wrappedManifest returns, for a provider-kubernetes Object, the object it composes into the workload cluster as
// one more document, so that it is validated against its own kind's schema too (the Object's schema takes any
// manifest); "" for any other document, and for an observe-only Object, whose manifest only names what it reads.
func wrappedManifest(doc string) string {
	if !strings.Contains(doc, "kind: Object") {
		return ""
	}
	var o struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Spec       struct {
			ManagementPolicies []string `json:"managementPolicies"`
			ForProvider        struct {
				Manifest map[string]any `json:"manifest"`
			} `json:"forProvider"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal([]byte(doc), &o); err != nil || o.Kind != "Object" || !strings.HasPrefix(o.APIVersion, "kubernetes.crossplane.io/") ||
		o.Spec.ForProvider.Manifest == nil || slices.Equal(o.Spec.ManagementPolicies, []string{"Observe"}) {
		return ""
	}
	manifest, err := yaml.Marshal(o.Spec.ForProvider.Manifest)
	if err != nil {
		return ""
	}
	return "---\n" + string(manifest)
}
