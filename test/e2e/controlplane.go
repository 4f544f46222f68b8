package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kiso-dev/kiso/internal/process"
)

// fleetEnv is set by make bench-fleet, which runs the fleet benchmark on this control plane.
const fleetEnv = "KISO_BENCH_FLEET"

const (
	// serverStartTimeout bounds how long one server may take to become ready.
	serverStartTimeout = 90 * time.Second
)

// A controlPlane is etcd, kube-apiserver and kube-controller-manager on loopback.
type controlPlane struct {
	// name tells a second control plane's servers, logs and phases apart (e.g. "workload"); the management
	// cluster, where Crossplane runs, has none.
	name      string
	dir       string
	apiServer string // https://127.0.0.1:PORT
	// apiServerProcess is the kube-apiserver's process, e.g. for a scenario that makes it unreachable.
	apiServerProcess *process.Server
	kubeconfig       string
	adminTLS         *tls.Config
	ca               *certificateAuthority // signs client certificates, e.g. the components' own
}

// startControlPlane starts etcd, kube-apiserver and kube-controller-manager, each ready before the next, on
// ports of their own: name ("" for the management cluster) sets them apart from another control plane's.
func startControlPlane(ctx context.Context, servers *process.Group, p *prepared, name, dir string, phases *phaseTimer) (*controlPlane, error) {
	cp := &controlPlane{name: name, dir: dir}
	pki := filepath.Join(dir, "pki")
	ports, err := process.FreePorts(4)
	if err != nil {
		return nil, err
	}
	etcdClientPort, etcdPeerPort, apiServerPort, controllerManagerPort := ports[0], ports[1], ports[2], ports[3]

	var ca *certificateAuthority
	err = phases.run("make "+strings.TrimSpace(name+" control plane")+" certificates", func() error {
		var err error
		ca, err = newCertificateAuthority(cp.serverName("kiso-e2e-ca"))
		if err != nil {
			return err
		}
		serving, err := ca.issue(certificateRequest{
			commonName: "kube-apiserver",
			dnsNames:   []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
			ips:        []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.0.0.1")},
			usages:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		})
		if err != nil {
			return err
		}
		// The administrator: the harness and kubectl, as a platform team. Every controller has an identity
		// of its own.
		admin, err := ca.issue(certificateRequest{
			commonName:    "kiso-e2e-admin",
			organizations: []string{"system:masters"},
			usages:        []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		})
		if err != nil {
			return err
		}
		serviceAccountKey, err := newServiceAccountKey()
		if err != nil {
			return err
		}
		if err := writeFiles(pki, map[string][]byte{
			"ca.crt": ca.certPEM, "apiserver.crt": serving.certPEM, "apiserver.key": serving.keyPEM,
			"admin.crt": admin.certPEM, "admin.key": admin.keyPEM, "service-account.key": serviceAccountKey,
		}); err != nil {
			return err
		}
		cp.apiServer = "https://127.0.0.1:" + strconv.Itoa(apiServerPort)
		cp.ca = ca
		cp.kubeconfig = filepath.Join(dir, "kubeconfig")
		if err := writeKubeconfig(cp.kubeconfig, cp.apiServer, ca.certPEM, admin); err != nil {
			return err
		}
		if err := componentKubeconfig(cp, controllerManagerUser, filepath.Join(dir, "kube-controller-manager.kubeconfig")); err != nil {
			return err
		}
		adminCert, err := tls.X509KeyPair(admin.certPEM, admin.keyPEM)
		if err != nil {
			return fmt.Errorf("cannot load admin key pair: %w", err)
		}
		roots := x509.NewCertPool()
		roots.AddCert(ca.cert)
		cp.adminTLS = &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{adminCert}, MinVersion: tls.VersionTLS12}
		return nil
	})
	if err != nil {
		return nil, err
	}

	err = phases.run("start "+cp.serverName("etcd"), func() error {
		clientURL := "http://127.0.0.1:" + strconv.Itoa(etcdClientPort)
		peerURL := "http://127.0.0.1:" + strconv.Itoa(etcdPeerPort)
		etcd, err := servers.Start(cp.serverName("etcd"), p.Etcd, []string{
			"--name=e2e",
			"--data-dir=" + filepath.Join(dir, "etcd"),
			"--listen-client-urls=" + clientURL, "--advertise-client-urls=" + clientURL,
			"--listen-peer-urls=" + peerURL, "--initial-advertise-peer-urls=" + peerURL,
			"--initial-cluster=e2e=" + peerURL,
			// The data dies with the run: durability buys nothing and fsync costs seconds.
			"--unsafe-no-fsync",
			"--log-level=warn",
		}, nil)
		if err != nil {
			return err
		}
		return waitForHTTP(ctx, etcd, http.DefaultClient, clientURL+"/health", `"health":"true"`)
	})
	if err != nil {
		return nil, err
	}

	err = phases.run("start "+cp.serverName("kube-apiserver"), func() error {
		auditFlags, err := cp.auditFlags()
		if err != nil {
			return err
		}
		apiServer, err := servers.Start(cp.serverName("kube-apiserver"), p.KubeAPIServer, append([]string{
			"--etcd-servers=http://127.0.0.1:" + strconv.Itoa(etcdClientPort),
			"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
			"--secure-port=" + strconv.Itoa(apiServerPort),
			"--tls-cert-file=" + filepath.Join(pki, "apiserver.crt"),
			"--tls-private-key-file=" + filepath.Join(pki, "apiserver.key"),
			"--client-ca-file=" + filepath.Join(pki, "ca.crt"),
			"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
			"--service-account-key-file=" + filepath.Join(pki, "service-account.key"),
			"--service-account-signing-key-file=" + filepath.Join(pki, "service-account.key"),
			"--service-cluster-ip-range=10.0.0.0/24",
			// EKS's authorizers and the admission plugin that confines each kubelet to its own Node and mirror pods.
			"--authorization-mode=Node,RBAC",
			"--enable-admission-plugins=NodeRestriction",
			// No feature gate and no runtime-config: the APIs are served as EKS serves them, MutatingAdmissionPolicy
			// at admissionregistration.k8s.io/v1 (on by default since Kubernetes v1.36).
			// Only the fleet benchmark profiles the apiserver (over its idle minute); EKS serves no profiles.
			"--profiling=" + strconv.FormatBool(os.Getenv(fleetEnv) == "1"),
			// The kubernetes Service cannot have a loopback endpoint, and nothing here runs in a pod.
			"--endpoint-reconciler-type=none",
		}, auditFlags...), nil)
		if err != nil {
			return err
		}
		cp.apiServerProcess = apiServer
		client := &http.Client{Transport: &http.Transport{TLSClientConfig: cp.adminTLS}, Timeout: 5 * time.Second}
		return waitForHTTP(ctx, apiServer, client, cp.apiServer+"/readyz", "ok")
	})
	if err != nil {
		return nil, err
	}

	err = phases.run("start "+cp.serverName("kube-controller-manager"), func() error {
		kubeconfig := filepath.Join(dir, "kube-controller-manager.kubeconfig")
		controllerManager, err := servers.Start(cp.serverName("kube-controller-manager"), p.KubeControllerMgr, []string{
			"--kubeconfig=" + kubeconfig,
			"--authentication-kubeconfig=" + kubeconfig,
			"--authorization-kubeconfig=" + kubeconfig,
			"--bind-address=127.0.0.1",
			"--secure-port=" + strconv.Itoa(controllerManagerPort),
			"--cert-dir=" + filepath.Join(dir, "controller-manager"),
			// The garbage collector deletes composed objects through their owner references (without it,
			// deleted XRs would orphan what they composed, and a deleted NodePool its NodeClaims), namespace
			// deletion empties namespaces, and service accounts get tokens. The Job, Deployment and ReplicaSet
			// controllers create pods as a cluster does, so admission policies meet them as submitted by a
			// controller, not by a test; the policy status controller type-checks every
			// ValidatingAdmissionPolicy against the kinds it matches and reports warnings in its status. The
			// node lifecycle controller lifts the not-ready taint from kwok's Ready nodes (Karpenter waits for
			// that), pod GC removes the pods of deleted nodes, and ClusterRole aggregation builds Crossplane's
			// ClusterRole from the roles labelled for it, as in any cluster.
			"--controllers=garbagecollector,namespace,serviceaccount,serviceaccount-token,job,validatingadmissionpolicy-status-controller," +
				"deployment,replicaset,nodelifecycle,podgc,clusterrole-aggregation",
			"--use-service-account-credentials=true",
			"--service-account-private-key-file=" + filepath.Join(pki, "service-account.key"),
			"--root-ca-file=" + filepath.Join(pki, "ca.crt"),
			"--leader-elect=false",
		}, nil)
		if err != nil {
			return err
		}
		client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{
			// Its serving certificate is self-signed at start; only its health is asked here.
			InsecureSkipVerify: true, // loopback health probe of a server this harness started
		}}, Timeout: 5 * time.Second}
		return waitForHTTP(ctx, controllerManager, client, "https://127.0.0.1:"+strconv.Itoa(controllerManagerPort)+"/healthz", "ok")
	})
	if err != nil {
		return nil, err
	}
	return cp, nil
}

// serverName is what this control plane calls one of its servers: its log file and its phases say which
// cluster it serves.
func (cp *controlPlane) serverName(component string) string {
	if cp.name == "" {
		return component
	}
	return cp.name + "-" + component
}

// controllerManagerUser is the kube-controller-manager's user, which Kubernetes' bootstrap RBAC grants what it
// needs; each controller runs as its own service account (--use-service-account-credentials).
const controllerManagerUser = "system:kube-controller-manager"

// waitForHTTP waits until url answers 200 with a body containing want, failing early if srv exits.
func waitForHTTP(ctx context.Context, srv *process.Server, client *http.Client, url, want string) error {
	return waitFor(ctx, serverStartTimeout, srv.Name+" at "+url, func(ctx context.Context) (bool, string, error) {
		if err := srv.Running(); err != nil {
			return false, "", err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, "", err
		}
		rsp, err := client.Do(req)
		if err != nil {
			return false, err.Error(), nil
		}
		defer rsp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(rsp.Body, 4096))
		if rsp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
			return false, fmt.Sprintf("HTTP %d: %s", rsp.StatusCode, strings.TrimSpace(string(body))), nil
		}
		return true, "", nil
	})
}

// writeKubeconfig writes the administrator's kubeconfig, with certificates inline so it works from any
// working directory.
func writeKubeconfig(path, server string, caPEM []byte, admin keyPair) error {
	config := clientcmdapi.NewConfig()
	config.Clusters["e2e"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	config.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: admin.certPEM, ClientKeyData: admin.keyPEM}
	config.Contexts["e2e"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: "admin", Namespace: "default"}
	config.CurrentContext = "e2e"
	if err := clientcmd.WriteToFile(*config, path); err != nil {
		return fmt.Errorf("cannot write kubeconfig: %w", err)
	}
	return os.Chmod(path, 0o600)
}
