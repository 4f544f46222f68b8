package main

import (
	"github.com/crossplane/function-sdk-go/errors"

	"github.com/kiso-dev/kiso/functions/internal/typed"
)

// awsPrerequisites is Karpenter's AWS prerequisites, one concern: it plans them from the spec (require), and
// renders them with the XR's status, which says what Karpenter's Helm chart and the organizations need of them
// (render). The plan is the one the other concerns read the cluster's names from.
type awsPrerequisites struct {
	plan plan
}

// require plans the prerequisites: every name and value is known from the spec.
func (a *awsPrerequisites) require(r *call) { a.plan = newPlan(r.Spec) }

// render writes the XR's status whole, first (the concerns after add to it), and the plan's objects.
func (a *awsPrerequisites) render(r *call) error {
	r.status = buildStatus(a.plan)
	rendered, err := render(a.plan)
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
