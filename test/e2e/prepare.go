package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/kiso-dev/kiso/internal/layout"
)

// packageVersion tags the packages the harness builds and pushes to its loopback registry.
const packageVersion = "v0.0.0-e2e"

// dependencies are the Go modules the harness reads CRDs, charts and stages from, as module@version, and the
// CRD files it applies from them (paths from the module's root).
type dependencies struct {
	crossplane, karpenterCore, kwok          string // follow the tools built from them
	providerKubernetes, providerHelm         string // likewise
	providerAWS, karpenter, prometheus       string // hack/crds.env
	providerAWSCRDs, karpenterCRDs, promCRDs []string
}

// readDependencies reads the modules kiso's CRDs come from, with their CRD files, from hack/crds.env (which
// hack/schemas.sh reads for make examples), and the versions of the modules whose tools the harness runs from
// their tools/<name>/build.env.
func readDependencies(repoRoot string) (dependencies, error) {
	sources, err := layout.CRDSources(repoRoot)
	if err != nil {
		return dependencies{}, err
	}
	var d dependencies
	for _, m := range []struct {
		dest  *string
		files *[]string
		name  string
	}{
		{&d.providerAWS, &d.providerAWSCRDs, "PROVIDER_AWS"},
		{&d.karpenter, &d.karpenterCRDs, "KARPENTER"},
		{&d.prometheus, &d.promCRDs, "PROMETHEUS"},
	} {
		s, ok := sources[m.name]
		if !ok {
			return dependencies{}, fmt.Errorf("hack/crds.env sets no %s_MODULE", m.name)
		}
		*m.dest, *m.files = s.ModuleVersion(), s.Files
	}
	for _, m := range []struct {
		dest         *string
		module, tool string
	}{
		{&d.crossplane, "github.com/crossplane/crossplane/v2", "crossplane-core"},
		{&d.karpenterCore, "sigs.k8s.io/karpenter", "karpenter-kwok"},
		{&d.kwok, "sigs.k8s.io/kwok", "kwok"},
		{&d.providerKubernetes, "github.com/crossplane-contrib/provider-kubernetes", "provider-kubernetes"},
		{&d.providerHelm, "github.com/crossplane-contrib/provider-helm", "provider-helm"},
	} {
		version, err := layout.ToolVersion(repoRoot, m.tool)
		if err != nil {
			return dependencies{}, err
		}
		*m.dest = m.module + "@" + version
	}
	return d, nil
}

// providerCRDDir holds the CRDs of a Crossplane provider's package, in the provider's module.
const providerCRDDir = "package/crds"

// karpenterAWSChart is Karpenter's AWS chart, in the module of its AWS provider, and karpenterCRDChart the chart
// of its CRDs beside it, which kiso installs them from. The harness serves both (serveKarpenterCharts).
const (
	karpenterAWSChart = "charts/karpenter"
	karpenterCRDChart = "charts/karpenter-crd"
)

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

// prepared is everything the run needs that must be fetched or built while the network is reachable: the
// run itself happens in a network namespace with only loopback.
type prepared struct {
	RepoRoot string

	Etcd               string
	KubeAPIServer      string
	KubeControllerMgr  string
	KubeScheduler      string
	Kubectl            string
	Kwok               string
	Karpenter          string // Karpenter with its KWOK provider
	Crane              string
	Crossplane         string // core
	CrossplaneCLI      string
	ProviderKubernetes string // run for the workload cluster only (see Environment.Workload)
	ProviderHelm       string // likewise

	CrossplaneCRDDir     string
	CrossplaneWebhookDir string   // the ValidatingWebhookConfigurations core init applies
	CRDFiles             []string // provider-aws, Karpenter and PrometheusRule CRDs, applied before Crossplane starts
	ProviderAWSCRDFiles  []string // the provider-aws CRDs among CRDFiles: what a provider package would install
	KarpenterCRDFiles    []string // the Karpenter CRDs among CRDFiles, which the workload cluster holds too
	CrossplaneChart      string   // Crossplane's Helm chart, whose RBAC the harness applies
	KarpenterChart       string   // Karpenter's KWOK Helm chart, whose RBAC the harness applies
	KwokStages           []string // kwok's stage files

	// Every CRD of provider-kubernetes' and provider-helm's packages: what installing the packages would apply.
	ProviderKubernetesCRDFiles []string
	ProviderHelmCRDFiles       []string
	// Karpenter's AWS Helm chart, its CRD chart and the version Karpenter publishes them under, which the
	// harness serves to provider-helm.
	KarpenterAWSChart        string
	KarpenterCRDChart        string
	KarpenterAWSChartVersion string

	PackageDir    string         // hack/xpkg output
	Functions     []kisoFunction // only those whose package was built
	Configuration string         // configuration package file

	// Release is the last release, built from the git history, that the suite installs first and upgrades from;
	// nil when the upgrade scenario does not run.
	Release *release
}

// buildPackages builds the packages of the kiso tree src for this platform into dir, as version, and lists them.
func buildPackages(ctx context.Context, src, dir, version string) ([]kisoFunction, string, error) {
	if _, err := runCommand(ctx, []string{"XPKG_OUTPUT=" + dir, "VERSION=" + version, hostPlatformEnv()},
		nil, "go", "-C", src, "run", "./hack/xpkg", "build"); err != nil {
		return nil, "", err
	}
	return builtPackages(src, dir)
}

// builtPackages finds, in dir, the packages and function binaries built from the tree src.
func builtPackages(src, dir string) ([]kisoFunction, string, error) {
	fns, err := layout.Functions(src)
	if err != nil {
		return nil, "", err
	}
	var built []kisoFunction
	for _, f := range fns {
		fn := kisoFunction{
			Source:       f.Dir,
			Package:      f.Package,
			FunctionName: packageOwner + "-" + f.Package,
			XPKG:         filepath.Join(dir, f.Package+".xpkg"),
			Binary:       filepath.Join(dir, "bin", f.Package),
		}
		if _, err := os.Stat(fn.XPKG); errors.Is(err, os.ErrNotExist) {
			fmt.Fprintf(os.Stdout, "e2e: functions/%s has no package yet; its Function is not installed\n", fn.Source)
			continue
		}
		built = append(built, fn)
	}
	configuration := filepath.Join(dir, configurationPackage+".xpkg")
	if _, err := os.Stat(configuration); err != nil {
		return nil, "", fmt.Errorf("cannot find the configuration package: %w", err)
	}
	return built, configuration, nil
}

// prepare builds (or finds cached) tools and packages, and locates CRD files in module zips.
func prepare(ctx context.Context, repoRoot, workDir string, phases *phaseTimer) (*prepared, error) {
	p := &prepared{RepoRoot: repoRoot}
	err := phases.run("build or find cached tools", func() error {
		type tool struct {
			dest *string
			args []string
		}
		// Two lanes of builds, one after another within each, of about the same length on a cold machine:
		// Kubernetes' four commands, which share one module and its compiled packages, then the providers; and
		// Crossplane's (first: make verify, beside the suite in make test, renders the examples with both) and the
		// rest. One lane's module downloads and links leave a core idle that the other's compiles take up; found in
		// the cache, each build returns at once.
		lanes := [][]tool{
			{
				{&p.KubeAPIServer, []string{"kubernetes", "kube-apiserver"}},
				{&p.KubeControllerMgr, []string{"kubernetes", "kube-controller-manager"}},
				{&p.KubeScheduler, []string{"kubernetes", "kube-scheduler"}},
				{&p.Kubectl, []string{"kubernetes", "kubectl"}},
				{&p.ProviderKubernetes, []string{"provider-kubernetes"}},
				{&p.ProviderHelm, []string{"provider-helm"}},
			},
			{
				{&p.Crossplane, []string{"crossplane-core"}},
				{&p.CrossplaneCLI, []string{"crossplane-cli"}},
				{&p.Etcd, []string{"etcd"}},
				{&p.Kwok, []string{"kwok"}},
				{&p.Karpenter, []string{"karpenter-kwok"}},
				{&p.Crane, []string{"crane"}},
			},
		}
		var builds errgroup.Group
		for _, lane := range lanes {
			builds.Go(func() error {
				for _, t := range lane {
					path, err := buildTool(ctx, repoRoot, t.args...)
					if err != nil {
						return err
					}
					*t.dest = path
				}
				return nil
			})
		}
		return builds.Wait()
	})
	if err != nil {
		return nil, err
	}

	err = phases.run("locate CRDs in module zips", func() error {
		deps, err := readDependencies(repoRoot)
		if err != nil {
			return err
		}
		dirs := map[string]string{}
		for _, module := range []string{deps.crossplane, deps.providerAWS, deps.karpenter, deps.karpenterCore, deps.kwok, deps.prometheus, deps.providerKubernetes, deps.providerHelm} {
			dir, err := layout.ModuleDir(ctx, module)
			if err != nil {
				return err
			}
			dirs[module] = dir
		}
		p.CrossplaneCRDDir = filepath.Join(dirs[deps.crossplane], "cluster", "crds")
		p.CrossplaneWebhookDir = filepath.Join(dirs[deps.crossplane], "cluster", "webhookconfigurations")
		p.CrossplaneChart = filepath.Join(dirs[deps.crossplane], "cluster", "charts", "crossplane")
		p.KarpenterChart = filepath.Join(dirs[deps.karpenterCore], "kwok", "charts")
		for _, name := range deps.providerAWSCRDs {
			p.ProviderAWSCRDFiles = append(p.ProviderAWSCRDFiles, filepath.Join(dirs[deps.providerAWS], filepath.FromSlash(name)))
		}
		p.CRDFiles = append(p.CRDFiles, p.ProviderAWSCRDFiles...)
		for _, name := range deps.karpenterCRDs {
			p.KarpenterCRDFiles = append(p.KarpenterCRDFiles, filepath.Join(dirs[deps.karpenter], filepath.FromSlash(name)))
		}
		p.KarpenterCRDFiles = append(p.KarpenterCRDFiles, filepath.Join(dirs[deps.karpenterCore], filepath.FromSlash(kwokNodeClassCRD)))
		p.CRDFiles = append(p.CRDFiles, p.KarpenterCRDFiles...)
		for _, name := range deps.promCRDs {
			p.CRDFiles = append(p.CRDFiles, filepath.Join(dirs[deps.prometheus], filepath.FromSlash(name)))
		}
		for _, stage := range kwokStages {
			p.KwokStages = append(p.KwokStages, filepath.Join(dirs[deps.kwok], filepath.FromSlash(stage)))
		}
		for _, provider := range []struct {
			files  *[]string
			module string
		}{
			{&p.ProviderKubernetesCRDFiles, deps.providerKubernetes},
			{&p.ProviderHelmCRDFiles, deps.providerHelm},
		} {
			files, err := filepath.Glob(filepath.Join(dirs[provider.module], providerCRDDir, "*.yaml"))
			if err != nil || len(files) == 0 {
				return fmt.Errorf("cannot find CRDs: %s holds no %s/*.yaml", provider.module, providerCRDDir)
			}
			*provider.files = files
		}
		p.KarpenterAWSChart = filepath.Join(dirs[deps.karpenter], filepath.FromSlash(karpenterAWSChart))
		p.KarpenterCRDChart = filepath.Join(dirs[deps.karpenter], filepath.FromSlash(karpenterCRDChart))
		_, version, _ := strings.Cut(deps.karpenter, "@")
		p.KarpenterAWSChartVersion = strings.TrimPrefix(version, "v")
		checked := append([]string{p.CrossplaneCRDDir, p.CrossplaneWebhookDir, p.CrossplaneChart, p.KarpenterChart, p.KarpenterAWSChart, p.KarpenterCRDChart}, p.CRDFiles...)
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

	err = phases.run("build packages for this platform (go run ./hack/xpkg build)", func() error {
		p.PackageDir = filepath.Join(workDir, "xpkg")
		p.Functions, p.Configuration, err = buildPackages(ctx, repoRoot, p.PackageDir, packageVersion)
		return err
	})
	if err != nil {
		return nil, err
	}
	if upgradeSelected() {
		err = phases.run("build (or find cached) the last release's packages from the git history", func() error {
			p.Release, err = buildLastRelease(ctx, repoRoot, filepath.Join(workDir, "release"))
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	return p, nil
}

// buildTool returns the path of a tool binary, built once per version by hack/build-tool.sh. What the script says
// of its progress (which tool it builds, or waits for, and when it is done) is printed as it says it: on a fresh
// machine the builds take most of the first run, which would otherwise pass in silence. The rest of its output
// (the Go toolchain's) is printed only if the build fails.
func buildTool(ctx context.Context, repoRoot string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(repoRoot, "hack", "build-tool.sh"), args...)
	var stdout bytes.Buffer
	stderr := &progressWriter{prefix: buildToolProgress, out: os.Stdout}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("cannot build tool %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.rest.String()))
	}
	return strings.TrimSpace(stdout.String()), nil
}

// buildToolProgress begins the lines hack/build-tool.sh says its progress in.
const buildToolProgress = "build-tool: "

// progressWriter prints, as "e2e: ...", each whole line written to it that begins with prefix, and keeps the
// others.
type progressWriter struct {
	prefix  string
	out     io.Writer
	partial []byte
	rest    bytes.Buffer
}

func (w *progressWriter) Write(p []byte) (int, error) {
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := w.partial[:i+1]
		if progress, ok := bytes.CutPrefix(line, []byte(w.prefix)); ok {
			fmt.Fprintf(w.out, "e2e: %s", progress)
		} else {
			w.rest.Write(line)
		}
		w.partial = w.partial[i+1:]
	}
}

// hostPlatformEnv has hack/xpkg build and push only the platform the suite runs: make xpkg builds and verifies
// every platform kiso ships.
func hostPlatformEnv() string { return "PLATFORMS=" + runtime.GOOS + "/" + runtime.GOARCH }
