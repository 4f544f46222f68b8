package main

import (
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/kiso-dev/kiso/functions/internal/clusterview"
)

// crClusterView is the composed resource name of the cluster's view for its organizations (clusterview).
const crClusterView resource.Name = "organization-view"

// organizationView is what the organizations bound to the cluster read of it, one concern: rendered from the spec
// and the XR's status as the concerns before it wrote it. It stays where Crossplane and the organizations' XRs
// run, for a workload cluster too.
type organizationView struct{}

// render composes the view.
func (organizationView) render(r *state) error {
	view, err := clusterview.Render(r.name(), r.Spec, r.status)
	if err != nil {
		return err
	}
	r.objects[crClusterView] = view
	return nil
}
