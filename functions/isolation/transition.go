package main

import (
	"slices"

	"github.com/crossplane/function-sdk-go/resource"
)

// A transition is what happens to objects the spec no longer asks for: after
// a switch between organization and stack isolation, a renamed stack or a
// removed one. Make before break: they stay composed, unchanged, until every
// pool of the new spec reports Ready, so no stack is ever left without a
// Ready pool; then they go.
type transition struct {
	// Retired are observed composed resources the spec no longer renders.
	Retired map[resource.Name]resource.ObservedComposed
	// RetiredPools are the names of retired NodePools, for the condition.
	RetiredPools []string
	// Waiting are the new pools that are not Ready yet.
	Waiting []string
}

// planTransition compares what is composed with what the spec renders.
func planTransition(observed map[resource.Name]resource.ObservedComposed, rendered map[resource.Name]*resource.DesiredComposed, pools []pool) transition {
	t := transition{Retired: map[resource.Name]resource.ObservedComposed{}}
	for name, oc := range observed {
		if _, still := rendered[name]; still {
			continue
		}
		t.Retired[name] = oc
		if oc.Resource.GetKind() == nodePoolKind {
			t.RetiredPools = append(t.RetiredPools, oc.Resource.GetName())
		}
	}
	slices.Sort(t.RetiredPools)
	for _, p := range pools {
		np, npOK := observed[nodePoolResourceName(p)]
		nc, ncOK := observed[nodeClassResourceName(p)]
		if !isReady(np, npOK) || !isReady(nc, ncOK) {
			t.Waiting = append(t.Waiting, p.Name)
		}
	}
	return t
}

// Holding reports whether retired objects must stay for now.
func (t transition) Holding() bool {
	return len(t.Retired) > 0 && len(t.Waiting) > 0
}
