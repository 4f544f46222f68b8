package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kiso-dev/kiso/internal/process"
)

// An Environment is a running kiso installation: a control plane, a registry holding kiso's packages, and
// Crossplane with kiso's Configuration and Functions installed from it. TestMain boots one for all tests.
type Environment struct {
	// Kubectl is the kubectl a user would run against this control plane.
	Kubectl *Kubectl
	// Cluster reads objects and waits on them.
	Cluster *Cluster
	// Kubeconfig is the administrator's kubeconfig, for tools a scenario runs itself.
	Kubeconfig string
	// RepoRoot is the kiso repository, e.g. to apply examples/.
	RepoRoot string
	// XRDs are the names of the CompositeResourceDefinitions the Configuration installed.
	XRDs []string
	// Functions are the names of the Functions installed, each served by its binary.
	Functions []string
	// Nodes says that Karpenter, kube-scheduler and kwok run, and that Crossplane and Karpenter act with
	// their own identities: only in the network namespace (see startNodes).
	Nodes bool
	// Timings are durations scenarios measured, printed after the run.
	Timings *timings
	// ProviderAWSCRDDir holds every CRD provider-aws v2 ships, for the kinds the harness does not install.
	ProviderAWSCRDDir string
	// Metrics holds each server's (crossplane, karpenter, function-isolation, ...) Prometheus metrics URL.
	Metrics *metricsURLs
	// KubernetesProviderPoll is how often provider-kubernetes, as installed, polls each managed resource; zero
	// until it runs.
	KubernetesProviderPoll time.Duration

	// Upgrade is what the upgrade from the last release found; nil when the run did not upgrade.
	Upgrade *upgradeRecord

	servers  *process.Group
	registry *registry
	released []*functionRuntime // the functions first installed, which an upgrade replaces
	// staleCompositeGauges is what Crossplane's XR controllers' queue and worker gauges kept from the controllers
	// an upgrade restarted (see recordStaleCompositeGauges), by controller; crossplaneIdle does not count it.
	staleCompositeGauges map[string]float64
	prepared             *prepared
	dir                  string
	controlPlane         *controlPlane
	workload             lazyWorkload
}

// env is the environment every test in this package runs against.
var env *Environment

// bootEnvironment starts everything, in order, printing each phase's duration. On error the servers
// started so far are left for the caller to stop, and their logs to print.
func bootEnvironment(ctx context.Context, p *prepared, dir string, servers *process.Group, phases *phaseTimer, isolatedNetwork bool) (*Environment, error) {
	e := &Environment{RepoRoot: p.RepoRoot, servers: servers, prepared: p, dir: dir, Nodes: isolatedNetwork, Timings: &timings{}, Metrics: &metricsURLs{}}
	if len(p.ProviderAWSCRDFiles) > 0 {
		e.ProviderAWSCRDDir = filepath.Dir(p.ProviderAWSCRDFiles[0])
	}

	cp, err := startControlPlane(ctx, servers, p, "", filepath.Join(dir, "controlplane"), phases)
	if err != nil {
		return e, err
	}
	e.controlPlane = cp
	e.Kubeconfig = cp.kubeconfig
	e.Kubectl = &Kubectl{binary: p.Kubectl, kubeconfig: cp.kubeconfig}
	if e.Cluster, err = newCluster(cp.kubeconfig); err != nil {
		return e, err
	}

	err = phases.run("apply provider-aws, Karpenter, PrometheusRule CRDs", func() error {
		if err := e.Kubectl.ApplyServerSide(ctx, p.CRDFiles...); err != nil {
			return fmt.Errorf("cannot apply CRDs: %w", err)
		}
		_, err := e.Kubectl.Run(ctx, nil, "wait", "--for=condition=Established", "--timeout=60s", "customresourcedefinitions", "--all")
		return err
	})
	if err != nil {
		return e, err
	}

	err = phases.run("start registry, push packages", func() error {
		if e.registry, err = startRegistry(ctx, servers, p.Crane); err != nil {
			return err
		}
		if p.Release != nil {
			if err := pushPackages(ctx, p.Crane, p.Release.packageSet, e.registry); err != nil {
				return err
			}
		}
		return pushPackages(ctx, p.Crane, p.packages(), e.registry)
	})
	if err != nil {
		return e, err
	}

	if e.Nodes {
		err = phases.run("start kube-scheduler, kwok, Karpenter", func() error {
			return startNodes(ctx, servers, e.Cluster, e.Kubectl, p, cp, karpenterRelease, filepath.Join(dir, "nodes"), e.Metrics)
		})
		if err != nil {
			return e, err
		}
	}

	// With the upgrade scenario, the last release goes in first, as a platform team installed it; organizations
	// onboard on it and this tree's packages go in as an upgrade of it before the scenarios run (upgradeFromRelease).
	first := p.packages()
	if p.Release != nil {
		first = p.Release.packageSet
	}
	err = phases.run("grant Crossplane kiso's RBAC and providers' kinds", func() error {
		return grantCrossplane(ctx, e.Kubectl, p, first.Source)
	})
	if err != nil {
		return e, err
	}

	err = phases.run("init and start Crossplane with its webhooks", func() error {
		return startCrossplane(ctx, servers, e.Cluster, e.Kubectl, p, cp, filepath.Join(dir, "crossplane"), e.Nodes, e.Metrics)
	})
	if err != nil {
		return e, err
	}

	what := "install packages, serve functions"
	serverSuffix := ""
	if p.Release != nil {
		what = "install the last release's packages (" + p.Release.Version + "), serve its functions"
		serverSuffix = "-" + p.Release.Version
	}
	err = phases.run(what, func() error {
		e.released, err = e.installPackages(ctx, first, serverSuffix)
		return err
	})
	return e, err
}

// installPackages installs a set of kiso's packages from the registry as a platform team does (the Functions, then
// the Configuration), serves each function with its binary under its Function's name plus serverSuffix, and waits
// until the Functions are Healthy and the Configuration's XRDs Established at the set's version.
func (e *Environment) installPackages(ctx context.Context, set packageSet, serverSuffix string) ([]*functionRuntime, error) {
	if err := e.Kubectl.Apply(ctx, installManifest(set, e.registry)); err != nil {
		return nil, fmt.Errorf("cannot install kiso's packages %s: %w", set.Version, err)
	}
	var runtimes []*functionRuntime
	e.Functions = nil
	for _, fn := range set.Functions {
		rt, err := serveFunctionAs(ctx, e.servers, e.Cluster, fn.FunctionName+serverSuffix, fn, set.Version, filepath.Join(e.dir, "functions"), e.Metrics)
		if err != nil {
			return nil, err
		}
		runtimes = append(runtimes, rt)
		e.Functions = append(e.Functions, fn.FunctionName)
	}
	for _, rt := range runtimes {
		if err := rt.waitHealthy(ctx, e.Cluster); err != nil {
			return nil, err
		}
	}
	var err error
	e.XRDs, err = waitForAPIs(ctx, e.Cluster, set.Version)
	return runtimes, err
}

// printDiagnostics prints what a failed run needs to be understood: server logs and Crossplane's objects.
func (e *Environment) printDiagnostics(ctx context.Context) {
	if e.Kubectl != nil {
		out, err := e.Kubectl.Run(ctx, nil, "get", "functions,functionrevisions,configurations,configurationrevisions,compositeresourcedefinitions,compositions", "-o", "wide")
		fmt.Fprintf(os.Stdout, "\n===== Crossplane objects =====\n%s%v\n", out, errOrEmpty(err))
		// Conditions and events say why a package is not Healthy; Crossplane logs it only with --debug.
		out, err = e.Kubectl.Run(ctx, nil, "describe", "functions,functionrevisions,configurations,configurationrevisions")
		fmt.Fprintf(os.Stdout, "\n===== Crossplane packages =====\n%s%v\n", out, errOrEmpty(err))
	}
	e.servers.PrintLogs(os.Stdout, 80)
}

func errOrEmpty(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func readRepoFileT(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(env.RepoRoot, filepath.FromSlash(path)))
	if err != nil {
		t.Fatal(err)
	}
	return data
}
