package main

// validateFound says what the answers show that the spec did not expect, and where a staged rollout stands: the
// organizations spec.rollout names that have no pool bound to the cluster, and whether its waves are done,
// progressing, paused or blocked. Nothing is said while Crossplane has not answered every requirement of the
// rollout.
func (r *call) validateFound() {
	r.rollouts.validateFound(r)
}
