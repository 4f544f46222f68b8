package main

// validateFound says what the answers show that the spec did not expect: of a staged rollout, the organizations
// spec.rollout names that have no pool bound to the cluster, and whether its waves are done, progressing, paused
// or blocked.
func (r *call) validateFound() {
	each(r, func(c finder) { c.validateFound(&r.state) })
}
