package e2e

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"

	"github.com/kiso-dev/kiso/internal/layout"
	"github.com/kiso-dev/kiso/internal/process"
)

const (
	// packageReadyTimeout bounds pulling, unpacking and establishing one package.
	packageReadyTimeout = 2 * time.Minute
	// configurationName is the Configuration object the harness installs kiso as.
	configurationName = "kiso"
)

// pushPackages pushes kiso's packages as `make push` does, for this machine's platform only (make xpkg builds and
// verifies the others): each function as a multi-platform package, an index, that Crossplane resolves to one
// platform when it pulls it, as it does from a release. The Crossplane CLI pushes one platform's package as a
// plain image, so the harness puts that image in an index of one at the same tag. The runtime here is the binary
// built for this machine, not the package's image.
func pushPackages(ctx context.Context, crane string, set packageSet, reg *registry) error {
	_, err := runCommand(ctx, []string{"XPKG_OUTPUT=" + set.Dir, "VERSION=" + set.Version, "REGISTRY=" + reg.host + "/" + packageOwner, hostPlatformEnv()},
		nil, "go", "-C", set.Source, "run", "./hack/xpkg", "push")
	if err != nil {
		return fmt.Errorf("cannot push packages: %w", err)
	}
	for _, fn := range set.Functions {
		ref := reg.repository(fn.Package) + ":" + set.Version
		if _, err := runCommand(ctx, nil, nil, crane, "index", "append", "--manifest", ref, "--tag", ref); err != nil {
			return fmt.Errorf("cannot push %s as an index: %w", ref, err)
		}
		if err := checkHostPlatform(ctx, crane, ref); err != nil {
			return err
		}
	}
	return checkConfigurationDependencies(ctx, crane, set, reg)
}

// checkConfigurationDependencies checks that the pushed Configuration depends on exactly the functions pushed
// beside it, at their version: what Crossplane's dependency resolution would install from this registry.
func checkConfigurationDependencies(ctx context.Context, crane string, set packageSet, reg *registry) error {
	ref := reg.repository(configurationPackage) + ":" + set.Version
	fs, err := runCommand(ctx, nil, nil, crane, "export", ref, "-")
	if err != nil {
		return fmt.Errorf("cannot read %s: %w", ref, err)
	}
	stream, err := fileInTar(fs, "package.yaml")
	if err != nil {
		return fmt.Errorf("%s: %w", ref, err)
	}
	objs, err := layout.Objects(stream)
	if err != nil {
		return fmt.Errorf("%s: package.yaml: %w", ref, err)
	}
	i := slices.IndexFunc(objs, func(o map[string]any) bool { return o["kind"] == "Configuration" })
	if i < 0 {
		return fmt.Errorf("%s: package.yaml holds no Configuration metadata", ref)
	}
	deps, _, _ := unstructured.NestedSlice(objs[i], "spec", "dependsOn")
	var got, want []string
	for _, d := range deps {
		if d, ok := d.(map[string]any); ok && d["kind"] == "Function" {
			got = append(got, fmt.Sprintf("%v:%v", d["package"], d["version"]))
		}
	}
	for _, fn := range set.Functions {
		want = append(want, reg.repository(fn.Package)+":"+set.Version)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		return fmt.Errorf("%s depends on the Functions %v, want those pushed beside it, %v", ref, got, want)
	}
	return nil
}

// fileInTar returns the content of the file name in a tar stream.
func fileInTar(data []byte, name string) ([]byte, error) {
	r := tar.NewReader(bytes.NewReader(data))
	for {
		h, err := r.Next()
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("holds no %s", name)
		}
		if err != nil {
			return nil, fmt.Errorf("cannot read the image's files: %w", err)
		}
		if strings.TrimPrefix(h.Name, "/") == name {
			return io.ReadAll(r)
		}
	}
}

// checkHostPlatform checks that a pushed function package is an index with a package for this machine's
// platform, the one whose binary the harness runs.
func checkHostPlatform(ctx context.Context, crane, ref string) error {
	out, err := runCommand(ctx, nil, nil, crane, "manifest", ref)
	if err != nil {
		return fmt.Errorf("cannot read the manifest of %s: %w", ref, err)
	}
	var index struct {
		MediaType string `json:"mediaType"`
		Manifests []struct {
			Platform struct {
				OS           string `json:"os"`
				Architecture string `json:"architecture"`
			} `json:"platform"`
		} `json:"manifests"`
	}
	if err := json.Unmarshal(out, &index); err != nil {
		return fmt.Errorf("cannot parse the manifest of %s: %w", ref, err)
	}
	var platforms []string
	for _, m := range index.Manifests {
		platform := m.Platform.OS + "/" + m.Platform.Architecture
		if platform == runtime.GOOS+"/"+runtime.GOARCH {
			return nil
		}
		platforms = append(platforms, platform)
	}
	return fmt.Errorf("%s (%s) holds no package for %s/%s, only %v", ref, index.MediaType, runtime.GOOS, runtime.GOARCH, platforms)
}

// installManifest is what a platform team applies to install kiso from a registry with dependency
// resolution off: each Function under the name dependency resolution would give it, then the Configuration.
func installManifest(set packageSet, reg *registry) []byte {
	var b strings.Builder
	for _, fn := range set.Functions {
		fmt.Fprintf(&b, "apiVersion: pkg.crossplane.io/v1\nkind: Function\nmetadata:\n  name: %s\nspec:\n  package: %s:%s\n---\n",
			fn.FunctionName, reg.repository(fn.Package), set.Version)
	}
	fmt.Fprintf(&b, "apiVersion: pkg.crossplane.io/v1\nkind: Configuration\nmetadata:\n  name: %s\nspec:\n  package: %s:%s\n"+
		"  # The providers kiso depends on do not run here; their CRDs are applied directly, and the functions\n"+
		"  # are installed above.\n  skipDependencyResolution: true\n",
		configurationName, reg.repository(configurationPackage), set.Version)
	return []byte(b.String())
}

// A functionRuntime is a kiso function binary serving Crossplane over mTLS, in place of the Deployment
// Crossplane's default runtime would create.
type functionRuntime struct {
	fn       kisoFunction
	server   *process.Server
	endpoint string // 127.0.0.1:PORT
	secret   string // the TLS server secret named in the revision's status
	revision string
}

// serveFunctionAs runs fn's binary, as the server named serverName, with a server certificate signed by
// Crossplane's root CA, then points the Function's active revision at version at it: with the External runtime,
// nothing else sets status.endpoint, which is where Crossplane dials a function. The release a run upgrades from
// is served under another name than this tree's function, until the upgrade.
func serveFunctionAs(ctx context.Context, servers *process.Group, cluster *Cluster, serverName string, fn kisoFunction, version, dir string, metrics *metricsURLs) (*functionRuntime, error) {
	revision, err := activeRevision(ctx, cluster, fn.FunctionName, version)
	if err != nil {
		return nil, err
	}
	ca, err := crossplaneRootCA(ctx, cluster)
	if err != nil {
		return nil, err
	}
	serving, err := ca.issue(certificateRequest{
		commonName: fn.FunctionName,
		dnsNames:   []string{fn.FunctionName},
		ips:        []net.IP{net.ParseIP("127.0.0.1")},
		usages:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	if err != nil {
		return nil, err
	}
	certsDir := filepath.Join(dir, serverName)
	// ca.crt is the CA the function verifies Crossplane's client certificate against: the same root CA.
	files := map[string][]byte{"tls.crt": serving.certPEM, "tls.key": serving.keyPEM, "ca.crt": ca.certPEM}
	if err := writeFiles(certsDir, files); err != nil {
		return nil, err
	}

	// Both functions run in one network namespace, beside servers that take :8080 (the RBAC manager's metrics):
	// each serves its metrics on a free port of its own, named after its package (function-isolation).
	ports, err := process.FreePorts(2)
	if err != nil {
		return nil, err
	}
	rt := &functionRuntime{fn: fn, endpoint: "127.0.0.1:" + strconv.Itoa(ports[0]), secret: serverName + "-tls-server", revision: revision}
	metricsAddress := "127.0.0.1:" + strconv.Itoa(ports[1])
	rt.server, err = servers.Start(serverName, fn.Binary, []string{"--address=" + rt.endpoint, "--metrics-address=" + metricsAddress, "--debug"},
		[]string{"TLS_SERVER_CERTS_DIR=" + certsDir})
	if err != nil {
		return nil, err
	}
	metrics.set(fn.Package, "http://"+metricsAddress+"/metrics")
	if err := process.WaitForListener(ctx, rt.server, rt.endpoint, serverStartTimeout); err != nil {
		return nil, err
	}

	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: rt.secret, Namespace: crossplaneNamespace},
		Type:       corev1.SecretTypeTLS,
		Data:       files,
	}
	if _, err := cluster.Typed.CoreV1().Secrets(crossplaneNamespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil && !kerrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("cannot create the TLS secret of %s: %w", fn.FunctionName, err)
	}
	if err := rt.publishEndpoint(ctx, cluster); err != nil {
		return nil, err
	}
	return rt, nil
}

// publishEndpoint does for the function's revision what Crossplane's Deployment runtime would: it records
// where the function serves, the secret holding its server certificate, and that the runtime is healthy.
// Without RuntimeHealthy the Function never becomes Healthy, whatever the revision's own health.
func (rt *functionRuntime) publishEndpoint(ctx context.Context, cluster *Cluster) error {
	r, err := cluster.Resource(FunctionRevisionKind, "")
	if err != nil {
		return err
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		rev, err := r.Get(ctx, rt.revision, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if err := unstructured.SetNestedField(rev.Object, rt.endpoint, "status", "endpoint"); err != nil {
			return err
		}
		if err := unstructured.SetNestedField(rev.Object, rt.secret, "status", "tlsServerSecretName"); err != nil {
			return err
		}
		if err := setCondition(rev, map[string]any{
			"type":               "RuntimeHealthy",
			"status":             "True",
			"reason":             "HealthyPackageRevision",
			"message":            "served by the end-to-end harness at " + rt.endpoint,
			"lastTransitionTime": time.Now().UTC().Format(time.RFC3339),
		}); err != nil {
			return err
		}
		_, err = r.UpdateStatus(ctx, rev, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("cannot publish the endpoint of FunctionRevision %s: %w", rt.revision, err)
	}
	return nil
}

// published reports whether the revision still says what publishEndpoint wrote.
func (rt *functionRuntime) published(rev *unstructured.Unstructured) bool {
	endpoint, _, _ := unstructured.NestedString(rev.Object, "status", "endpoint")
	healthy, _ := HasCondition("RuntimeHealthy")(rev)
	return endpoint == rt.endpoint && healthy
}

// waitHealthy waits for the Function to be Healthy, publishing the endpoint again should an update of
// Crossplane's have dropped it.
func (rt *functionRuntime) waitHealthy(ctx context.Context, cluster *Cluster) error {
	return waitFor(ctx, packageReadyTimeout, "Function "+rt.fn.FunctionName+" to be Healthy", func(ctx context.Context) (bool, string, error) {
		if err := rt.server.Running(); err != nil {
			return false, "", err
		}
		rev, err := cluster.Get(ctx, FunctionRevisionKind, "", rt.revision)
		if err != nil {
			return false, err.Error(), nil
		}
		if !rt.published(rev) {
			if err := rt.publishEndpoint(ctx, cluster); err != nil {
				return false, err.Error(), nil
			}
		}
		fn, err := cluster.Get(ctx, FunctionKind, "", rt.fn.FunctionName)
		if err != nil {
			return false, err.Error(), nil
		}
		done, notYet := HasCondition("Healthy")(fn)
		return done, notYet, nil
	})
}

// setCondition replaces the condition of the same type in status.conditions, or appends it.
func setCondition(u *unstructured.Unstructured, condition map[string]any) error {
	conditions, _, err := unstructured.NestedSlice(u.Object, "status", "conditions")
	if err != nil {
		return err
	}
	replaced := false
	for i, raw := range conditions {
		if c, ok := raw.(map[string]any); ok && c["type"] == condition["type"] {
			conditions[i] = condition
			replaced = true
		}
	}
	if !replaced {
		conditions = append(conditions, condition)
	}
	return unstructured.SetNestedSlice(u.Object, conditions, "status", "conditions")
}

// activeRevision waits for the Function's active revision to be of the package at version and returns its name.
func activeRevision(ctx context.Context, cluster *Cluster, functionName, version string) (string, error) {
	var name string
	err := waitFor(ctx, packageReadyTimeout, "the active FunctionRevision of "+functionName+" at "+version, func(ctx context.Context) (bool, string, error) {
		revisions, err := cluster.List(ctx, FunctionRevisionKind, "", "pkg.crossplane.io/package="+functionName)
		if err != nil {
			return false, err.Error(), nil
		}
		for _, rev := range revisions {
			state, _, _ := unstructured.NestedString(rev.Object, "spec", "desiredState")
			image, _, _ := unstructured.NestedString(rev.Object, "spec", "image")
			if state == "Active" && strings.HasSuffix(image, ":"+version) {
				name = rev.GetName()
				return true, "", nil
			}
		}
		fn, err := cluster.Get(ctx, FunctionKind, "", functionName)
		if err != nil {
			return false, err.Error(), nil
		}
		return false, fmt.Sprintf("%d revisions, none active; Function conditions: %s", len(revisions), conditionSummary(fn)), nil
	})
	return name, err
}

// waitForAPIs waits for the Configuration to be Healthy at version and every XRD to be Established, and, if it offers a
// claim, Offered.
func waitForAPIs(ctx context.Context, cluster *Cluster, version string) ([]string, error) {
	_, err := cluster.WaitFor(ctx, packageReadyTimeout, ConfigurationKind, "", configurationName, func(u *unstructured.Unstructured) (bool, string) {
		current, _, _ := unstructured.NestedString(u.Object, "status", "currentIdentifier")
		if !strings.HasSuffix(current, ":"+version) {
			return false, "its current package is " + current + ", not " + version
		}
		return HasCondition("Healthy")(u)
	})
	if err != nil {
		return nil, err
	}
	xrds, err := cluster.List(ctx, CompositeResourceDefinitionKind, "", "")
	if err != nil {
		return nil, err
	}
	if len(xrds) == 0 {
		return nil, fmt.Errorf("the Configuration is Healthy but installed no CompositeResourceDefinition")
	}
	names := make([]string, 0, len(xrds))
	for _, xrd := range xrds {
		ready := []string{"Established"}
		if claimKind, _, _ := unstructured.NestedString(xrd.Object, "spec", "claimNames", "kind"); claimKind != "" {
			ready = append(ready, "Offered")
		}
		for _, condition := range ready {
			if _, err := cluster.WaitForCondition(ctx, packageReadyTimeout, CompositeResourceDefinitionKind, "", xrd.GetName(), condition); err != nil {
				return nil, err
			}
		}
		names = append(names, xrd.GetName())
	}
	return names, nil
}
