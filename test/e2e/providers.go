package e2e

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/kiso-dev/kiso/internal/process"
)

// The managed resources by which the management cluster acts in the workload cluster: provider-kubernetes'
// and provider-helm's cluster-scoped kinds (a collection makes an observe-only Object per object it matches there),
// and the ProviderConfigs they name.
var (
	ObjectKind                   = schema.GroupVersionKind{Group: "kubernetes.crossplane.io", Version: "v1alpha2", Kind: "Object"}
	ReleaseKind                  = schema.GroupVersionKind{Group: "helm.crossplane.io", Version: "v1beta1", Kind: "Release"}
	ObservedObjectCollectionKind = schema.GroupVersionKind{Group: "kubernetes.crossplane.io", Version: "v1alpha1", Kind: "ObservedObjectCollection"}
	kubernetesProviderConfigKind = schema.GroupVersionKind{Group: "kubernetes.crossplane.io", Version: "v1alpha1", Kind: "ProviderConfig"}
	helmProviderConfigKind       = schema.GroupVersionKind{Group: "helm.crossplane.io", Version: "v1beta1", Kind: "ProviderConfig"}
)

// providerConfigInUse is the finalizer a provider puts on every ProviderConfig it reconciles: seeing it says the
// provider runs, with its CRDs and its permissions.
const providerConfigInUse = "in-use.crossplane.io"

// A provider is a Crossplane provider package the harness runs as a process, as the External package runtime
// expects someone to: instead of installing the package, the harness applies its CRDs, gives it the service
// account and ClusterRole Crossplane's RBAC manager would, and grants Crossplane its kinds.
type provider struct {
	// name is the package's, which its process, service account and ClusterRoles are named after.
	name           string
	binary         string
	crdFiles       []string
	providerConfig schema.GroupVersionKind
}

// startProviderKubernetes runs provider-kubernetes for the management cluster. Its metrics, health and
// conversion webhook servers listen on free ports; the webhook, which converts the cluster-scoped Object between
// its versions, on every interface (only its port can be set), which the network namespace confines.
func startProviderKubernetes(ctx context.Context, servers *process.Group, mgmt *Environment, dir string) (provider, error) {
	pr := provider{
		name:           "provider-kubernetes",
		binary:         mgmt.prepared.ProviderKubernetes,
		crdFiles:       mgmt.prepared.ProviderKubernetesCRDFiles,
		providerConfig: kubernetesProviderConfigKind,
	}
	ports, err := process.FreePorts(3)
	if err != nil {
		return pr, err
	}
	metricsPort, healthPort, webhookPort := ports[0], ports[1], ports[2]
	certs := filepath.Join(dir, pr.name, "tls-server")
	caBundle, err := pr.servingCertificate(ctx, mgmt.Cluster, certs)
	if err != nil {
		return pr, err
	}
	if err := pr.install(ctx, mgmt.Kubectl, "https://127.0.0.1:"+strconv.Itoa(webhookPort), caBundle); err != nil {
		return pr, err
	}
	// The poll, watches and extra RBAC are the install's (README Install, step 1): the suite proves the promises
	// there.
	installed, err := pr.installed(ctx, mgmt)
	if err != nil {
		return pr, err
	}
	mgmt.KubernetesProviderPoll = pollOf(installed.Args)
	args := append([]string{
		"--webhook-port=" + strconv.Itoa(webhookPort),
		"--metrics-bind-address=127.0.0.1:" + strconv.Itoa(metricsPort),
		"--health-probe-bind-addr=127.0.0.1:" + strconv.Itoa(healthPort),
	}, installed.Args...)
	srv, err := pr.start(ctx, servers, mgmt, args, []string{"TLS_SERVER_CERTS_DIR=" + certs}, dir)
	if err != nil {
		return pr, err
	}
	mgmt.Metrics.set(pr.name, "http://127.0.0.1:"+strconv.Itoa(metricsPort)+"/metrics")
	// Ready once its conversion webhook serves.
	return pr, waitForHTTP(ctx, srv, http.DefaultClient, "http://127.0.0.1:"+strconv.Itoa(healthPort)+"/readyz", "ok")
}

// providerDefaultPoll is a provider's poll without --poll (crossplane-runtime's managed reconciler's default, which
// provider-kubernetes and provider-helm keep).
const providerDefaultPoll = 10 * time.Minute

// pollOf is the poll a provider run with args polls at.
func pollOf(args []string) time.Duration {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--poll="); ok {
			if d, err := time.ParseDuration(v); err == nil {
				return d
			}
		}
	}
	return providerDefaultPoll
}

// startProviderHelm runs provider-helm for the management cluster. It serves no webhook and no health probe; its
// metrics server listens on a free loopback port its build sets (tools/provider-helm/build.env), which the
// harness finds among its sockets.
func startProviderHelm(ctx context.Context, servers *process.Group, mgmt *Environment, dir string) (provider, error) {
	pr := provider{
		name:           "provider-helm",
		binary:         mgmt.prepared.ProviderHelm,
		crdFiles:       mgmt.prepared.ProviderHelmCRDFiles,
		providerConfig: helmProviderConfigKind,
	}
	if err := pr.install(ctx, mgmt.Kubectl, "", nil); err != nil {
		return pr, err
	}
	installed, err := pr.installed(ctx, mgmt)
	if err != nil {
		return pr, err
	}
	srv, err := pr.start(ctx, servers, mgmt, installed.Args, nil, dir)
	if err != nil {
		return pr, err
	}
	metrics, err := metricsOnAPortItPicked(ctx, srv)
	if err != nil {
		return pr, err
	}
	mgmt.Metrics.set(pr.name, metrics)
	return pr, nil
}

// metricsOnAPortItPicked finds the URL of the metrics a server serves on a loopback port it picked itself: the
// port of its listening sockets that answers /metrics.
func metricsOnAPortItPicked(ctx context.Context, srv *process.Server) (string, error) {
	var url string
	err := waitFor(ctx, serverStartTimeout, srv.Name+"'s metrics on a port it picked", func(ctx context.Context) (bool, string, error) {
		if err := srv.Running(); err != nil {
			return false, "", err
		}
		ports, err := process.ListeningPorts(srv.PID())
		if err != nil {
			return false, "", err
		}
		for _, port := range ports {
			candidate := "http://127.0.0.1:" + strconv.Itoa(port) + "/metrics"
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, candidate, nil)
			if err != nil {
				return false, "", err
			}
			rsp, err := http.DefaultClient.Do(req)
			if err != nil {
				continue
			}
			_ = rsp.Body.Close()
			if rsp.StatusCode == http.StatusOK {
				url = candidate
				return true, "", nil
			}
		}
		return false, fmt.Sprintf("none of the ports it listens on (%v) serves /metrics", ports), nil
	})
	return url, err
}

// installed reads what the install file gives the provider and applies the RBAC it grants the provider's service
// account, which the harness names as the install does.
func (pr provider) installed(ctx context.Context, mgmt *Environment) (installedProvider, error) {
	installed, err := readInstalledProvider(mgmt.RepoRoot, workloadClusterProvidersFile, pr.name)
	if err != nil {
		return installed, err
	}
	if installed.ServiceAccount != "" && installed.ServiceAccount != pr.name {
		return installed, fmt.Errorf("%s runs %s as service account %s; the harness runs it as %s", workloadClusterProvidersFile, pr.name, installed.ServiceAccount, pr.name)
	}
	if len(installed.RBAC) > 0 {
		if err := mgmt.Kubectl.Apply(ctx, installed.RBAC); err != nil {
			return installed, fmt.Errorf("cannot grant %s what %s grants it: %w", pr.name, workloadClusterProvidersFile, err)
		}
	}
	return installed, nil
}

// servingCertificate writes into dir the certificate the provider serves its webhooks with, signed by
// Crossplane's root CA as Crossplane signs a provider's, naming 127.0.0.1, where the API server calls it; it
// returns the CA that the API server is to trust.
func (pr provider) servingCertificate(ctx context.Context, cluster *Cluster, dir string) ([]byte, error) {
	ca, err := crossplaneRootCA(ctx, cluster)
	if err != nil {
		return nil, err
	}
	serving, err := ca.issue(certificateRequest{
		commonName: pr.name,
		dnsNames:   []string{pr.name},
		ips:        []net.IP{net.ParseIP("127.0.0.1")},
		usages:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	if err != nil {
		return nil, err
	}
	if err := writeFiles(dir, map[string][]byte{"tls.crt": serving.certPEM, "tls.key": serving.keyPEM}); err != nil {
		return nil, err
	}
	return ca.certPEM, nil
}

// install applies the provider's CRDs, each conversion webhook pointed at webhookURL (Crossplane would point it at
// the provider's Service), its identity, and the ClusterRole that lets Crossplane compose its kinds.
func (pr provider) install(ctx context.Context, kubectl *Kubectl, webhookURL string, caBundle []byte) error {
	var crds []byte
	for _, f := range pr.crdFiles {
		crd, err := crdWithLoopbackConversion(f, webhookURL, caBundle)
		if err != nil {
			return err
		}
		crds = append(append(crds, "---\n"...), crd...)
	}
	// Server-side: CRDs outgrow the annotation client-side apply keeps.
	if _, err := kubectl.Run(ctx, crds, "apply", "--server-side", "--force-conflicts", "-f", "-"); err != nil {
		return fmt.Errorf("cannot apply the CRDs of %s: %w", pr.name, err)
	}
	args := []string{"wait", "--for=condition=Established", "--timeout=60s"}
	for _, f := range pr.crdFiles {
		args = append(args, "-f", f)
	}
	if _, err := kubectl.Run(ctx, nil, args...); err != nil {
		return err
	}
	identity, err := pr.identity()
	if err != nil {
		return err
	}
	if err := kubectl.Apply(ctx, identity); err != nil {
		return fmt.Errorf("cannot apply the identity of %s: %w", pr.name, err)
	}
	crossplaneRole, err := providerRole("crossplane:provider:"+pr.name+"-e2e:aggregate-to-crossplane", pr.crdFiles)
	if err != nil {
		return err
	}
	if err := kubectl.Apply(ctx, crossplaneRole); err != nil {
		return fmt.Errorf("cannot grant Crossplane the kinds of %s: %w", pr.name, err)
	}
	return nil
}

// crdWithLoopbackConversion reads a CRD file and, if the CRD converts its versions with a webhook, points that
// webhook at webhookURL, trusting caBundle. A package's CRD names only the webhook's path; Crossplane fills in
// the Service, which cannot route to a process outside any pod.
func crdWithLoopbackConversion(file, webhookURL string, caBundle []byte) ([]byte, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("cannot read CRD %s: %w", file, err)
	}
	crd := map[string]any{}
	if err := yaml.Unmarshal(data, &crd); err != nil {
		return nil, fmt.Errorf("cannot decode CRD %s: %w", file, err)
	}
	if strategy, _, _ := unstructured.NestedString(crd, "spec", "conversion", "strategy"); strategy != "Webhook" {
		return data, nil
	}
	if webhookURL == "" {
		return nil, fmt.Errorf("CRD %s converts with a webhook, which the harness does not serve", file)
	}
	path, _, _ := unstructured.NestedString(crd, "spec", "conversion", "webhook", "clientConfig", "service", "path")
	clientConfig := map[string]any{"url": webhookURL + path, "caBundle": base64.StdEncoding.EncodeToString(caBundle)}
	if err := unstructured.SetNestedMap(crd, clientConfig, "spec", "conversion", "webhook", "clientConfig"); err != nil {
		return nil, fmt.Errorf("cannot point the conversion webhook of CRD %s at %s: %w", file, webhookURL, err)
	}
	out, err := yaml.Marshal(crd)
	if err != nil {
		return nil, fmt.Errorf("cannot encode CRD %s: %w", file, err)
	}
	return out, nil
}

// identity is the provider's service account and the ClusterRole Crossplane's RBAC manager gives a provider
// revision: its own kinds (not to delete them: that is its users'), their finalizers, the secrets, config maps,
// events and leases it works with, and, for a package declaring SafeStart as these do, reading CRDs, so that it
// starts each controller once its CRD exists.
func (pr provider) identity() ([]byte, error) {
	rules, err := crdRules(pr.crdFiles, []string{"get", "list", "watch", "update", "patch", "create"})
	if err != nil {
		return nil, err
	}
	groups := make([]string, 0, len(rules))
	for _, r := range rules {
		groups = append(groups, r.APIGroups...)
	}
	rules = append(rules,
		rbacv1.PolicyRule{APIGroups: groups, Resources: []string{"*/finalizers"}, Verbs: []string{"update"}},
		rbacv1.PolicyRule{APIGroups: []string{"", "coordination.k8s.io"}, Resources: []string{"secrets", "configmaps", "events", "leases"}, Verbs: []string{rbacv1.VerbAll}},
		rbacv1.PolicyRule{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: []string{"get", "list", "watch"}},
	)
	role := "crossplane:provider:" + pr.name + "-e2e:system"
	objects := []any{
		corev1.ServiceAccount{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
			ObjectMeta: metav1.ObjectMeta{Name: pr.name, Namespace: crossplaneNamespace},
		},
		rbacv1.ClusterRole{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
			ObjectMeta: metav1.ObjectMeta{Name: role},
			Rules:      rules,
		},
		rbacv1.ClusterRoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: role},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: pr.name, Namespace: crossplaneNamespace}},
		},
	}
	var out []byte
	for _, o := range objects {
		doc, err := yaml.Marshal(o)
		if err != nil {
			return nil, fmt.Errorf("cannot encode the identity of %s: %w", pr.name, err)
		}
		out = append(append(out, "---\n"...), doc...)
	}
	return out, nil
}

// start runs the provider as its service account, with a token from the TokenRequest API, as in its pod.
func (pr provider) start(ctx context.Context, servers *process.Group, mgmt *Environment, args, env []string, dir string) (*process.Server, error) {
	dir = filepath.Join(dir, pr.name)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("cannot create %s: %w", dir, err)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := serviceAccountKubeconfig(ctx, mgmt.Cluster, mgmt.controlPlane, crossplaneNamespace, pr.name, kubeconfig); err != nil {
		return nil, err
	}
	if os.Getenv(debugEnv) == "1" {
		args = append(args, "--debug")
	}
	return servers.Start(pr.name, pr.binary, args, append(env,
		// Both read their kubeconfig from the environment only.
		"KUBECONFIG="+kubeconfig,
		// Where Helm caches the index of a chart repository while it pulls a chart; its default is in $HOME.
		"HELM_CACHE_HOME="+filepath.Join(dir, "helm-cache"),
	))
}

// configured waits for the provider to take up its ProviderConfig named name.
func (pr provider) configured(ctx context.Context, mgmt *Environment, name string) error {
	_, err := mgmt.Cluster.WaitFor(ctx, serverStartTimeout, pr.providerConfig, "", name, func(u *unstructured.Unstructured) (bool, string) {
		for _, f := range u.GetFinalizers() {
			if f == providerConfigInUse {
				return true, ""
			}
		}
		return false, pr.name + " has not reconciled it yet"
	})
	return err
}
