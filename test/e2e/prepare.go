package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Versions of everything the harness runs or reads CRDs from. Tool versions live in tools/*/build.env.
const (
	crossplaneModule         = "github.com/crossplane/crossplane/v2@v2.4.0"
	providerAWSModule        = "github.com/upbound/provider-aws/v2@v2.5.0"
	karpenterModule          = "github.com/aws/karpenter-provider-aws@v1.15.0"
	karpenterCoreModule      = "sigs.k8s.io/karpenter@v1.15.0"
	kwokModule               = "sigs.k8s.io/kwok@v0.8.0"
	prometheusOperatorModule = "github.com/prometheus-operator/prometheus-operator@v0.85.0"
)

// packageVersion tags the packages the harness builds and pushes to its loopback registry.
const packageVersion = "v0.0.0-e2e"

// providerAWSCRDs are the cluster-scoped provider-aws kinds kiso composes: their CRDs stand in for the
// providers, which do not run here.
var providerAWSCRDs = []string{
	"iam.aws.upbound.io_roles.yaml",
	"iam.aws.upbound.io_policies.yaml",
	"iam.aws.upbound.io_rolepolicies.yaml",
	"iam.aws.upbound.io_rolepolicyattachments.yaml",
	"iam.aws.upbound.io_instanceprofiles.yaml",
	"sqs.aws.upbound.io_queues.yaml",
	"sqs.aws.upbound.io_queuepolicies.yaml",
	"cloudwatchevents.aws.upbound.io_rules.yaml",
	"cloudwatchevents.aws.upbound.io_targets.yaml",
	"eks.aws.upbound.io_podidentityassociations.yaml",
	"eks.aws.upbound.io_accessentries.yaml",
}

// karpenterCRDs are Karpenter's CRDs as its AWS provider ships them: the NodePool and NodeClaim kiso's users run,
// which differ from sigs.k8s.io/karpenter's only in restricting the karpenter.k8s.aws label domain, so they
// serve EC2NodeClass pools (which no controller here makes Ready) and KWOKNodeClass pools alike. Karpenter
// watches NodeOverlays and CapacityBuffers too, so their CRDs must exist before it starts.
var karpenterCRDs = []string{
	"karpenter.sh_nodepools.yaml",
	"karpenter.sh_nodeclaims.yaml",
	"karpenter.sh_nodeoverlays.yaml",
	"autoscaling.x-k8s.io_capacitybuffers.yaml",
	"karpenter.k8s.aws_ec2nodeclasses.yaml",
}

// kwokNodeClassCRD is the NodeClass of Karpenter's KWOK provider, which runs here: its nodes are kwok's.
const kwokNodeClassCRD = "kwok/apis/crds/karpenter.kwok.sh_kwoknodeclasses.yaml"

// kwokStages are the node and pod lifecycles kwok plays (kwokctl's defaults with node leases): nodes become
// Ready and renew their lease, pods become Running and Ready, complete, and go when deleted.
var kwokStages = []string{
	"kustomize/stage/node/fast/node-initialize.yaml",
	"kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
	"kustomize/stage/pod/fast/pod-ready.yaml",
	"kustomize/stage/pod/fast/pod-complete.yaml",
	"kustomize/stage/pod/fast/pod-delete.yaml",
}

// A kisoFunction is one of kiso's composition functions: its source, its package, and the name Crossplane
// gives the Function when it resolves the Configuration's dependencies (owner-repository of the package), which
// is the name the Compositions refer to.
type kisoFunction struct {
	Source       string // directory under functions/
	Package      string // repository name of the package
	FunctionName string // metadata.name of the installed Function
	Binary       string // the binary built into the package, run here as the function's runtime
	XPKG         string // the built package file
}

// packageOwner is the last path element of the registry kiso's packages are pushed to.
const packageOwner = "kiso-dev"

// configurationPackage is the repository name of kiso's Configuration package.
const configurationPackage = "configuration-kiso"

var kisoFunctions = []kisoFunction{
	{Source: "isolation", Package: "function-isolation"},
	{Source: "cluster", Package: "function-cluster"},
}

// prepared is everything the run needs that must be fetched or built while the network is reachable: the
// run itself happens in a network namespace with only loopback.
type prepared struct {
	RepoRoot string

	Etcd              string
	KubeAPIServer     string
	KubeControllerMgr string
	KubeScheduler     string
	Kubectl           string
	Kwok              string
	Karpenter         string // Karpenter with its KWOK provider
	Crane             string
	Crossplane        string // core
	CrossplaneCLI     string

	CrossplaneCRDDir     string
	CrossplaneWebhookDir string   // the ValidatingWebhookConfigurations core init applies
	CRDFiles             []string // provider-aws, Karpenter and PrometheusRule CRDs, applied before Crossplane starts
	ProviderAWSCRDFiles  []string // the provider-aws CRDs among CRDFiles: what a provider package would install
	CrossplaneChart      string   // Crossplane's Helm chart, whose RBAC the harness applies
	KarpenterChart       string   // Karpenter's KWOK Helm chart, whose RBAC the harness applies
	KwokStages           []string // kwok's stage files

	PackageDir    string         // hack/xpkg.sh output
	Functions     []kisoFunction // only those whose package was built
	Configuration string         // configuration package file
}

// prepare builds (or finds cached) tools and packages, and locates CRD files in module zips.
func prepare(ctx context.Context, repoRoot, workDir string, phases *phaseTimer) (*prepared, error) {
	p := &prepared{RepoRoot: repoRoot}
	err := phases.run("build or find cached tools", func() error {
		tools := []struct {
			dest *string
			args []string
		}{
			{&p.Etcd, []string{"etcd"}},
			{&p.KubeAPIServer, []string{"kubernetes", "kube-apiserver"}},
			{&p.KubeControllerMgr, []string{"kubernetes", "kube-controller-manager"}},
			{&p.KubeScheduler, []string{"kubernetes", "kube-scheduler"}},
			{&p.Kubectl, []string{"kubernetes", "kubectl"}},
			{&p.Kwok, []string{"kwok"}},
			{&p.Karpenter, []string{"karpenter-kwok"}},
			{&p.Crane, []string{"crane"}},
			{&p.Crossplane, []string{"crossplane-core"}},
			{&p.CrossplaneCLI, []string{"crossplane-cli"}},
		}
		for _, tool := range tools {
			path, err := buildTool(ctx, repoRoot, tool.args...)
			if err != nil {
				return err
			}
			*tool.dest = path
		}
		return nil
	})
	if err != nil {
		return nil, err
	}

	err = phases.run("locate CRDs in module zips", func() error {
		dirs := map[string]string{}
		for _, module := range []string{crossplaneModule, providerAWSModule, karpenterModule, karpenterCoreModule, kwokModule, prometheusOperatorModule} {
			dir, err := moduleDir(ctx, workDir, module)
			if err != nil {
				return err
			}
			dirs[module] = dir
		}
		p.CrossplaneCRDDir = filepath.Join(dirs[crossplaneModule], "cluster", "crds")
		p.CrossplaneWebhookDir = filepath.Join(dirs[crossplaneModule], "cluster", "webhookconfigurations")
		p.CrossplaneChart = filepath.Join(dirs[crossplaneModule], "cluster", "charts", "crossplane")
		p.KarpenterChart = filepath.Join(dirs[karpenterCoreModule], "kwok", "charts")
		for _, name := range providerAWSCRDs {
			p.ProviderAWSCRDFiles = append(p.ProviderAWSCRDFiles, filepath.Join(dirs[providerAWSModule], "package", "crds", name))
		}
		p.CRDFiles = append(p.CRDFiles, p.ProviderAWSCRDFiles...)
		for _, name := range karpenterCRDs {
			p.CRDFiles = append(p.CRDFiles, filepath.Join(dirs[karpenterModule], "pkg", "apis", "crds", name))
		}
		p.CRDFiles = append(p.CRDFiles, filepath.Join(dirs[karpenterCoreModule], filepath.FromSlash(kwokNodeClassCRD)))
		p.CRDFiles = append(p.CRDFiles, filepath.Join(dirs[prometheusOperatorModule], "example", "prometheus-operator-crd", "monitoring.coreos.com_prometheusrules.yaml"))
		for _, stage := range kwokStages {
			p.KwokStages = append(p.KwokStages, filepath.Join(dirs[kwokModule], filepath.FromSlash(stage)))
		}
		checked := append([]string{p.CrossplaneCRDDir, p.CrossplaneWebhookDir, p.CrossplaneChart, p.KarpenterChart}, p.CRDFiles...)
		for _, f := range append(checked, p.KwokStages...) {
			if _, err := os.Stat(f); err != nil {
				return fmt.Errorf("cannot find CRDs: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}

	err = phases.run("build packages (hack/xpkg.sh build)", func() error {
		p.PackageDir = filepath.Join(workDir, "xpkg")
		if _, err := runCommand(ctx, []string{"XPKG_OUTPUT=" + p.PackageDir, "VERSION=" + packageVersion},
			nil, filepath.Join(repoRoot, "hack", "xpkg.sh"), "build"); err != nil {
			return err
		}
		for _, fn := range kisoFunctions {
			fn.XPKG = filepath.Join(p.PackageDir, fn.Package+".xpkg")
			fn.Binary = filepath.Join(p.PackageDir, "bin", fn.Package)
			fn.FunctionName = packageOwner + "-" + fn.Package
			if _, err := os.Stat(fn.XPKG); errors.Is(err, os.ErrNotExist) {
				fmt.Fprintf(os.Stdout, "e2e: functions/%s has no package yet; its Function is not installed\n", fn.Source)
				continue
			}
			p.Functions = append(p.Functions, fn)
		}
		p.Configuration = filepath.Join(p.PackageDir, configurationPackage+".xpkg")
		if _, err := os.Stat(p.Configuration); err != nil {
			return fmt.Errorf("cannot find the configuration package: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// buildTool returns the path of a tool binary, built once per version by hack/build-tool.sh.
func buildTool(ctx context.Context, repoRoot string, args ...string) (string, error) {
	out, err := runCommand(ctx, nil, nil, filepath.Join(repoRoot, "hack", "build-tool.sh"), args...)
	if err != nil {
		return "", fmt.Errorf("cannot build tool %s: %w", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}

// moduleDir returns where the Go module cache holds an extracted module, downloading it if needed.
func moduleDir(ctx context.Context, workDir, module string) (string, error) {
	// Run outside any module, so the version asked for is the version downloaded.
	out, err := runCommand(ctx, nil, nil, "go", "-C", workDir, "mod", "download", "-json", module)
	var info struct {
		Path, Version, Dir, Error string
	}
	if jsonErr := json.Unmarshal(out, &info); jsonErr != nil {
		return "", fmt.Errorf("cannot download module %s: %w", module, errors.Join(err, jsonErr))
	}
	if info.Dir != "" {
		return info.Dir, nil
	}
	// A module whose go directive is newer than this Go (Karpenter's) is downloaded and extracted all the
	// same, but reported as an error without its Dir: find it where the module cache keeps it.
	cache, cacheErr := runCommand(ctx, nil, nil, "go", "env", "GOMODCACHE")
	if cacheErr != nil {
		return "", fmt.Errorf("cannot find the module cache: %w", cacheErr)
	}
	dir := filepath.Join(strings.TrimSpace(string(cache)), escapeModulePath(info.Path)+"@"+info.Version)
	if _, statErr := os.Stat(dir); statErr != nil {
		return "", fmt.Errorf("cannot download module %s: %s", module, info.Error)
	}
	return dir, nil
}

// escapeModulePath spells a module path the way the module cache does: each upper-case letter as "!" and
// its lower case.
func escapeModulePath(path string) string {
	var b strings.Builder
	for _, r := range path {
		if 'A' <= r && r <= 'Z' {
			b.WriteByte('!')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// findRepoRoot walks up from the working directory to the directory holding hack/build-tool.sh.
func findRepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("cannot get working directory: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "hack", "build-tool.sh")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("cannot find the repository root (a directory with hack/build-tool.sh) above the working directory")
		}
		dir = parent
	}
}
