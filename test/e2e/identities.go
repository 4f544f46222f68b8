package e2e

import (
	"context"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
)

// serviceAccountTokenLifetime outlives any run; tokens are requested fresh for every run.
const serviceAccountTokenLifetime = 12 * 60 * 60

// serviceAccountKubeconfig writes a kubeconfig that authenticates as a service account, with a token
// from the TokenRequest API: the identity a controller has in its pod, and no more.
func serviceAccountKubeconfig(ctx context.Context, cluster *Cluster, cp *controlPlane, namespace, name, path string) error {
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](serviceAccountTokenLifetime)}}
	token, err := cluster.Typed.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, req, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("cannot request a token for service account %s/%s: %w", namespace, name, err)
	}
	return writeIdentityKubeconfig(path, cp, &clientcmdapi.AuthInfo{Token: token.Status.Token})
}

// componentKubeconfig writes a kubeconfig with a client certificate for a control plane component's user
// (e.g. system:kube-scheduler), which Kubernetes' bootstrap RBAC already grants what the component needs.
func componentKubeconfig(cp *controlPlane, user, path string) error {
	cert, err := cp.ca.issue(certificateRequest{commonName: user, usages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	if err != nil {
		return err
	}
	return writeIdentityKubeconfig(path, cp, &clientcmdapi.AuthInfo{ClientCertificateData: cert.certPEM, ClientKeyData: cert.keyPEM})
}

func writeIdentityKubeconfig(path string, cp *controlPlane, auth *clientcmdapi.AuthInfo) error {
	config := clientcmdapi.NewConfig()
	config.Clusters["e2e"] = &clientcmdapi.Cluster{Server: cp.apiServer, CertificateAuthorityData: cp.ca.certPEM}
	config.AuthInfos["identity"] = auth
	config.Contexts["e2e"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: "identity"}
	config.CurrentContext = "e2e"
	if err := clientcmd.WriteToFile(*config, path); err != nil {
		return fmt.Errorf("cannot write kubeconfig %s: %w", path, err)
	}
	return os.Chmod(path, 0o600)
}

// UserKubectlT returns a kubectl that acts with credentials of the user's own: a client certificate the control
// plane's CA issues to the user, in the groups given (as an organization of the certificate, which the apiserver
// reads as groups). A step that proves what a person or an automation may do acts as it would, not as the
// administrator impersonating it.
func (e *Environment) UserKubectlT(t *testing.T, user string, groups ...string) *Kubectl {
	t.Helper()
	cert, err := e.controlPlane.ca.issue(certificateRequest{commonName: user, organizations: groups, usages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := writeIdentityKubeconfig(path, e.controlPlane, &clientcmdapi.AuthInfo{ClientCertificateData: cert.certPEM, ClientKeyData: cert.keyPEM}); err != nil {
		t.Fatal(err)
	}
	return &Kubectl{binary: e.Kubectl.binary, kubeconfig: path}
}
