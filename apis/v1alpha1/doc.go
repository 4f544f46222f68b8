// Package v1alpha1 holds the Go types of kiso's composite resources (group
// kiso.dev, version v1alpha1). The XRDs under apis/*/definition.yaml are the
// schema Kubernetes enforces; these types are what the functions decode the
// XR's spec into. A test decodes every example strictly into them, so the two
// cannot drift apart silently.
package v1alpha1

// Group and Version of every kiso composite resource.
const (
	Group   = "kiso.dev"
	Version = "v1alpha1"
)
