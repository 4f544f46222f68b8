package main

// The settle phase: make-before-break over what render produced (transition.go holds how a transition is planned
// and what it keeps).

// settle is make-before-break, the whole of it: a pool still being deleted
// is rendered anew once it is gone, and while new pools are not Ready the
// retired ones are kept exactly as observed, and each namespace's Role still
// grants what it granted before, so pods of the old placement are admitted
// until the old pool goes. A namespace the platform no longer gives the
// organization is not the organization's to keep: its Role and ConfigMap go
// at once, whatever the pools wait for. It changes rendered in place and
// says what it holds on to.
// Which pools are draining and which Ready is known on every call, for the status; nothing settles while
// nothing new was rendered.
func (r *call) settle() {
	r.draining = drainingPools(r.pools, r.view)
	r.ready = readyPools(r.pools, r.view, r.draining)
	if r.found.Unresolved() || r.taking {
		return
	}
	withoutPools(r.rendered, r.pools, r.draining)
	r.tr = r.planTransition()
	if r.tr.Holding() {
		keepRetiredGrants(r.rendered, r.view)
		for name, dc := range keepObserved(r.tr.Retired, r.keys) {
			if ns := dc.Resource.GetNamespace(); ns != "" && !r.found.Namespaces[ns] {
				continue
			}
			r.rendered[name] = dc
		}
	}
	r.tr.Guarded = keepGuarded(r.rendered, r.view, r.keys)
}
