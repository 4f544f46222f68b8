package main

import (
	"slices"
	"testing"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/fntest"
)

// validSpec is a complete, defaulted spec: Pod Identity, a node role kiso
// creates, interruption and monitoring on.
func validSpec() v1alpha1.XKarpenterClusterSpec {
	spec := v1alpha1.XKarpenterClusterSpec{ClusterName: "prod", Region: "eu-west-3", AccountID: "111122223333"}
	spec.Default()
	return spec
}

const input = `{"apiVersion":"cluster.fn.kiso.dev/v1alpha1","kind":"Input"}`

// xr returns an XKarpenterCluster with the supplied spec.
func xr(spec string) string {
	return `{"apiVersion":"kiso.dev/v1alpha1","kind":"XKarpenterCluster","metadata":{"name":"prod"},"spec":` + spec + `}`
}

// newRequest builds a RunFunctionRequest with the XR and observed composed
// resources (composition resource name -> object).
func newRequest(t testing.TB, xrJSON string, observed map[string]string) *fnv1.RunFunctionRequest {
	t.Helper()
	return fntest.Request(input, xrJSON, observed)
}

// run calls the function as Crossplane does; the cluster holds nothing, so
// every name the function asks about is free.
func run(t testing.TB, req *fnv1.RunFunctionRequest) *fnv1.RunFunctionResponse {
	t.Helper()
	return fntest.Run(t, &Function{log: logging.NewNopLogger()}, req, withPrometheusOperator(nil))
}

// prometheusOperatorCRD is prometheus-operator's PrometheusRule CRD, as a cluster that can hold the alerts has it.
const prometheusOperatorCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"prometheusrules.monitoring.coreos.com"}}`

// withPrometheusOperator is a cluster with prometheus-operator's CRDs besides the objects given: where the
// cluster composes its alerts.
func withPrometheusOperator(c fntest.Cluster) fntest.Cluster {
	return append(slices.Clone(c), prometheusOperatorCRD)
}
