package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/internal/layout"
)

// karpenterModule ships Karpenter's chart (charts/karpenter) at the version kiso installs by default.
const karpenterModule = "github.com/aws/karpenter-provider-aws"

// karpenterChartDir returns Karpenter's chart from its Go module zip.
func karpenterChartDir(t *testing.T, version string) string {
	t.Helper()
	return karpenterModuleFile(t, version, "charts", "karpenter")
}

// karpenterModuleFile returns a file of Karpenter's Go module zip, downloading it through the module proxy once.
func karpenterModuleFile(t *testing.T, version string, path ...string) string {
	t.Helper()
	dir, err := layout.ModuleDir(t.Context(), karpenterModule+"@v"+version)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(append([]string{dir}, path...)...)
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("%s is not in module %s@v%s: %v", filepath.Join(path...), karpenterModule, version, err)
	}
	return file
}

// renderChart renders a chart with the values as `helm install RELEASE -n NAMESPACE -f values` would, and
// returns its objects.
func renderChart(t *testing.T, dir, release, namespace string, values map[string]any) []*unstructured.Unstructured {
	t.Helper()
	chart, err := loader.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	rv, err := chartutil.ToRenderValues(chart, values, chartutil.ReleaseOptions{Name: release, Namespace: namespace, IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		t.Fatal(err)
	}
	files, err := engine.Render(chart, rv)
	if err != nil {
		t.Fatalf("Karpenter's chart refuses kiso's values: %v", err)
	}
	var objects []*unstructured.Unstructured
	for name, content := range files {
		decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader([]byte(content)), 4096)
		for {
			u := &unstructured.Unstructured{}
			err := decoder.Decode(&u.Object)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if len(u.Object) > 0 {
				objects = append(objects, u)
			}
		}
	}
	return objects
}

// TestChartTakesKisosValues renders Karpenter's real chart (the version kiso installs by default, from its module
// zip) with the values of the Release the function composes, and reads them back where Karpenter reads them: the
// controller's environment and its service account. The chart's placement defaults (off Karpenter's own nodes,
// over zones, two replicas) must survive kiso's values, and the platform's values must win over kiso's.
func TestChartTakesKisosValues(t *testing.T) {
	cluster := xr(`{"clusterName":"eu-workloads","region":"eu-west-1","accountId":"111122223333",
		"workloadCluster":{"providerConfigName":"eu-workloads"},
		"karpenter":{"namespace":"karpenter","serviceAccount":"karpenter-controller","install":{"values":{"logLevel":"debug","settings":{"batchMaxDuration":"15s"}}}},
		"controller":{"identity":"IRSA","oidcProviderArn":"arn:aws:iam::111122223333:oidc-provider/oidc.eks.eu-west-1.amazonaws.com/id/EXAMPLE"}}`)
	rsp := run(t, newRequest(t, cluster, deployedCRDs(t, cluster)))
	dr, ok := rsp.GetDesired().GetResources()[string(crKarpenterRelease)]
	if !ok {
		t.Fatalf("no Release composed; results: %v", rsp.GetResults())
	}
	release := dr.GetResource().AsMap()
	forProvider := release["spec"].(map[string]any)["forProvider"].(map[string]any)
	chart := forProvider["chart"].(map[string]any)
	if chart["version"] != v1alpha1.DefaultChartInstallVersion {
		t.Fatalf("Release chart version %v, want the default %s", chart["version"], v1alpha1.DefaultChartInstallVersion)
	}
	values := forProvider["values"].(map[string]any)

	deployment, serviceAccount := controllerOf(t, renderChart(t, karpenterChartDir(t, v1alpha1.DefaultChartInstallVersion), karpenterRelease, "karpenter", values))

	env := map[string]string{}
	for _, c := range deployment.Spec.Template.Spec.Containers {
		for _, e := range c.Env {
			env[e.Name] = e.Value
		}
	}
	for name, want := range map[string]string{
		"CLUSTER_NAME":       "eu-workloads",
		"INTERRUPTION_QUEUE": "kiso-eu-workloads-karpenter-interruption",
		"LOG_LEVEL":          "debug", // the platform's value
		"BATCH_MAX_DURATION": "15s",   // merged beside kiso's settings, not instead of them
	} {
		if env[name] != want {
			t.Errorf("controller env %s = %q, want %q", name, env[name], want)
		}
	}
	if serviceAccount.Name != "karpenter-controller" || deployment.Spec.Template.Spec.ServiceAccountName != "karpenter-controller" {
		t.Errorf("service account %q, pods run as %q; want karpenter-controller, the one the controller role trusts", serviceAccount.Name, deployment.Spec.Template.Spec.ServiceAccountName)
	}
	if got, want := serviceAccount.Annotations[irsaRoleAnnotation], "arn:aws:iam::111122223333:role/kiso/eu-workloads/kiso-eu-workloads-karpenter-controller"; got != want {
		t.Errorf("service account annotation %s = %q, want %q", irsaRoleAnnotation, got, want)
	}

	assertChartPlacement(t, deployment)
}

// assertChartPlacement checks the chart's defaults kiso keeps: two replicas, off the nodes Karpenter manages,
// spread over zones.
func assertChartPlacement(t *testing.T, deployment appsv1.Deployment) {
	t.Helper()
	if r := deployment.Spec.Replicas; r == nil || *r != 2 {
		t.Errorf("replicas %v, want the chart's 2", r)
	}
	offKarpenterNodes := false
	if a := deployment.Spec.Template.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			for _, e := range term.MatchExpressions {
				offKarpenterNodes = offKarpenterNodes || (e.Key == "karpenter.sh/nodepool" && e.Operator == corev1.NodeSelectorOpDoesNotExist)
			}
		}
	}
	if !offKarpenterNodes {
		t.Error("the controller may run on nodes Karpenter manages: no required karpenter.sh/nodepool DoesNotExist affinity")
	}
	overZones := false
	for _, c := range deployment.Spec.Template.Spec.TopologySpreadConstraints {
		overZones = overZones || c.TopologyKey == corev1.LabelTopologyZone
	}
	if !overZones {
		t.Error("the controller is not spread over zones")
	}
}

// controllerOf returns the controller's Deployment and ServiceAccount among a chart's objects.
func controllerOf(t *testing.T, objects []*unstructured.Unstructured) (appsv1.Deployment, corev1.ServiceAccount) {
	t.Helper()
	var deployment appsv1.Deployment
	var serviceAccount corev1.ServiceAccount
	for _, o := range objects {
		var into any
		switch o.GetKind() {
		case "Deployment":
			into = &deployment
		case "ServiceAccount":
			into = &serviceAccount
		default:
			continue
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, into); err != nil {
			t.Fatal(err)
		}
	}
	if deployment.Name == "" || serviceAccount.Name == "" {
		t.Fatalf("the chart rendered no Deployment or ServiceAccount: %d objects", len(objects))
	}
	return deployment, serviceAccount
}

// TestTheCRDChartBringsEveryCRDKeptByHelm renders Karpenter's real CRD chart (the version kiso installs by
// default) with the values of the CRD Release the function composes: it renders CRDs only, every one carrying
// Helm's keep annotation, and every CRD the crds/ folder of Karpenter's chart holds (its module's pkg/apis/crds,
// which the published chart packages there), so that skipping those loses none.
func TestTheCRDChartBringsEveryCRDKeptByHelm(t *testing.T) {
	cluster := xr(`{"clusterName":"prod","region":"eu-west-3","accountId":"111122223333","karpenter":{"install":{}}}`)
	dr, ok := run(t, newRequest(t, cluster, nil)).GetDesired().GetResources()[string(crKarpenterCRDRelease)]
	if !ok {
		t.Fatal("no CRD Release composed")
	}
	values, _ := dr.GetResource().AsMap()["spec"].(map[string]any)["forProvider"].(map[string]any)["values"].(map[string]any)
	chart := karpenterModuleFile(t, v1alpha1.DefaultChartInstallVersion, "charts", karpenterCRDChart)
	rendered := map[string]bool{}
	for _, o := range renderChart(t, chart, karpenterCRDRelease, "kube-system", values) {
		if o.GetKind() != "CustomResourceDefinition" {
			t.Errorf("the CRD chart renders %s %s", o.GetKind(), o.GetName())
			continue
		}
		if got := o.GetAnnotations()[helmKeep]; got != "keep" {
			t.Errorf("CRD %s: annotation %s = %q, want keep", o.GetName(), helmKeep, got)
		}
		rendered[o.GetName()] = true
	}
	files, err := filepath.Glob(filepath.Join(karpenterModuleFile(t, v1alpha1.DefaultChartInstallVersion, "pkg", "apis", "crds"), "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs in Karpenter's pkg/apis/crds: %v", err)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		crd := &unstructured.Unstructured{}
		if err := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096).Decode(&crd.Object); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if !rendered[crd.GetName()] {
			t.Errorf("CRD %s of Karpenter's chart is not in its CRD chart", crd.GetName())
		}
	}
}
