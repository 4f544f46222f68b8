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

	servers      *process.Group
	prepared     *prepared
	dir          string
	controlPlane *controlPlane
	workload     lazyWorkload
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

	var reg *registry
	err = phases.run("start registry, push packages", func() error {
		if reg, err = startRegistry(ctx, servers, p.Crane); err != nil {
			return err
		}
		return pushPackages(ctx, p, reg)
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

	err = phases.run("grant Crossplane kiso's RBAC and providers' kinds", func() error {
		return grantCrossplane(ctx, e.Kubectl, p)
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

	var runtimes []*functionRuntime
	err = phases.run("install packages, serve functions", func() error {
		if err := e.Kubectl.Apply(ctx, installManifest(p, reg)); err != nil {
			return fmt.Errorf("cannot install kiso's packages: %w", err)
		}
		for _, fn := range p.Functions {
			rt, err := serveFunction(ctx, servers, e.Cluster, fn, filepath.Join(dir, "functions"), e.Metrics)
			if err != nil {
				return err
			}
			runtimes = append(runtimes, rt)
			e.Functions = append(e.Functions, fn.FunctionName)
		}
		return nil
	})
	if err != nil {
		return e, err
	}

	err = phases.run("wait for Functions Healthy, XRDs Established", func() error {
		for _, rt := range runtimes {
			if err := rt.waitHealthy(ctx, e.Cluster); err != nil {
				return err
			}
		}
		e.XRDs, err = waitForAPIs(ctx, e.Cluster)
		return err
	})
	return e, err
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
