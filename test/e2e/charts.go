package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// identityKinds are what a chart installs to give its controller an identity and permissions.
var identityKinds = []string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}

// chartIdentity renders a Helm chart from a module zip with its default values, as `helm install RELEASE
// -n NAMESPACE` would, and returns only its service accounts and RBAC: the identity and permissions the
// chart gives the controllers the harness runs outside any pod.
func chartIdentity(chartDir, release, namespace string) ([]byte, error) {
	objects, err := chartObjects(chartDir, release, namespace)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	for _, u := range objects {
		if !slices.Contains(identityKinds, u.GetKind()) {
			continue
		}
		if u.GetNamespace() == "" && (u.GetKind() == "ServiceAccount" || u.GetKind() == "Role" || u.GetKind() == "RoleBinding") {
			u.SetNamespace(namespace)
		}
		doc, err := yaml.Marshal(u.Object)
		if err != nil {
			return nil, fmt.Errorf("cannot encode %s %s of chart %s: %w", u.GetKind(), u.GetName(), chartDir, err)
		}
		out.WriteString("---\n")
		out.Write(doc)
	}
	return out.Bytes(), nil
}

// chartObjects renders a Helm chart from a module zip with its default values, as `helm install RELEASE
// -n NAMESPACE` would, and returns its objects, in the order of its templates' names.
func chartObjects(chartDir, release, namespace string) ([]*unstructured.Unstructured, error) {
	chart, err := loader.Load(chartDir)
	if err != nil {
		return nil, fmt.Errorf("cannot load chart %s: %w", chartDir, err)
	}
	values, err := chartutil.ToRenderValues(chart, map[string]any{}, chartutil.ReleaseOptions{Name: release, Namespace: namespace, IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, fmt.Errorf("cannot make values for chart %s: %w", chartDir, err)
	}
	rendered, err := engine.Render(chart, values)
	if err != nil {
		return nil, fmt.Errorf("cannot render chart %s: %w", chartDir, err)
	}
	var objects []*unstructured.Unstructured
	for _, name := range slices.Sorted(maps.Keys(rendered)) {
		decoded, err := decodeObjects([]byte(rendered[name]))
		if err != nil {
			return nil, fmt.Errorf("cannot decode %s of chart %s: %w", name, chartDir, err)
		}
		objects = append(objects, decoded...)
	}
	return objects, nil
}

// decodeObjects decodes every object of a YAML or JSON stream, skipping empty documents.
func decodeObjects(data []byte) ([]*unstructured.Unstructured, error) {
	var objects []*unstructured.Unstructured
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		u := &unstructured.Unstructured{}
		err := decoder.Decode(&u.Object)
		if errors.Is(err, io.EOF) {
			return objects, nil
		}
		if err != nil {
			return nil, err
		}
		if len(u.Object) > 0 {
			objects = append(objects, u)
		}
	}
}

// chartCRDs returns the names of the CRDs a chart renders with its default values.
func chartCRDs(chartDir string) ([]string, error) {
	objects, err := chartObjects(chartDir, "crds", "default")
	if err != nil {
		return nil, err
	}
	var names []string
	for _, u := range objects {
		if u.GetKind() == CustomResourceDefinitionKind.Kind {
			names = append(names, u.GetName())
		}
	}
	return names, nil
}
