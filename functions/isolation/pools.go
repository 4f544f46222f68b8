package main

import (
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/kiso-dev/kiso/functions/internal/nodeidentity"
)

// renderPools adds each pool's NodeClass and NodePool to objects: cloned from the revision of its reference pair
// its rollout wave allows (r.rr), within the organization's limit, its NodeClass naming identity when the
// organization has its own. A pool its wave keeps is kept exactly as observed.
func (r *call) renderPools(objects map[resource.Name]*composed.Unstructured, identity *nodeidentity.Identity) error {
	limit := newOrganizationLimit(r.Spec, r.view)
	limit.countBeingDeleted(r.found.NodeClassUsers)
	for _, p := range r.pools {
		src := r.rr.Sources[p.Name]
		if src.Keep {
			for name, dc := range keepObserved(observedPool(r.view, p), r.keys) {
				objects[name] = dc.Resource
			}
			continue
		}
		nc, err := renderNodeClass(src.NodeClass, p, r.keys, nodeAccount{Inherited: src.Inherited, Identity: identity})
		if err != nil {
			return err
		}
		np, err := renderNodePool(src.NodePool, p, nodeClassGVK(p.Class.NodeClassRef), r.keys)
		if err != nil {
			return err
		}
		limit.limit(np, p)
		annotate(nc, r.Spec, src, r.keys)
		annotate(np, r.Spec, src, r.keys)
		applied := nodeClassApplied(r.Observed, nodeClassResourceName(p), r.keys)
		if err := markNodeClass(np, observedNodePool(r.view.Get(nodePoolResourceName(p))), nc, applied, r.keys); err != nil {
			return err
		}
		objects[nodeClassResourceName(p)] = &composed.Unstructured{Unstructured: *nc}
		objects[nodePoolResourceName(p)] = &composed.Unstructured{Unstructured: *np}
	}
	return nil
}
