package examples_test

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

// The pod label and port names Crossplane's function runtime gives a function's pods (crossplane
// internal/controller/pkg/runtime: v1.LabelFunction, GRPCPortName, MetricsPortName).
const (
	functionLabel = "pkg.crossplane.io/function"
	grpcPort      = "grpc"
	metricsPort   = "metrics"
)

// TestTheFunctionsMetricsAreReadOnlyFromMonitoring: the install's NetworkPolicy selects the pods of every kiso
// function (each functions/<name> with a main.go, installed as kiso-dev-function-<name>), leaves their gRPC port
// open to Crossplane, and lets the metrics port, whose series name every organization, be reached only from the
// platform's monitoring namespace: no ingress rule opens it to every source.
func TestTheFunctionsMetricsAreReadOnlyFromMonitoring(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(root, "examples", "install", "functions-networkpolicy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var np networkingv1.NetworkPolicy
	if err := yaml.UnmarshalStrict(raw, &np); err != nil {
		t.Fatalf("examples/install/functions-networkpolicy.yaml: %v", err)
	}
	if np.Namespace != "crossplane-system" || !slices.Equal(np.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}) {
		t.Errorf("NetworkPolicy %s/%s with policy types %v, want crossplane-system and Ingress", np.Namespace, np.Name, np.Spec.PolicyTypes)
	}
	assertSelectsEveryFunctionT(t, np)
	openTo, openToAll := ingressPorts(t, np)
	if !openToAll[grpcPort] {
		t.Errorf("port %s is open to %v only, want every source (Crossplane calls it; mutual TLS is its check)", grpcPort, openTo[grpcPort])
	}
	if openToAll[metricsPort] || len(openTo[metricsPort]) == 0 {
		t.Errorf("port %s is open to every source or to none, want the monitoring namespace only", metricsPort)
	}
	for _, peer := range openTo[metricsPort] {
		if peer.IPBlock != nil || peer.NamespaceSelector == nil || len(peer.NamespaceSelector.MatchLabels) == 0 && len(peer.NamespaceSelector.MatchExpressions) == 0 {
			t.Errorf("port %s is open to %+v, want a namespace the platform names", metricsPort, peer)
		}
	}
	for _, port := range slices.Concat(slices.Collect(maps.Keys(openTo)), slices.Collect(maps.Keys(openToAll))) {
		if port != grpcPort && port != metricsPort {
			t.Errorf("port %s is open, which no kiso function serves", port)
		}
	}
}

// ingressPorts lists the peers each port a NetworkPolicy's ingress rules name is open to, and the ports a rule opens
// to every source; a rule that opens every port is an error.
func ingressPorts(t *testing.T, np networkingv1.NetworkPolicy) (openTo map[string][]networkingv1.NetworkPolicyPeer, openToAll map[string]bool) {
	t.Helper()
	openTo, openToAll = map[string][]networkingv1.NetworkPolicyPeer{}, map[string]bool{}
	for _, rule := range np.Spec.Ingress {
		if len(rule.Ports) == 0 {
			t.Errorf("an ingress rule opens every port (from %v)", rule.From)
		}
		for _, p := range rule.Ports {
			switch {
			case p.Port == nil:
				t.Errorf("an ingress rule opens every port (from %v)", rule.From)
			case len(rule.From) == 0:
				openToAll[p.Port.String()] = true
			default:
				openTo[p.Port.String()] = append(openTo[p.Port.String()], rule.From...)
			}
		}
	}
	return openTo, openToAll
}

// assertSelectsEveryFunctionT checks that a NetworkPolicy selects the pods of every kiso function and of no other
// package.
func assertSelectsEveryFunctionT(t *testing.T, np networkingv1.NetworkPolicy) {
	t.Helper()
	selector, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
	if err != nil {
		t.Fatal(err)
	}
	mains, _ := filepath.Glob(filepath.Join(root, "functions", "*", "main.go"))
	if len(mains) == 0 {
		t.Fatal("no function under functions/")
	}
	for _, m := range mains {
		fn := "kiso-dev-function-" + filepath.Base(filepath.Dir(m))
		if !selector.Matches(labels.Set{functionLabel: fn}) {
			t.Errorf("the NetworkPolicy does not select the pods of %s: its metrics are open to every pod", fn)
		}
	}
	if selector.Matches(labels.Set{functionLabel: "function-patch-and-transform"}) {
		t.Error("the NetworkPolicy selects another package's function pods")
	}

}
