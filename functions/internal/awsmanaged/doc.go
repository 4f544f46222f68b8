// Package awsmanaged holds Go types of the provider-aws managed resources kiso composes, with only the fields kiso
// sets, under the JSON names of provider-aws' CRDs (hack/crds.env names the release). Every render is validated
// against those CRDs, and this package's test checks each field against them, so a name kiso gets wrong fails
// before it reaches a cluster.
//
// kiso keeps these types rather than import provider-aws' Go module: that module pins crossplane-runtime and upjet,
// and its current releases need versions of them the Go module proxy kiso builds from does not serve, which would
// hold every other dependency back with it.
//
// +kubebuilder:object:generate=true
package awsmanaged
