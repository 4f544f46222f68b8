package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// workloadClusterProvidersFile is the install step that runs provider-kubernetes and provider-helm for workload
// clusters. The harness runs both with the arguments and the extra RBAC it gives them, so the suite proves kiso's
// promises with the providers as a platform installs them, not as a test would tune them.
const workloadClusterProvidersFile = "examples/install/workload-cluster-providers.yaml"

// installedProvider is what the install file gives one provider.
type installedProvider struct {
	// Args are its DeploymentRuntimeConfig's package-runtime container's args, none if it has no runtime config.
	Args []string
	// ServiceAccount is the name its runtime config gives its service account, "" for Crossplane's generated one.
	ServiceAccount string
	// RBAC holds the file's ClusterRoleBindings to that service account and the ClusterRoles they bind, as YAML.
	RBAC []byte
}

// readInstalledProvider reads what the install file gives the provider whose package is named packageName (e.g.
// provider-kubernetes). A provider the file does not install is an error.
func readInstalledProvider(repoRoot, file, packageName string) (installedProvider, error) {
	var out installedProvider
	data, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(file)))
	if err != nil {
		return out, err
	}
	runtimeConfigs := map[string]*unstructured.Unstructured{}
	roles := map[string]*unstructured.Unstructured{}
	var bindings []*unstructured.Unstructured
	var provider *unstructured.Unstructured
	objects, err := decodeObjects(data)
	if err != nil {
		return out, fmt.Errorf("%s: %w", file, err)
	}
	for _, u := range objects {
		switch u.GetKind() {
		case "DeploymentRuntimeConfig":
			runtimeConfigs[u.GetName()] = u
		case "ClusterRole":
			roles[u.GetName()] = u
		case "ClusterRoleBinding":
			bindings = append(bindings, u)
		case "Provider":
			pkg, _, _ := unstructured.NestedString(u.Object, "spec", "package")
			repository, _, _ := strings.Cut(pkg, ":")
			if strings.HasSuffix(repository, "/"+packageName) {
				provider = u
			}
		}
	}
	if provider == nil {
		return out, fmt.Errorf("%s installs no Provider of package %s", file, packageName)
	}
	configName, found, _ := unstructured.NestedString(provider.Object, "spec", "runtimeConfigRef", "name")
	if !found {
		return out, nil
	}
	config, ok := runtimeConfigs[configName]
	if !ok {
		return out, fmt.Errorf("%s: Provider %s names DeploymentRuntimeConfig %s, which the file does not have", file, provider.GetName(), configName)
	}
	containers, _, _ := unstructured.NestedSlice(config.Object, "spec", "deploymentTemplate", "spec", "template", "spec", "containers")
	for _, c := range containers {
		if container, _ := c.(map[string]any); container["name"] == "package-runtime" {
			if out.Args, _, err = unstructured.NestedStringSlice(container, "args"); err != nil {
				return out, fmt.Errorf("%s: DeploymentRuntimeConfig %s: %w", file, configName, err)
			}
		}
	}
	out.ServiceAccount, _, _ = unstructured.NestedString(config.Object, "spec", "serviceAccountTemplate", "metadata", "name")
	if out.ServiceAccount == "" {
		return out, nil
	}
	for _, b := range bindings {
		subjects, _, _ := unstructured.NestedSlice(b.Object, "subjects")
		if !slices.ContainsFunc(subjects, func(s any) bool {
			m, _ := s.(map[string]any)
			return m["kind"] == "ServiceAccount" && m["name"] == out.ServiceAccount && m["namespace"] == crossplaneNamespace
		}) {
			continue
		}
		roleName, _, _ := unstructured.NestedString(b.Object, "roleRef", "name")
		role, ok := roles[roleName]
		if !ok {
			return out, fmt.Errorf("%s: ClusterRoleBinding %s binds ClusterRole %s, which the file does not have", file, b.GetName(), roleName)
		}
		for _, o := range []*unstructured.Unstructured{role, b} {
			doc, err := yaml.Marshal(o.Object)
			if err != nil {
				return out, err
			}
			out.RBAC = append(append(out.RBAC, "---\n"...), doc...)
		}
	}
	return out, nil
}
