package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// workloadClusterProvidersFile is the install step that runs provider-kubernetes and provider-helm for workload
// clusters. The harness runs both with the arguments it gives them, so the suite proves kiso's promises with the
// providers as a platform installs them, not as a test would tune them.
const workloadClusterProvidersFile = "examples/install/workload-cluster-providers.yaml"

// installedProviderArgs returns the arguments the install file gives the provider whose package is named
// packageName (e.g. provider-kubernetes): its DeploymentRuntimeConfig's package-runtime container's args, none if
// it has no runtime config. A provider the file does not install is an error.
func installedProviderArgs(repoRoot, file, packageName string) ([]string, error) {
	data, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(file)))
	if err != nil {
		return nil, err
	}
	runtimeConfigs := map[string]*unstructured.Unstructured{}
	var provider *unstructured.Unstructured
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := decoder.Decode(&u.Object); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		switch u.GetKind() {
		case "DeploymentRuntimeConfig":
			runtimeConfigs[u.GetName()] = u
		case "Provider":
			pkg, _, _ := unstructured.NestedString(u.Object, "spec", "package")
			repository, _, _ := strings.Cut(pkg, ":")
			if strings.HasSuffix(repository, "/"+packageName) {
				provider = u
			}
		}
	}
	if provider == nil {
		return nil, fmt.Errorf("%s installs no Provider of package %s", file, packageName)
	}
	configName, found, _ := unstructured.NestedString(provider.Object, "spec", "runtimeConfigRef", "name")
	if !found {
		return nil, nil
	}
	config, ok := runtimeConfigs[configName]
	if !ok {
		return nil, fmt.Errorf("%s: Provider %s names DeploymentRuntimeConfig %s, which the file does not have", file, provider.GetName(), configName)
	}
	containers, _, _ := unstructured.NestedSlice(config.Object, "spec", "deploymentTemplate", "spec", "template", "spec", "containers")
	for _, c := range containers {
		container, _ := c.(map[string]any)
		if container["name"] != "package-runtime" {
			continue
		}
		args, _, err := unstructured.NestedStringSlice(container, "args")
		return args, err
	}
	return nil, nil
}
