package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kiso-dev/kiso/internal/process"
)

// workloadBootTimeout bounds starting the workload cluster and the providers that act in it.
const workloadBootTimeout = 5 * time.Minute

// The workload cluster as the management cluster knows it: one ProviderConfig of each provider, both named
// workload, reading its kubeconfig from one secret in Crossplane's namespace, made by the commands
// docs/many-clusters.md gives (manyClustersPage).
const (
	WorkloadProviderConfig = "workload"
	// manyClustersPage is the page whose commands make the workload cluster's Secret and ProviderConfigs, and
	// manyClustersNameLine the line of them that names the workload cluster; the harness runs them with its own
	// name there, WorkloadProviderConfig, the kubeconfig in the file they read, <name>.kubeconfig.
	manyClustersPage     = "docs/many-clusters.md"
	manyClustersNameLine = "cluster=eu-workloads\n"
	// workloadKarpenterRelease is the release the harness's Karpenter takes its identity from in the workload
	// cluster. Not karpenter: a scenario installs Karpenter's AWS chart there as release karpenter, and Helm
	// refuses to take over the ClusterRoles, bindings and kube-system Roles of that name which another
	// release's chart (the harness applies the KWOK chart's without Helm's ownership annotations) created.
	workloadKarpenterRelease = "karpenter-kwok"
	// managementUser is who the providers act as in the workload cluster: cluster-admin, as a management
	// cluster that installs charts (CRDs, ClusterRoles) into the clusters it manages must be.
	managementUser = "kiso-e2e-management"
)

// A WorkloadCluster is a second control plane beside the one Crossplane runs in: its own etcd, kube-apiserver
// (with the same authorizers and admission plugins), kube-controller-manager and kube-scheduler, Karpenter with
// its KWOK provider and kwok, and Karpenter's CRDs. From the management cluster, provider-kubernetes and
// provider-helm act in it through ProviderConfigs named WorkloadProviderConfig.
type WorkloadCluster struct {
	// Kubectl runs kubectl as the workload cluster's administrator.
	Kubectl *Kubectl
	// Cluster reads objects of the workload cluster and waits on them.
	Cluster *Cluster
	// Kubeconfig is the workload cluster administrator's kubeconfig.
	Kubeconfig string
	// apiServer is the workload cluster's kube-apiserver, which Unreachable freezes.
	apiServer *process.Server
	// KarpenterChart is where a Release finds Karpenter's AWS chart: a chart repository on loopback, which serves
	// Karpenter's CRD chart (karpenter-crd) beside it, at the same versions.
	KarpenterChart ChartSource
	// KarpenterChartBump is a later version of both charts in that repository, for a scenario that upgrades
	// Karpenter: the same charts, but for the NodePool CRD's description (bumpedNodePoolDescription).
	KarpenterChartBump string
	// KarpenterCRDs names the CRDs of Karpenter's CRD chart, which the harness applied there beforehand, as
	// Karpenter's chart applies its crds/ folder: with no Helm release owning them.
	KarpenterCRDs []string
}

// lazyWorkload starts the workload cluster for the first scenario that asks for it, once per run: the other
// scenarios never pay for it.
type lazyWorkload struct {
	once    sync.Once
	cluster *WorkloadCluster
	err     error
}

// Workload returns the workload cluster, starting it, and the providers acting in it, on the first call. Its
// Karpenter, like the management cluster's, runs only in a network namespace: elsewhere the scenario is skipped
// (or fails under CI), as requireNodesT says.
func (e *Environment) Workload(t *testing.T) *WorkloadCluster {
	t.Helper()
	requireNodesT(t)
	e.workload.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), workloadBootTimeout)
		defer cancel()
		phases := newPhaseTimer()
		e.workload.cluster, e.workload.err = e.startWorkload(ctx, phases)
		phases.total("workload cluster boot")
	})
	if e.workload.err != nil {
		t.Fatalf("cannot start the workload cluster: %v", e.workload.err)
	}
	return e.workload.cluster
}

// startWorkload starts the workload cluster and, in the management cluster, the providers that act in it.
func (e *Environment) startWorkload(ctx context.Context, phases *phaseTimer) (*WorkloadCluster, error) {
	p, servers := e.prepared, e.servers
	dir := filepath.Join(e.dir, "workload")
	cp, err := startControlPlane(ctx, servers, p, "workload", filepath.Join(dir, "controlplane"), phases)
	if err != nil {
		return nil, err
	}
	wl := &WorkloadCluster{Kubeconfig: cp.kubeconfig, Kubectl: &Kubectl{binary: p.Kubectl, kubeconfig: cp.kubeconfig}, apiServer: cp.apiServerProcess}
	if wl.Cluster, err = newCluster(cp.kubeconfig); err != nil {
		return nil, err
	}

	err = phases.run("apply Karpenter CRDs to the workload cluster", func() error {
		if err := wl.Kubectl.ApplyServerSide(ctx, p.KarpenterCRDFiles...); err != nil {
			return fmt.Errorf("cannot apply Karpenter's CRDs: %w", err)
		}
		_, err := wl.Kubectl.Run(ctx, nil, "wait", "--for=condition=Established", "--timeout=60s", "customresourcedefinitions", "--all")
		return err
	})
	if err != nil {
		return nil, err
	}

	err = phases.run("start workload scheduler, kwok, Karpenter", func() error {
		return startNodes(ctx, servers, wl.Cluster, wl.Kubectl, p, cp, workloadKarpenterRelease, filepath.Join(dir, "nodes"), e.Metrics)
	})
	if err != nil {
		return nil, err
	}

	err = phases.run("serve Karpenter's AWS charts", func() error {
		wl.KarpenterChart, wl.KarpenterChartBump, err = serveKarpenterCharts(p, filepath.Join(dir, "charts"))
		if err != nil {
			return err
		}
		wl.KarpenterCRDs, err = chartCRDs(p.KarpenterCRDChart)
		return err
	})
	if err != nil {
		return nil, err
	}

	err = phases.run("start provider-kubernetes, provider-helm", func() error {
		return e.startWorkloadProviders(ctx, servers, cp, filepath.Join(dir, "providers"))
	})
	return wl, err
}

// startWorkloadProviders runs provider-kubernetes and provider-helm for the management cluster and gives them,
// by docs/many-clusters.md's commands, a Secret holding a kubeconfig of the workload cluster and a ProviderConfig
// each that reads it.
func (e *Environment) startWorkloadProviders(ctx context.Context, servers *process.Group, workload *controlPlane, dir string) error {
	kubeconfig := filepath.Join(dir, WorkloadProviderConfig+".kubeconfig")
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("cannot create %s: %w", dir, err)
	}
	if err := componentKubeconfig(workload, managementUser, kubeconfig); err != nil {
		return err
	}
	kubectl := &Kubectl{binary: e.prepared.Kubectl, kubeconfig: workload.kubeconfig}
	if _, err := kubectl.Run(ctx, nil, "create", "clusterrolebinding", managementUser, "--clusterrole=cluster-admin", "--user="+managementUser); err != nil {
		return fmt.Errorf("cannot make %s an administrator of the workload cluster: %w", managementUser, err)
	}
	var providers []provider
	for _, start := range []func(context.Context, *process.Group, *Environment, string) (provider, error){startProviderKubernetes, startProviderHelm} {
		pr, err := start(ctx, servers, e, dir)
		if err != nil {
			return err
		}
		providers = append(providers, pr)
	}
	// The providers run on this machine, so the kubeconfig's server, https://127.0.0.1:PORT, reaches the
	// workload cluster from them as it does from here.
	if err := e.runManyClustersCommands(ctx, dir); err != nil {
		return err
	}
	for _, pr := range providers {
		if err := pr.configured(ctx, e, WorkloadProviderConfig); err != nil {
			return err
		}
	}
	return nil
}

// runManyClustersCommands runs, in dir, the commands of docs/many-clusters.md that store a workload cluster's
// kubeconfig in a Secret and make both providers' ProviderConfigs read it, against the management cluster, with the
// page's name for the workload cluster replaced by WorkloadProviderConfig.
func (e *Environment) runManyClustersCommands(ctx context.Context, dir string) error {
	block, err := docBlock(e.RepoRoot, manyClustersPage, manyClustersNameLine)
	if err != nil {
		return err
	}
	if n := strings.Count(block, manyClustersNameLine); n != 1 {
		return fmt.Errorf("%s's commands name the workload cluster %d times (%q); want once", manyClustersPage, n, manyClustersNameLine)
	}
	block = strings.Replace(block, manyClustersNameLine, "cluster="+WorkloadProviderConfig+"\n", 1)
	if out, err := runDocBlock(ctx, e.prepared.Kubectl, e.Kubeconfig, dir, block); err != nil {
		return fmt.Errorf("%s's commands for a workload cluster failed: %w\n%s", manyClustersPage, err, out)
	}
	return nil
}

// UnreachableT freezes the workload cluster's kube-apiserver (SIGSTOP): every request to it, the providers'
// included, hangs as it would across a lost network, with nothing refused or reset. It returns the function that
// thaws it (SIGCONT), which also runs at cleanup if the scenario stops first.
func (wl *WorkloadCluster) UnreachableT(t *testing.T) (thaw func()) {
	t.Helper()
	pid := wl.apiServer.PID()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatalf("cannot freeze the workload cluster's kube-apiserver (pid %d): %v", pid, err)
	}
	var once sync.Once
	thaw = func() {
		once.Do(func() {
			if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
				t.Errorf("cannot thaw the workload cluster's kube-apiserver (pid %d): %v", pid, err)
			}
		})
	}
	t.Cleanup(thaw)
	return thaw
}
