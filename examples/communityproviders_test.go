package examples_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// communityRegistry is where the community publishes its builds of provider-aws (crossplane-contrib's
// provider-upjet-aws), one package per family member as Upbound does.
const communityRegistry = "xpkg.crossplane.io/crossplane-contrib/"

// TestTheCommunityImageConfigRewritesEveryProviderKisoNeeds: with examples/install/community-providers.yaml, every
// provider package kiso's Configuration depends on, every one the install applies, and the family provider they
// depend on are pulled from the community's builds of the same package, and nothing else the install names (kiso's
// packages, provider-kubernetes, provider-helm) is rewritten. Crossplane matches the longest prefix and replaces it.
func TestTheCommunityImageConfigRewritesEveryProviderKisoNeeds(t *testing.T) {
	rewritten := communityRewrite(t)
	needed, others := installedPackages(t)
	for _, pkg := range needed {
		got, ok := rewritten(pkg)
		name := pkg[strings.LastIndex(pkg, "/")+1:]
		if !ok || got != communityRegistry+name {
			t.Errorf("%s is pulled from %s, want the community's %s", pkg, got, communityRegistry+name)
		}
	}
	for _, pkg := range others {
		if got, ok := rewritten(pkg); ok {
			t.Errorf("%s, which the install names, is rewritten to %s", pkg, got)
		}
	}
}

// communityRewrite reads examples/install/community-providers.yaml's ImageConfig and returns the path Crossplane
// pulls a package from under it: the longest matching prefix replaced, and whether one matched.
func communityRewrite(t *testing.T) func(pkg string) (string, bool) {
	t.Helper()
	configs := readObjects(t, filepath.Join(root, "examples", "install", "community-providers.yaml"))
	if len(configs) != 1 || configs[0]["kind"] != "ImageConfig" {
		t.Fatalf("examples/install/community-providers.yaml holds %d objects, want one ImageConfig", len(configs))
	}
	spec, _ := configs[0]["spec"].(map[string]any)
	rewrite, _ := spec["rewriteImage"].(map[string]any)
	to, _ := rewrite["prefix"].(string)
	var prefixes []string
	matches, _ := spec["matchImages"].([]any)
	for _, m := range matches {
		match, _ := m.(map[string]any)
		if kind, ok := match["type"].(string); ok && kind != "Prefix" {
			t.Fatalf("matchImages: type %s, want Prefix", kind)
		}
		prefix, _ := match["prefix"].(string)
		prefixes = append(prefixes, prefix)
	}
	return func(pkg string) (string, bool) {
		longest := ""
		for _, p := range prefixes {
			if strings.HasPrefix(pkg, p) && len(p) > len(longest) {
				longest = p
			}
		}
		if longest == "" {
			return pkg, false
		}
		return to + strings.TrimPrefix(pkg, longest), true
	}
}

// installedPackages are the provider packages kiso needs (its Configuration's dependencies, the provider-aws
// members the install applies, without their tag, and the family provider they depend on, which installs their
// ProviderConfig), and every other package the install names.
func installedPackages(t *testing.T) (needed, others []string) {
	t.Helper()
	for _, obj := range readObjects(t, filepath.Join(root, "package", "configuration", "crossplane.yaml")) {
		spec, _ := obj["spec"].(map[string]any)
		deps, _ := spec["dependsOn"].([]any)
		for _, d := range deps {
			dep, _ := d.(map[string]any)
			if pkg, _ := dep["package"].(string); dep["kind"] == "Provider" {
				needed = append(needed, pkg)
			}
		}
	}
	if len(needed) == 0 {
		t.Fatal("kiso's Configuration depends on no provider")
	}
	installed, _ := filepath.Glob(filepath.Join(root, "examples", "install", "*.yaml"))
	for _, f := range installed {
		for _, obj := range readObjects(t, f) {
			spec, _ := obj["spec"].(map[string]any)
			pkg, _ := spec["package"].(string)
			switch {
			case pkg == "":
			case obj["kind"] == "Provider" && strings.Contains(pkg, "/provider-aws-"):
				// The tag stays: the community publishes the same release under the same version.
				name, _, _ := strings.Cut(pkg, ":")
				needed = append(needed, name)
			default:
				others = append(others, pkg)
			}
		}
	}
	return append(needed, "xpkg.upbound.io/upbound/provider-family-aws"), others
}
