package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/kiso-dev/kiso/internal/layout"
)

// renderExamples builds what the renders need while the network is reachable, renders in a network namespace
// when one is available, then reports, rewrites goldens or compares with them, and validates.
func renderExamples(ctx context.Context, root, src string, m mode, sel selection) error {
	fns, err := layout.Functions(src)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "kiso-render-")
	if err != nil {
		return fmt.Errorf("cannot create a work directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	if err := os.MkdirAll(filepath.Join(tmp, "out"), 0o750); err != nil {
		return fmt.Errorf("cannot create a work directory: %w", err)
	}
	examples, err := selectExamples(src, tmp, m, sel, fns)
	if err != nil {
		return err
	}
	if len(examples) == 0 {
		fmt.Fprintln(os.Stderr, "no examples to render")
		return nil
	}

	p, schemas, err := prepare(ctx, root, src, m, fns, examples)
	if err != nil {
		return err
	}
	p.Tmp = tmp

	failed := false
	if err := serveInNamespace(ctx, p); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !errors.Is(err, errFailed) {
			fmt.Fprintln(os.Stderr, err)
		}
		failed = true
	}

	v, err := newValidator(root, src, p.CLI, schemas)
	if err != nil {
		return err
	}
	ok, err := report(ctx, m, examples, v)
	if err != nil {
		return err
	}
	if !ok {
		failed = true
	}
	if failed {
		return errFailed
	}
	if m == modeCheck {
		claims := 0
		for _, ex := range examples {
			if ex.Claim != "" {
				claims++
			}
		}
		fmt.Fprintf(os.Stderr, "ok: %d example(s) render as expected and pass schema validation; %d claim(s) pass it and render\n", len(examples)-claims, claims)
	}
	return nil
}

// prepare builds, while the network is reachable, what the renders need: the Crossplane CLI and core, the
// functions the examples call, and (to validate) the CRD schemas.
func prepare(ctx context.Context, root, src string, m mode, fns []layout.Function, examples []example) (plan, string, error) {
	p := plan{Mode: m, Examples: examples, Debug: os.Getenv("KISO_DEBUG") == "1"}
	var err error
	if p.CLI, err = buildTool(ctx, root, "crossplane-cli"); err != nil {
		return p, "", err
	}
	if p.Core, err = buildTool(ctx, root, "crossplane-core"); err != nil {
		return p, "", err
	}
	var schemas string
	if m != modeRender {
		if schemas, err = schemaDir(ctx, root); err != nil {
			return p, "", err
		}
	}
	p.Functions, err = buildFunctions(ctx, root, src, fns, examples)
	return p, schemas, err
}

// report prints the renders, rewrites the goldens or compares with them, and validates, as the mode asks. It
// says whether every example passed.
func report(ctx context.Context, m mode, examples []example, v *validator) (bool, error) {
	passed := true
	var toValidate []validated
	for _, ex := range examples {
		out, err := os.ReadFile(ex.Out)
		if err != nil {
			fmt.Fprintf(os.Stderr, "NOT RENDERED %s (the render run stopped early)\n", ex.Label)
			passed = false
			continue
		}
		switch m {
		case modeRender, modeOne:
			if _, err := os.Stdout.Write(out); err != nil {
				return false, fmt.Errorf("cannot write the render: %w", err)
			}
		case modeGolden:
			if err := os.WriteFile(filepath.Join(ex.Dir, "expected.yaml"), out, 0o644); err != nil { //nolint:gosec // goldens are checked in, world-readable
				return false, fmt.Errorf("cannot write %s/expected.yaml: %w", ex.Label, err)
			}
			fmt.Fprintf(os.Stderr, "wrote %s/expected.yaml\n", ex.Label)
		case modeCheck:
			if ex.Claim == "" && !compareGolden(ctx, ex) {
				passed = false
			}
		}
		if bytes.HasPrefix(out, []byte(renderFailedPrefix)) {
			if ex.Claim != "" {
				fmt.Fprintf(os.Stderr, "FAILED %s: its XR does not render:\n%s", ex.Label, out)
			}
			if m == modeOne || ex.Claim != "" {
				passed = false
			}
			continue
		}
		if m != modeRender {
			toValidate = append(toValidate, v.prepare(ex, out))
		}
		if ex.Claim != "" {
			toValidate = append(toValidate, validated{label: ex.Label, path: ex.Claim})
		}
	}
	if len(toValidate) > 0 && !v.validate(ctx, toValidate) {
		passed = false
	}
	return passed, nil
}

// compareGolden diffs an example's render with its expected.yaml, and says whether they are the same.
func compareGolden(ctx context.Context, ex example) bool {
	golden := filepath.Join(ex.Dir, "expected.yaml")
	if !exists(golden) {
		fmt.Fprintf(os.Stderr, "MISSING %s/expected.yaml (run: make golden)\n", ex.Label)
		return false
	}
	if showDiff(ctx, ex.Label+"/expected.yaml", "rendered", golden, ex.Out) {
		return true
	}
	fmt.Fprintf(os.Stderr, "DIFF %s: rendered output differs from expected.yaml (run: make golden, then review the diff)\n", ex.Label)
	return false
}

// showDiff prints a unified diff of two files on stderr, and says whether they are the same.
func showDiff(ctx context.Context, labelA, labelB, a, b string) bool {
	cmd := exec.CommandContext(ctx, "diff", "-u", "--label", labelA, "--label", labelB, a, b)
	cmd.Stdout = os.Stderr
	cmd.Stderr = os.Stderr
	return cmd.Run() == nil
}

// buildTool returns the path of a tool binary, built once per version by hack/build-tool.sh.
func buildTool(ctx context.Context, root string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(root, "hack", "build-tool.sh"), args...) //nolint:gosec // the repository's own script
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("cannot build tool %s: %w", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}

// schemaDir returns the directory of the real CRD schemas, fetched once per version by hack/schemas.sh.
func schemaDir(ctx context.Context, root string) (string, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(root, "hack", "schemas.sh")) //nolint:gosec // the repository's own script
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("cannot fetch the CRD schemas: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// buildFunctions builds the functions the examples call into the cache; go build relinks only when a
// function's sources or dependencies changed.
func buildFunctions(ctx context.Context, root, src string, fns []layout.Function, examples []example) ([]servedFunction, error) {
	cache := os.Getenv("KISO_CACHE")
	if cache == "" {
		cache = filepath.Join(root, ".cache")
	}
	binDir := filepath.Join(cache, "render", "bin")
	if src != root {
		h := fnv.New32a()
		_, _ = h.Write([]byte(src))
		binDir = fmt.Sprintf("%s-%d", binDir, h.Sum32())
	}
	var served []servedFunction
	built := map[string]bool{}
	for _, ex := range examples {
		for _, ref := range ex.Functions {
			fn := functionFor(fns, ref)
			if built[ref] {
				continue
			}
			built[ref] = true
			binary := filepath.Join(binDir, fn.Dir)
			cmd := exec.CommandContext(ctx, "go", "build", "-o", binary, "./functions/"+fn.Dir) //nolint:gosec // a directory listed under functions/
			cmd.Dir = src
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
			cmd.Stdout = os.Stderr
			cmd.Stderr = os.Stderr
			if err := cmd.Run(); err != nil {
				return nil, fmt.Errorf("cannot build functions/%s: %w", fn.Dir, err)
			}
			served = append(served, servedFunction{Name: ref, Package: fn.Package, Binary: binary})
		}
	}
	return served, nil
}
