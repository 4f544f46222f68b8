package fncall

// A function is a short, fixed list of concerns, each one value that holds what it derives and takes part in the
// phases it has a method for. A phase is a loop over the list, in its order: the function declares one small
// interface per phase (the method that phase calls) and visits the concerns that implement it.

// Each visits, in the list's order, the concerns that take part in a phase: those of type P.
func Each[P any](concerns []any, visit func(P)) {
	for _, c := range concerns {
		if p, ok := c.(P); ok {
			visit(p)
		}
	}
}

// EachUntil is Each for a phase that can fail: it stops at the first visit that returns an error, and returns it.
func EachUntil[P any](concerns []any, visit func(P) error) error {
	for _, c := range concerns {
		if p, ok := c.(P); ok {
			if err := visit(p); err != nil {
				return err
			}
		}
	}
	return nil
}
