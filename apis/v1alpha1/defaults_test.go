package v1alpha1

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"sigs.k8s.io/yaml"
)

// specSchema reads the structural schema of spec from a generated XRD, as the API server builds it.
func specSchema(t *testing.T, xrdPath string) *structuralschema.Structural {
	t.Helper()
	data, err := os.ReadFile(xrdPath)
	if err != nil {
		t.Fatal(err)
	}
	var xrd struct {
		Spec struct {
			Versions []struct {
				Schema struct {
					OpenAPIV3Schema apiextensionsv1.JSONSchemaProps `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &xrd); err != nil {
		t.Fatalf("%s: %v", xrdPath, err)
	}
	v1Spec := xrd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	var internal apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(&v1Spec, &internal, nil); err != nil {
		t.Fatal(err)
	}
	s, err := structuralschema.NewStructural(&internal)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// defaultedBoth decodes a spec twice: once defaulted by the API server's defaulting algorithm against the XRD's
// schema, once defaulted by the Go type's Default method.
func defaultedBoth[T any](t *testing.T, s *structuralschema.Structural, specYAML string, def func(*T)) (server, fn T) {
	t.Helper()
	var obj any
	if err := yaml.Unmarshal([]byte(specYAML), &obj); err != nil {
		t.Fatal(err)
	}
	defaulting.Default(obj, s)
	serverJSON, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(serverJSON, &server); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal([]byte(specYAML), &fn); err != nil {
		t.Fatal(err)
	}
	def(&fn)
	return server, fn
}

// TestClusterDefaultsAreTheServers: a function reads a spec the API server defaulted (a composed XR) or one it
// did not (crossplane render, an XR the isolation function requires); Default must make them the same.
func TestClusterDefaultsAreTheServers(t *testing.T) {
	s := specSchema(t, "../karpentercluster/definition.yaml")
	for name, spec := range map[string]string{
		"Minimal":         "clusterName: prod\nregion: eu-west-3\naccountId: \"111122223333\"\n",
		"EmptyObjects":    "clusterName: prod\nregion: eu-west-3\naccountId: \"111122223333\"\nkarpenter: {}\ncontroller: {}\nnodeRole: {}\ninterruption: {}\nmonitoring: {}\nnaming: {}\nfeatures: {}\n",
		"IRSA":            "clusterName: prod\nregion: eu-west-3\naccountId: \"111122223333\"\ncontroller:\n  identity: IRSA\n  oidcProviderArn: arn:aws:iam::111122223333:oidc-provider/x\n",
		"SetValuesKept":   "clusterName: prod\nregion: cn-north-1\naccountId: \"111122223333\"\npartition: aws-cn\nproviderConfigName: other\nkarpenter:\n  namespace: karpenter\n  serviceAccount: kp\ninterruption:\n  enabled: false\nmonitoring:\n  prometheusRule: false\n",
		"ExistingProfile": "clusterName: prod\nregion: eu-west-3\naccountId: \"111122223333\"\nnodeRole:\n  existingInstanceProfile:\n    name: p\n",
		"TagsAndLabels":   "clusterName: prod\nregion: eu-west-3\naccountId: \"111122223333\"\ntags:\n  team: platform\nmonitoring:\n  labels:\n    release: x\n",
	} {
		t.Run(name, func(t *testing.T) {
			server, fn := defaultedBoth(t, s, spec, (*XKarpenterClusterSpec).Default)
			if diff := cmp.Diff(server, fn); diff != "" {
				t.Errorf("Default differs from the API server's defaults (-server +Default):\n%s", diff)
			}
		})
	}
}

// TestIsolationDefaultsAreTheServers: as for the cluster, for an organization's spec.
func TestIsolationDefaultsAreTheServers(t *testing.T) {
	s := specSchema(t, "../karpenterisolation/definition.yaml")
	const refs = "organization: acme\nnodeClassRef:\n  name: r\nnodePoolRef:\n  name: r\n"
	for name, spec := range map[string]string{
		"Minimal":       refs,
		"EmptyObjects":  refs + "pool: {}\nplacement: {}\nclusterRef:\n  name: prod\n",
		"Stacks":        refs + "isolation: stack\nstacks:\n- name: api\n- name: batch\n  namespaces: [b]\n  pool:\n    weight: 3\n",
		"PoolSettings":  refs + "pool:\n  limits:\n    cpu: 32\n  disruption: {}\n  expireAfter: 24h\n",
		"SetValuesKept": "organization: acme\nisolation: stack\nnodeRole: Dedicated\nnodeClassRef:\n  apiVersion: karpenter.kwok.sh/v1alpha1\n  kind: KWOKNodeClass\n  name: r\nnodePoolRef:\n  name: r\nplacement:\n  enforce: false\n  inject: true\n",
	} {
		t.Run(name, func(t *testing.T) {
			server, fn := defaultedBoth(t, s, spec, (*XKarpenterIsolationSpec).Default)
			if diff := cmp.Diff(server, fn); diff != "" {
				t.Errorf("Default differs from the API server's defaults (-server +Default):\n%s", diff)
			}
		})
	}
}
