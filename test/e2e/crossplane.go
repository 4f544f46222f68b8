package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Crossplane's own kinds the harness and scenarios use.
var (
	FunctionKind                      = schema.GroupVersionKind{Group: "pkg.crossplane.io", Version: "v1", Kind: "Function"}
	FunctionRevisionKind              = schema.GroupVersionKind{Group: "pkg.crossplane.io", Version: "v1", Kind: "FunctionRevision"}
	ConfigurationKind                 = schema.GroupVersionKind{Group: "pkg.crossplane.io", Version: "v1", Kind: "Configuration"}
	CompositeResourceDefinitionKind   = schema.GroupVersionKind{Group: "apiextensions.crossplane.io", Version: "v2", Kind: "CompositeResourceDefinition"}
	CompositionKind                   = schema.GroupVersionKind{Group: "apiextensions.crossplane.io", Version: "v1", Kind: "Composition"}
	CustomResourceDefinitionKind      = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}
	crossplaneNamespace               = "crossplane-system"
	crossplaneServiceAccount          = "crossplane"
	crossplaneRootCASecret            = "crossplane-root-ca"
	crossplaneClientSecret            = "crossplane-tls-client"
	crossplaneInitAttempts            = 5
	crossplaneReadyTimeout            = 60 * time.Second
	crossplaneNamespaceAndAccountYAML = []byte(`apiVersion: v1
kind: Namespace
metadata:
  name: crossplane-system
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: crossplane
  namespace: crossplane-system
`)
)

// startCrossplane initialises Crossplane core (its CRDs and TLS secrets) and starts it out of cluster with
// the External package runtime: Crossplane installs packages but runs none; the harness runs the functions.
func startCrossplane(ctx context.Context, servers *servers, cluster *Cluster, kubectl *Kubectl, p *prepared, cp *controlPlane, dir string) error {
	if err := kubectl.Apply(ctx, crossplaneNamespaceAndAccountYAML); err != nil {
		return fmt.Errorf("cannot create Crossplane's namespace and service account: %w", err)
	}
	env := []string{
		"KUBECONFIG=" + cp.kubeconfig,
		"POD_NAMESPACE=" + crossplaneNamespace,
		"POD_SERVICE_ACCOUNT=" + crossplaneServiceAccount,
		"CRDS_PATH=" + p.CrossplaneCRDDir,
		// The names the Crossplane Helm chart gives these secrets; init fills them.
		"TLS_CA_SECRET_NAME=" + crossplaneRootCASecret,
		"TLS_CLIENT_SECRET_NAME=" + crossplaneClientSecret,
	}
	// The first init can race the establishment of the CRDs it has just created, so it is retried.
	var initErr error
	for attempt := 1; attempt <= crossplaneInitAttempts; attempt++ {
		initCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		_, initErr = runCommand(initCtx, env, nil, p.Crossplane, "core", "init", "--enable-webhooks=false")
		cancel()
		if initErr == nil {
			break
		}
		time.Sleep(time.Second)
	}
	if initErr != nil {
		return fmt.Errorf("cannot initialise Crossplane after %d attempts: %w", crossplaneInitAttempts, initErr)
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

	// Crossplane caches every package it pulls here and fails unpacking if the directory is missing.
	xpkgCache := filepath.Join(dir, "xpkg-cache")
	if err := os.MkdirAll(xpkgCache, 0o755); err != nil {
		return fmt.Errorf("cannot create Crossplane's package cache: %w", err)
	}
	args := []string{
		"core", "start",
		"--package-runtime=External",
		"--enable-webhooks=false",
		"--tls-client-certs-dir=" + clientCerts,
		"--xpkg-cache-dir=" + xpkgCache,
		// Scenarios change things and expect Crossplane to notice quickly, not at the next 1m poll.
		"--poll-interval=5s",
	}
	if os.Getenv(debugEnv) == "1" {
		args = append(args, "--debug")
	}
	ports, err := freePorts(2)
	if err != nil {
		return err
	}
	metricsPort, healthPort := ports[0], ports[1]
	args = append(args, "--metrics-port="+strconv.Itoa(metricsPort), "--health-probe-port="+strconv.Itoa(healthPort))
	crossplane, err := servers.start("crossplane", p.Crossplane, args, env)
	if err != nil {
		return err
	}
	return waitForHTTP(ctx, crossplane, http.DefaultClient, "http://127.0.0.1:"+strconv.Itoa(healthPort)+"/healthz", "ok")
}
