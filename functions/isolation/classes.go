package main

import (
	"slices"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
)

// A capacityClass is one kind of an organization's capacity: its default class (spec.nodeClassRef,
// spec.nodePoolRef and spec.pool) or one of spec.classes. Each pool is of one class and cloned from its
// reference pair.
type capacityClass struct {
	// Name is "" for the default class, which names no pool and labels no node: an organization that names no
	// class renders as before classes existed.
	Name         string
	NodeClassRef v1alpha1.NodeClassReference
	NodePoolRef  v1alpha1.NodePoolReference
	// Pool is the class's own pool settings: spec.pool for the default class, classes[].pool for the others.
	Pool *v1alpha1.PoolSettings
	// Index is the class's index in spec.classes, -1 for the default class.
	Index int
}

// classesOf returns the organization's classes: the default class, then spec.classes in order.
func classesOf(spec v1alpha1.XKarpenterIsolationSpec) []capacityClass {
	out := make([]capacityClass, 0, 1+len(spec.Classes))
	out = append(out, capacityClass{NodeClassRef: spec.NodeClassRef, NodePoolRef: spec.NodePoolRef, Pool: spec.Pool, Index: -1})
	for i, c := range spec.Classes {
		out = append(out, capacityClass{Name: c.Name, NodeClassRef: c.NodeClassRef, NodePoolRef: c.NodePoolRef, Pool: c.Pool, Index: i})
	}
	return out
}

// display is the class's name as status and messages show it.
func (c capacityClass) display() string {
	if c.Name == "" {
		return v1alpha1.DefaultClassName
	}
	return c.Name
}

// stackClasses returns the classes of spec.classes a stack has a pool of in stack isolation: those it lists,
// in the order of spec.classes, or every one when it lists none.
func stackClasses(spec v1alpha1.XKarpenterIsolationSpec, s v1alpha1.Stack) []capacityClass {
	all := classesOf(spec)[1:]
	if s.Classes == nil {
		return all
	}
	return slices.DeleteFunc(all, func(c capacityClass) bool { return !slices.Contains(s.Classes, c.Name) })
}
