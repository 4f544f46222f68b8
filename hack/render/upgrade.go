package main

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/kiso-dev/kiso/internal/layout"
)

// An upgrade must not replace a tenant's node outside its cluster's waves. Karpenter replaces a node when its
// NodePool's node template changes (and, on AWS, when its EC2NodeClass's spec does), so the upgrade check renders
// every organization example as the last release renders it (its functions, Compositions and examples, built
// from the git history as a user upgrading would have run them), then renders the same XRs with this tree's
// functions and again with the release's, the release's objects as observed (with the status its example
// observed), and compares the two: the same state, the same XR and references, so any change of a pool's node
// template or NodeClass spec is the upgrade's own, and it would replace the pool's nodes in every organization at
// once. A release may not make one; what a platform changes (a reference, the cluster's tags) moves in waves.

// compositionResourceName is the annotation by which Crossplane names a composed resource in its XR.
const compositionResourceName = "crossplane.io/composition-resource-name"

// checkUpgrade renders the organization examples of a release, then this tree's render of them with the
// release's objects as observed, and reports every pool whose nodes would be replaced outside a wave.
func checkUpgrade(ctx context.Context, root, rev string) error {
	version := rev
	commit := rev
	if rev == "" {
		var err error
		if version, commit, err = layout.LastRelease(ctx, root); err != nil {
			return err
		}
	}
	tmp, err := os.MkdirTemp("", "kiso-upgrade-")
	if err != nil {
		return fmt.Errorf("cannot create a work directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	old := filepath.Join(tmp, "release")
	if err := layout.ExtractCommit(ctx, root, commit, old); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "upgrade: rendering the organization examples of %s (%.12s) with its own functions\n", version, commit)
	dirs, err := filepath.Glob(filepath.Join(old, "examples", "isolation", "*", "xr.yaml"))
	if err != nil {
		return fmt.Errorf("cannot list the release's examples: %w", err)
	}
	for i := range dirs {
		dirs[i] = filepath.Dir(dirs[i])
	}
	slices.Sort(dirs)
	before, err := renderWith(ctx, root, old, filepath.Join(tmp, "before"), selection{dirs: dirs})
	if err != nil {
		return err
	}

	// Both the release and this tree render the state the release left, so a difference is the upgrade's, not
	// the next step of a switch or rollout the state was in.
	var inputs []selection
	var labels []string
	for _, ex := range before {
		in, ok, err := upgradeInputs(ex, filepath.Join(tmp, "inputs", filepath.Base(ex.Dir)))
		if err != nil {
			return err
		}
		if ok {
			inputs = append(inputs, selection{one: in})
			labels = append(labels, ex.Label)
		}
	}
	fmt.Fprintf(os.Stderr, "upgrade: rendering the state %s left, with its functions and with this tree's\n", version)
	stayed, err := renderWith(ctx, root, old, filepath.Join(tmp, "stayed"), inputs...)
	if err != nil {
		return err
	}
	upgraded, err := renderWith(ctx, root, root, filepath.Join(tmp, "upgraded"), inputs...)
	if err != nil {
		return err
	}

	var problems []string
	pools := 0
	for i, label := range labels {
		stayed[i].Label, upgraded[i].Label = label, label
		n, p, err := compareUpgrade(stayed[i], upgraded[i])
		if err != nil {
			return err
		}
		pools += n
		problems = append(problems, p...)
	}
	if len(problems) > 0 {
		fmt.Fprintf(os.Stderr, "upgrade from %s changes what existing pools' nodes are launched from, in every organization at once:\n  %s\n", version, strings.Join(problems, "\n  "))
		return errFailed
	}
	fmt.Fprintf(os.Stderr, "ok: upgrading from %s, the %d pool(s) of %d organization example(s) keep their node templates and NodeClasses\n", version, pools, len(labels))
	return nil
}

// renderWith renders selections with the functions and Compositions of the tree src, into work, serving the
// functions once for all of them.
func renderWith(ctx context.Context, root, src, work string, sels ...selection) ([]example, error) {
	fns, err := layout.Functions(src)
	if err != nil {
		return nil, err
	}
	var examples []example
	for i, sel := range sels {
		dir := filepath.Join(work, fmt.Sprintf("%03d", i))
		if err := os.MkdirAll(filepath.Join(dir, "out"), 0o750); err != nil {
			return nil, fmt.Errorf("cannot create a work directory: %w", err)
		}
		m := modeRender
		if len(sel.one) > 0 {
			m = modeOne
		}
		got, err := selectExamples(src, dir, m, sel, fns)
		if err != nil {
			return nil, err
		}
		examples = append(examples, got...)
	}
	p, _, err := prepare(ctx, root, src, modeRender, fns, examples)
	if err != nil {
		return nil, err
	}
	p.Tmp = work
	if err := serveInNamespace(ctx, p); err != nil {
		return nil, err
	}
	return examples, nil
}

// upgradeInputs writes what the upgraded functions see of an example the release rendered: its XR (with the
// status the release wrote), its required resources, and the resources the release composed as observed, each
// with the status the example observed. It says false for an example the release refused to render: nothing was
// composed to upgrade.
func upgradeInputs(ex example, dir string) ([]string, bool, error) {
	out, err := os.ReadFile(ex.Out)
	if err != nil {
		return nil, false, fmt.Errorf("%s: the release's render is missing: %w", ex.Label, err)
	}
	if bytes.HasPrefix(out, []byte(renderFailedPrefix)) {
		return nil, false, nil
	}
	docs, err := layout.Objects(out)
	if err != nil {
		return nil, false, fmt.Errorf("%s: cannot read the release's render: %w", ex.Label, err)
	}
	statuses := map[string]any{}
	if ex.Observed != "" {
		data, err := os.ReadFile(ex.Observed)
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", ex.Label, err)
		}
		observed, err := layout.Objects(data)
		if err != nil {
			return nil, false, fmt.Errorf("%s: cannot read observed.yaml: %w", ex.Label, err)
		}
		for _, o := range observed {
			if name := resourceName(o); name != "" && o["status"] != nil {
				statuses[name] = o["status"]
			}
		}
	}
	xrData, err := os.ReadFile(ex.XR)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", ex.Label, err)
	}
	var xr map[string]any
	if err := yaml.Unmarshal(xrData, &xr); err != nil {
		return nil, false, fmt.Errorf("%s: cannot read xr.yaml: %w", ex.Label, err)
	}
	var composed []map[string]any
	for i, d := range docs {
		if i == 0 {
			// crossplane render writes the XR first, with the status the functions gave it.
			if s, ok := d["status"]; ok {
				xr["status"] = s
			}
			continue
		}
		name := resourceName(d)
		if name == "" {
			continue
		}
		if s, ok := statuses[name]; ok {
			d["status"] = s
		}
		composed = append(composed, d)
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, false, fmt.Errorf("cannot create %s: %w", dir, err)
	}
	xrPath, observedPath := filepath.Join(dir, "xr.yaml"), filepath.Join(dir, "observed.yaml")
	if err := writeDocs(xrPath, []map[string]any{xr}); err != nil {
		return nil, false, err
	}
	if err := writeDocs(observedPath, composed); err != nil {
		return nil, false, err
	}
	return []string{xrPath, ex.Required, observedPath}, true, nil
}

func resourceName(o map[string]any) string {
	md, _ := o["metadata"].(map[string]any)
	an, _ := md["annotations"].(map[string]any)
	name, _ := an[compositionResourceName].(string)
	return name
}

func writeDocs(path string, docs []map[string]any) error {
	var b bytes.Buffer
	for _, d := range docs {
		y, err := yaml.Marshal(d)
		if err != nil {
			return fmt.Errorf("cannot write %s: %w", path, err)
		}
		b.WriteString("---\n")
		b.Write(y)
	}
	return os.WriteFile(path, b.Bytes(), 0o600)
}

// replacing is what Karpenter compares to decide a node drifted, of one composed resource: a NodePool's node
// template, a NodeClass's spec; nil for anything else.
func replacing(o map[string]any) any {
	kind, _ := o["kind"].(string)
	apiVersion, _ := o["apiVersion"].(string)
	switch {
	case kind == "NodePool" && strings.HasPrefix(apiVersion, "karpenter.sh/"):
		spec, _ := o["spec"].(map[string]any)
		return spec["template"]
	case strings.HasSuffix(kind, "NodeClass") && !strings.HasPrefix(apiVersion, "kiso.dev/"):
		return o["spec"]
	}
	return nil
}

// compareUpgrade lists the pools' objects whose node-replacing part the upgrade changes (or drops), and counts
// the NodePools it compared.
func compareUpgrade(stayed, upgraded example) (int, []string, error) {
	read := func(ex example) (map[string]map[string]any, error) {
		data, err := os.ReadFile(ex.Out)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ex.Label, err)
		}
		if bytes.HasPrefix(data, []byte(renderFailedPrefix)) {
			return nil, fmt.Errorf("%s: the upgraded functions do not render what the release rendered:\n%s", ex.Label, data)
		}
		docs, err := layout.Objects(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ex.Label, err)
		}
		out := map[string]map[string]any{}
		for _, d := range docs {
			if name := resourceName(d); name != "" && replacing(d) != nil {
				out[name] = d
			}
		}
		return out, nil
	}
	was, err := read(stayed)
	if err != nil {
		return 0, nil, err
	}
	is, err := read(upgraded)
	if err != nil {
		return 0, nil, err
	}
	pools := 0
	var problems []string
	for _, name := range slices.Sorted(maps.Keys(was)) {
		o := was[name]
		if o["kind"] == "NodePool" {
			pools++
		}
		n, ok := is[name]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: %s %s is no longer composed", stayed.Label, o["kind"], name))
			continue
		}
		if diff := cmp.Diff(replacing(o), replacing(n)); diff != "" {
			problems = append(problems, fmt.Sprintf("%s: %s %s changes (-release +upgraded):\n%s", stayed.Label, o["kind"], name, diff))
		}
	}
	return pools, problems, nil
}
