package main

// concerns is what the cluster function does, one value per concern, in the order every phase visits them: the
// second table of contents, after RunFunction's phases. Each takes part in the phases it has a method for (the
// interfaces below), and holds what it derives for the phases after.
type concerns struct {
	// aws is Karpenter's AWS prerequisites: its IAM identities, the interruption queue and its rules, the EKS
	// access entry and Pod Identity association (plan), and what the XR's status says of them.
	aws awsPrerequisites
	// namespaces is which platform namespaces a user could create do not exist.
	namespaces platformNamespaces
	// alerts is kiso's PrometheusRule, where prometheus-operator's CRD is served.
	alerts alertsPlan
	// policies is the cluster's admission policies, and what an auditing cluster would refuse.
	policies placementPolicies
	// references is the reference pairs the spec lists, shown to the organizations.
	references listedReferences
	// rollouts is the staged rollouts of spec.rollout.
	rollouts stagedRollouts
	// install is Karpenter's Releases.
	install karpenterInstall
	// view is what the organizations bound to the cluster read of it.
	view organizationView
	// deletion is the order of the cluster's deletion: the Usages and the policies that keep what is in use.
	deletion deletionOrdering
	// domain is the key domain the cluster's policies check.
	domain keyDomain
	// ownership is what Crossplane composes now: nothing something else holds, each object ready by what was
	// observed of it.
	ownership composition
}

// list is the concerns in their order, each as the value a phase visits.
func (c *concerns) list() []any {
	return []any{&c.aws, &c.namespaces, &c.alerts, &c.policies, &c.references, &c.rollouts, &c.install, &c.view, &c.deletion, &c.domain, &c.ownership}
}

// The phases a concern may take part in, one method each.
type (
	// requirer asks Crossplane for what the concern reads (state.required), from the spec and what was composed.
	requirer interface{ require(r *state) }
	// resolver reads Crossplane's answers; checkedResolver reads answers that can be wrong, and an error stops
	// the call.
	resolver        interface{ resolve(r *state) }
	checkedResolver interface{ resolve(r *state) error }
	// finder says what the answers show that the spec did not expect.
	finder interface{ validateFound(r *state) }
	// renderer adds to the XR's status and to the objects the cluster composes (state.objects); for a workload
	// cluster every object that lives there is wrapped after. checkedRenderer's error stops the call.
	renderer        interface{ render(r *state) }
	checkedRenderer interface{ render(r *state) error }
	// besideRenderer adds the objects that stay beside the XR, after the others are wrapped for a workload
	// cluster.
	besideRenderer interface{ renderBeside(r *state) error }
	// settler decides what Crossplane composes now; false stops the call.
	settler interface{ settle(r *state) bool }
	// reporter says on the XR what the concern found, and how soon Crossplane calls again.
	reporter interface{ report(r *state) }
)
