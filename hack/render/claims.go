package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"sigs.k8s.io/yaml"

	"github.com/kiso-dev/kiso/internal/layout"
)

// claimInputs lists the claims under examples/claims/: make examples validates each against its XRD's claim
// schema and renders it through the XR Crossplane would create for it.
func claimInputs(src string) ([]example, error) {
	claims, err := filepath.Glob(filepath.Join(src, "examples", "claims", "*.yaml"))
	if err != nil {
		return nil, fmt.Errorf("cannot list claims: %w", err)
	}
	slices.Sort(claims)
	inputs := make([]example, 0, len(claims))
	for _, c := range claims {
		inputs = append(inputs, example{Label: relative(src, c), Dir: filepath.Dir(c), Claim: c})
	}
	return inputs, nil
}

// claimXR writes the XR Crossplane creates for a claim into dir: the XRD's composite kind, cluster-scoped, with
// the claim's spec. It has no references to render from, so the render shows what a claim gets before the
// platform's objects exist.
func claimXR(xrds []layout.XRD, claim, dir string) (string, error) {
	data, err := os.ReadFile(claim)
	if err != nil {
		return "", fmt.Errorf("cannot read %s: %w", claim, err)
	}
	objs, err := layout.Objects(data)
	if err != nil || len(objs) != 1 {
		return "", fmt.Errorf("%s must hold one claim: %w", claim, err)
	}
	obj := objs[0]
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	xrd, ok := layout.XRDFor(xrds, apiVersion, kind)
	if !ok || xrd.ClaimKind != kind {
		return "", fmt.Errorf("%s: no XRD under apis/ offers the claim %s %s", claim, apiVersion, kind)
	}
	obj["kind"] = xrd.Kind
	if meta, ok := obj["metadata"].(map[string]any); ok {
		delete(meta, "namespace")
	}
	out, err := yaml.Marshal(obj)
	if err != nil {
		return "", fmt.Errorf("cannot encode the XR of %s: %w", claim, err)
	}
	path := filepath.Join(dir, filepath.Base(claim)+".xr.yaml")
	if err := os.WriteFile(path, out, 0o600); err != nil { //nolint:gosec // in this run's work directory
		return "", fmt.Errorf("cannot write the XR of %s: %w", claim, err)
	}
	return path, nil
}
