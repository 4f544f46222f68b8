package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/kiso-dev/kiso/internal/process"
)

// Where Karpenter runs, as its Helm chart installs it. The chart names its service account and RBAC after the
// release (a release named karpenter-*: the release name itself).
const (
	karpenterSystemNamespace = "kube-system"
	karpenterRelease         = "karpenter"
	schedulerUser            = "system:kube-scheduler"
)

// startNodes starts what turns pending pods into pods running on a tenant's nodes: kube-scheduler binds pods
// to nodes; Karpenter, with its KWOK cloud provider and its chart's identity and RBAC, launches NodeClaims
// for pods nothing fits and creates their Nodes; kwok stands in for the kubelets, making those nodes Ready
// and their pods Running. Karpenter's metrics and health servers listen on every interface (only their ports
// can be set): this runs only in the network namespace, where loopback is the only interface. Karpenter's
// identity is its chart's for the given release name.
func startNodes(ctx context.Context, servers *process.Group, cluster *Cluster, kubectl *Kubectl, p *prepared, cp *controlPlane, release, dir string, metrics *metricsURLs) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cannot create %s: %w", dir, err)
	}
	ports, err := process.FreePorts(4)
	if err != nil {
		return err
	}
	schedulerPort, kwokPort, karpenterMetricsPort, karpenterHealthPort := ports[0], ports[1], ports[2], ports[3]
	insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{
		InsecureSkipVerify: true, // loopback health probe of a server this harness started, self-signed at start
	}}, Timeout: 5 * time.Second}

	schedulerKubeconfig := filepath.Join(dir, "kube-scheduler.kubeconfig")
	if err := componentKubeconfig(cp, schedulerUser, schedulerKubeconfig); err != nil {
		return err
	}
	scheduler, err := servers.Start(cp.serverName("kube-scheduler"), p.KubeScheduler, []string{
		"--kubeconfig=" + schedulerKubeconfig,
		"--authentication-kubeconfig=" + schedulerKubeconfig,
		"--authorization-kubeconfig=" + schedulerKubeconfig,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(schedulerPort),
		"--leader-elect=false",
	}, nil)
	if err != nil {
		return err
	}

	stages, err := joinYAML(p.KwokStages)
	if err != nil {
		return err
	}
	stagesFile := filepath.Join(dir, "kwok-stages.yaml")
	if err := os.WriteFile(stagesFile, stages, 0o600); err != nil {
		return fmt.Errorf("cannot write kwok's stages: %w", err)
	}
	// kwok plays every kubelet, so it acts as the administrator; it manages only the nodes Karpenter's KWOK
	// provider creates, which carry this annotation.
	kwok, err := servers.Start(cp.serverName("kwok"), p.Kwok, []string{
		"--kubeconfig=" + cp.kubeconfig,
		"--config=" + stagesFile,
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
		"--node-lease-duration-seconds=40",
		"--server-address=127.0.0.1:" + strconv.Itoa(kwokPort),
	}, nil)
	if err != nil {
		return err
	}

	identity, err := chartIdentity(p.KarpenterChart, release, karpenterSystemNamespace)
	if err != nil {
		return err
	}
	if err := kubectl.Apply(ctx, identity); err != nil {
		return fmt.Errorf("cannot apply the service account and RBAC of Karpenter's chart: %w", err)
	}
	karpenterKubeconfig := filepath.Join(dir, "karpenter.kubeconfig")
	if err := serviceAccountKubeconfig(ctx, cluster, cp, karpenterSystemNamespace, release, karpenterKubeconfig); err != nil {
		return err
	}
	karpenter, err := servers.Start(cp.serverName("karpenter"), p.Karpenter, nil, []string{
		// Karpenter reads its kubeconfig only from the environment.
		"KUBECONFIG=" + karpenterKubeconfig,
		"SYSTEM_NAMESPACE=" + karpenterSystemNamespace,
		// Outside a pod the lease's namespace is unknown; one Karpenter runs.
		"DISABLE_LEADER_ELECTION=true",
		"METRICS_PORT=" + strconv.Itoa(karpenterMetricsPort),
		"HEALTH_PROBE_PORT=" + strconv.Itoa(karpenterHealthPort),
		"LOG_LEVEL=debug",
		// pprof on the metrics port, for the fleet benchmark's profile of an idle Karpenter.
		"ENABLE_PROFILING=true",
	})
	if err != nil {
		return err
	}
	metrics.set(cp.serverName("karpenter"), "http://127.0.0.1:"+strconv.Itoa(karpenterMetricsPort)+"/metrics")

	if err := waitForHTTP(ctx, scheduler, insecure, "https://127.0.0.1:"+strconv.Itoa(schedulerPort)+"/healthz", "ok"); err != nil {
		return err
	}
	if err := waitForHTTP(ctx, kwok, http.DefaultClient, "http://127.0.0.1:"+strconv.Itoa(kwokPort)+"/healthz", "ok"); err != nil {
		return err
	}
	return waitForHTTP(ctx, karpenter, http.DefaultClient, "http://127.0.0.1:"+strconv.Itoa(karpenterHealthPort)+"/readyz", "ok")
}

// joinYAML joins YAML files into one stream.
func joinYAML(files []string) ([]byte, error) {
	var b bytes.Buffer
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("cannot read %s: %w", f, err)
		}
		b.WriteString("---\n")
		b.Write(data)
		b.WriteString("\n")
	}
	return b.Bytes(), nil
}
