// Package v1alpha1 holds the Go types of kiso's composite resources (group
// kiso.dev, version v1alpha1). They are the one source of the XRDs'
// schemas: `make generate` writes apis/*/definition.yaml from these types,
// their doc comments and kubebuilder markers, and zz_generated.schema.go from
// the same markers, for the functions to use the defaults and patterns the
// XRDs declare. A field is optional unless marked required.
//
// +kubebuilder:validation:Optional
package v1alpha1

// Group and Version of every kiso composite resource.
const (
	Group   = "kiso.dev"
	Version = "v1alpha1"
)
