package e2e

import (
	"context"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/kiso-dev/kiso/internal/process"
)

// Crossplane's own kinds the harness and scenarios use.
var (
	FunctionKind                    = schema.GroupVersionKind{Group: "pkg.crossplane.io", Version: "v1", Kind: "Function"}
	FunctionRevisionKind            = schema.GroupVersionKind{Group: "pkg.crossplane.io", Version: "v1", Kind: "FunctionRevision"}
	ConfigurationKind               = schema.GroupVersionKind{Group: "pkg.crossplane.io", Version: "v1", Kind: "Configuration"}
	CompositeResourceDefinitionKind = schema.GroupVersionKind{Group: "apiextensions.crossplane.io", Version: "v2", Kind: "CompositeResourceDefinition"}
	CompositionKind                 = schema.GroupVersionKind{Group: "apiextensions.crossplane.io", Version: "v1", Kind: "Composition"}
	CustomResourceDefinitionKind    = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}
	crossplaneNamespace             = "crossplane-system"
	crossplaneServiceAccount        = "crossplane"
	crossplaneRBACManagerAccount    = "rbac-manager"
	crossplaneRootCASecret          = "crossplane-root-ca"
	crossplaneClientSecret          = "crossplane-tls-client"
	crossplaneInitAttempts          = 5
	crossplaneAllowedProviderRoles  = "crossplane:allowed-provider-permissions"
	crossplaneNamespaceYAML         = []byte(`apiVersion: v1
kind: Namespace
metadata:
  name: crossplane-system
`)
)

// Crossplane's webhooks, named as its Helm chart names them. core init points its webhook configurations at
// this Service; the harness, which runs Crossplane outside any pod, points them at 127.0.0.1 instead.
const (
	crossplaneWebhookService = "crossplane-webhooks"
	crossplaneWebhookPort    = "9443" // the Service's port, which core init writes; never dialled here
	crossplaneServerSecret   = "crossplane-tls-server"
)

// startCrossplane initialises Crossplane core (its CRDs, TLS secrets and webhook configurations) and starts
// it out of cluster with the External package runtime: Crossplane installs packages but runs none; the
// harness runs the functions. Crossplane serves its webhooks (the Usage webhook that refuses to delete an
// object in use) on loopback, and the apiserver calls them there.
//
// With realIdentities, Crossplane and its RBAC manager run as the service accounts its Helm chart creates,
// with the chart's ClusterRoles: Crossplane may then touch only what its aggregated ClusterRole grants, as
// in a cluster. Otherwise (on the host's network, where the RBAC manager cannot run: its metrics server
// listens on every interface) Crossplane runs as the administrator.
func startCrossplane(ctx context.Context, servers *process.Group, cluster *Cluster, kubectl *Kubectl, p *prepared, cp *controlPlane, dir string, realIdentities bool, metrics *metricsURLs) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cannot create %s: %w", dir, err)
	}
	if err := kubectl.Apply(ctx, crossplaneNamespaceYAML); err != nil {
		return fmt.Errorf("cannot create Crossplane's namespace: %w", err)
	}
	identity, err := chartIdentity(p.CrossplaneChart, "crossplane", crossplaneNamespace)
	if err != nil {
		return err
	}
	if err := kubectl.Apply(ctx, identity); err != nil {
		return fmt.Errorf("cannot apply the service accounts and RBAC of Crossplane's chart: %w", err)
	}
	kubeconfig, rbacKubeconfig := cp.kubeconfig, cp.kubeconfig
	if realIdentities {
		// Crossplane's ClusterRole holds no rules until the aggregation controller copies them in.
		err := waitFor(ctx, serverStartTimeout, "ClusterRole "+crossplaneServiceAccount+" to aggregate its rules", func(ctx context.Context) (bool, string, error) {
			role, err := cluster.Typed.RbacV1().ClusterRoles().Get(ctx, crossplaneServiceAccount, metav1.GetOptions{})
			if err != nil {
				return false, err.Error(), nil
			}
			return len(role.Rules) > 0, "no rules yet", nil
		})
		if err != nil {
			return err
		}
		kubeconfig, rbacKubeconfig = filepath.Join(dir, "crossplane.kubeconfig"), filepath.Join(dir, "rbac-manager.kubeconfig")
		if err := serviceAccountKubeconfig(ctx, cluster, cp, crossplaneNamespace, crossplaneServiceAccount, kubeconfig); err != nil {
			return err
		}
		if err := serviceAccountKubeconfig(ctx, cluster, cp, crossplaneNamespace, crossplaneRBACManagerAccount, rbacKubeconfig); err != nil {
			return err
		}
	}
	env := []string{
		"KUBECONFIG=" + kubeconfig,
		"POD_NAMESPACE=" + crossplaneNamespace,
		"POD_SERVICE_ACCOUNT=" + crossplaneServiceAccount,
		"CRDS_PATH=" + p.CrossplaneCRDDir,
		"WEBHOOK_CONFIGS_PATH=" + p.CrossplaneWebhookDir,
		// What the Crossplane Helm chart sets; init fills these secrets and applies the webhook configurations.
		"WEBHOOK_SERVICE_NAME=" + crossplaneWebhookService,
		"WEBHOOK_SERVICE_NAMESPACE=" + crossplaneNamespace,
		"WEBHOOK_SERVICE_PORT=" + crossplaneWebhookPort,
		"TLS_CA_SECRET_NAME=" + crossplaneRootCASecret,
		"TLS_SERVER_SECRET_NAME=" + crossplaneServerSecret,
		"TLS_CLIENT_SECRET_NAME=" + crossplaneClientSecret,
	}
	// The first init can race the establishment of the CRDs it has just created, so it is retried.
	var initErr error
	for attempt := 1; attempt <= crossplaneInitAttempts; attempt++ {
		initCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		_, initErr = runCommand(initCtx, env, nil, p.Crossplane, "core", "init")
		cancel()
		if initErr == nil {
			break
		}
		time.Sleep(time.Second)
	}
	if initErr != nil {
		return fmt.Errorf("cannot initialise Crossplane after %d attempts: %w", crossplaneInitAttempts, initErr)
	}
	if realIdentities {
		// The RBAC manager grants Crossplane each XRD's composite and claim kinds as the Configuration
		// installs them; its init waits for the CRDs core init created.
		rbacEnv := []string{"KUBECONFIG=" + rbacKubeconfig}
		if _, err := runCommand(ctx, rbacEnv, nil, p.Crossplane, "rbac", "init"); err != nil {
			return fmt.Errorf("cannot initialise Crossplane's RBAC manager: %w", err)
		}
		if _, err := servers.Start("crossplane-rbac-manager", p.Crossplane, []string{"rbac", "start", "--provider-clusterrole=" + crossplaneAllowedProviderRoles}, rbacEnv); err != nil {
			return err
		}
	}

	clientCerts := filepath.Join(dir, "tls-client")
	secret, err := cluster.Typed.CoreV1().Secrets(crossplaneNamespace).Get(ctx, crossplaneClientSecret, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("cannot read Crossplane's client certificate: %w", err)
	}
	if err := writeFiles(clientCerts, map[string][]byte{
		"ca.crt":  secret.Data["ca.crt"],
		"tls.crt": secret.Data[corev1.TLSCertKey],
		"tls.key": secret.Data[corev1.TLSPrivateKeyKey],
	}); err != nil {
		return err
	}
	serverCerts := filepath.Join(dir, "tls-server")
	rootCA, err := webhookServerCertificate(ctx, cluster, serverCerts)
	if err != nil {
		return err
	}

	// Crossplane caches every package it pulls here and fails unpacking if the directory is missing.
	xpkgCache := filepath.Join(dir, "xpkg-cache")
	if err := os.MkdirAll(xpkgCache, 0o755); err != nil {
		return fmt.Errorf("cannot create Crossplane's package cache: %w", err)
	}
	ports, err := process.FreePorts(3)
	if err != nil {
		return err
	}
	metricsPort, healthPort, webhookPort := ports[0], ports[1], ports[2]
	args := []string{
		"core", "start",
		"--package-runtime=External",
		"--tls-client-certs-dir=" + clientCerts,
		"--tls-server-certs-dir=" + serverCerts,
		"--webhook-port=" + strconv.Itoa(webhookPort),
		"--xpkg-cache-dir=" + xpkgCache,
		"--metrics-port=" + strconv.Itoa(metricsPort),
		"--health-probe-port=" + strconv.Itoa(healthPort),
	}
	// Crossplane's own poll, as the README's install leaves it (one minute), unless the fleet benchmark measures
	// another (FLEET_POLL).
	if poll := os.Getenv(crossplanePollEnv); poll != "" {
		args = append(args, "--poll-interval="+poll)
	}
	if os.Getenv(debugEnv) == "1" {
		args = append(args, "--debug")
	}
	crossplane, err := servers.Start("crossplane", p.Crossplane, args, env)
	if err != nil {
		return err
	}
	metrics.set("crossplane", "http://127.0.0.1:"+strconv.Itoa(metricsPort)+"/metrics")
	// With webhooks on, Crossplane is healthy only once its webhook server has started.
	if err := waitForHTTP(ctx, crossplane, http.DefaultClient, "http://127.0.0.1:"+strconv.Itoa(healthPort)+"/healthz", "ok"); err != nil {
		return err
	}
	return pointWebhooksAtLoopback(ctx, cluster, "https://127.0.0.1:"+strconv.Itoa(webhookPort), rootCA)
}

// webhookServerCertificate writes into dir the certificate Crossplane serves its webhooks with, and returns
// the CA that signed it. In a cluster Crossplane serves the crossplane-tls-server secret, whose names are
// the Service's; the apiserver here dials 127.0.0.1, so the certificate also names that address. It is
// signed by crossplane-root-ca, as init signs the secret's.
func webhookServerCertificate(ctx context.Context, cluster *Cluster, dir string) ([]byte, error) {
	ca, err := crossplaneRootCA(ctx, cluster)
	if err != nil {
		return nil, err
	}
	service := crossplaneWebhookService + "." + crossplaneNamespace
	serving, err := ca.issue(certificateRequest{
		commonName: service,
		dnsNames:   []string{crossplaneWebhookService, service, service + ".svc"},
		ips:        []net.IP{net.ParseIP("127.0.0.1")},
		usages:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	if err != nil {
		return nil, err
	}
	if err := writeFiles(dir, map[string][]byte{"tls.crt": serving.certPEM, "tls.key": serving.keyPEM, "ca.crt": ca.certPEM}); err != nil {
		return nil, err
	}
	return ca.certPEM, nil
}

// crossplaneRootCA is the CA core init keeps in secret crossplane-root-ca, which signs what Crossplane and the
// packages it runs serve one another: functions' servers, webhooks.
func crossplaneRootCA(ctx context.Context, cluster *Cluster) (*certificateAuthority, error) {
	rootCA, err := cluster.Typed.CoreV1().Secrets(crossplaneNamespace).Get(ctx, crossplaneRootCASecret, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("cannot read Crossplane's root CA: %w", err)
	}
	ca, err := loadCertificateAuthority(rootCA.Data[corev1.TLSCertKey], rootCA.Data[corev1.TLSPrivateKeyKey])
	if err != nil {
		return nil, fmt.Errorf("cannot load Crossplane's root CA: %w", err)
	}
	return ca, nil
}

// pointWebhooksAtLoopback rewrites every webhook init pointed at Crossplane's Service to call baseURL with
// the same path, trusting caBundle: no Service can route to a process outside any pod.
func pointWebhooksAtLoopback(ctx context.Context, cluster *Cluster, baseURL string, caBundle []byte) error {
	rewrite := func(cc *admissionregistrationv1.WebhookClientConfig) bool {
		svc := cc.Service
		if svc == nil || svc.Name != crossplaneWebhookService || svc.Namespace != crossplaneNamespace {
			return false
		}
		url := baseURL + ptr.Deref(svc.Path, "/")
		cc.Service, cc.URL, cc.CABundle = nil, &url, caBundle
		return true
	}
	api := cluster.Typed.AdmissionregistrationV1()
	validating, err := api.ValidatingWebhookConfigurations().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("cannot list ValidatingWebhookConfigurations: %w", err)
	}
	rewritten := 0
	for i := range validating.Items {
		vwc := &validating.Items[i]
		changed := false
		for j := range vwc.Webhooks {
			changed = rewrite(&vwc.Webhooks[j].ClientConfig) || changed
		}
		if !changed {
			continue
		}
		if _, err := api.ValidatingWebhookConfigurations().Update(ctx, vwc, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("cannot point ValidatingWebhookConfiguration %s at %s: %w", vwc.Name, baseURL, err)
		}
		rewritten++
	}
	mutating, err := api.MutatingWebhookConfigurations().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("cannot list MutatingWebhookConfigurations: %w", err)
	}
	for i := range mutating.Items {
		mwc := &mutating.Items[i]
		changed := false
		for j := range mwc.Webhooks {
			changed = rewrite(&mwc.Webhooks[j].ClientConfig) || changed
		}
		if !changed {
			continue
		}
		if _, err := api.MutatingWebhookConfigurations().Update(ctx, mwc, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("cannot point MutatingWebhookConfiguration %s at %s: %w", mwc.Name, baseURL, err)
		}
		rewritten++
	}
	if rewritten == 0 {
		return fmt.Errorf("core init created no webhook configuration pointing at Service %s/%s", crossplaneNamespace, crossplaneWebhookService)
	}
	return nil
}

// crossplanePollEnv sets Crossplane's poll interval; unset, Crossplane runs at its default, as installed.
const crossplanePollEnv = "KISO_E2E_CROSSPLANE_POLL"

// crossplanePollInterval is the poll interval Crossplane runs at.
func crossplanePollInterval() string {
	if v := os.Getenv(crossplanePollEnv); v != "" {
		return v
	}
	return "1m (its default)"
}
