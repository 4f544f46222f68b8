package main

import (
	"github.com/crossplane/function-sdk-go/errors"

	"github.com/kiso-dev/kiso/functions/internal/typed"
)

// awsPrerequisites is Karpenter's AWS prerequisites, one concern: it renders them, as the call's plan names them
// (every name and value is known from the spec), with the XR's status, which says what Karpenter's Helm chart and
// the organizations need of them.
type awsPrerequisites struct{}

// render writes the XR's status whole, first (the concerns after add to it), and the plan's objects.
func (awsPrerequisites) render(r *state) error {
	r.status = buildStatus(r.plan)
	rendered, err := render(r.plan)
	if err != nil {
		return err
	}
	for name, obj := range rendered {
		cd, err := typed.Composed(obj)
		if err != nil {
			return errors.Wrapf(err, "cannot convert %s", name)
		}
		r.objects[name] = cd
	}
	return nil
}
