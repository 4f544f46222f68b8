package main

import (
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/crossplane/function-sdk-go/errors"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/placement"
)

// Karpenter's NodePool API, the same for every provider.
const (
	karpenterGroup     = "karpenter.sh"
	nodePoolAPIVersion = "karpenter.sh/v1"
	nodePoolKind       = "NodePool"
)

// renderNodePool clones the reference NodePool's spec (fields kiso does not
// know included) for one pool: it points the clone at the pool's NodeClass,
// merges kiso's labels and taints into the node template and applies the
// organization's pool settings.
func renderNodePool(ref *unstructured.Unstructured, p pool, nodeClass schema.GroupVersionKind, keys placement.Keys) (*unstructured.Unstructured, error) {
	spec, err := clonedSpec(ref)
	if err != nil {
		return nil, err
	}
	np := newObject(nodePoolAPIVersion, nodePoolKind, p, keys)
	np.Object["spec"] = spec

	w := newWriter(spec)
	w.set(map[string]any{"group": nodeClass.Group, "kind": nodeClass.Kind, "name": p.Name}, "template", "spec", "nodeClassRef")

	labels, _, lerr := unstructured.NestedStringMap(spec, "template", "metadata", "labels")
	if lerr != nil {
		return nil, errors.Wrapf(lerr, "cannot read spec.template.metadata.labels of NodePool %q", ref.GetName())
	}
	w.set(toAnyMap(mergeStringMap(labels, keys.Managed(), p.nodeLabels())), "template", "metadata", "labels")

	taints, _, terr := unstructured.NestedSlice(spec, "template", "spec", "taints")
	if terr != nil {
		return nil, errors.Wrapf(terr, "cannot read spec.template.spec.taints of NodePool %q", ref.GetName())
	}
	w.set(mergeTaints(taints, keys.Managed(), p.Taints), "template", "spec", "taints")

	if w.err != nil {
		return nil, errors.Wrapf(w.err, "cannot clone NodePool %q", ref.GetName())
	}
	if err := applySettings(w, p.Settings); err != nil {
		return nil, errors.Wrapf(err, "cannot apply pool settings to NodePool %q", p.Name)
	}
	return np, nil
}

// applySettings writes the organization's pool settings over the cloned spec;
// a setting left empty keeps the reference's value.
func applySettings(w *writer, s v1alpha1.PoolSettings) error {
	for _, k := range slices.Sorted(maps.Keys(s.Limits)) {
		w.set(quantity(s.Limits[k]), "limits", k)
	}
	w.setString(s.ExpireAfter, "template", "spec", "expireAfter")
	w.setString(s.TerminationGracePeriod, "template", "spec", "terminationGracePeriod")
	if s.Weight != nil {
		w.set(int64(*s.Weight), "weight")
	}
	if d := s.Disruption; d != nil {
		w.setString(d.ConsolidationPolicy, "disruption", "consolidationPolicy")
		w.setString(d.ConsolidateAfter, "disruption", "consolidateAfter")
		if d.Budgets != nil {
			budgets := make([]any, 0, len(d.Budgets))
			for _, b := range d.Budgets {
				budgets = append(budgets, budgetObject(b))
			}
			w.set(budgets, "disruption", "budgets")
		}
	}
	return w.err
}

// writer sets nested fields of a pool's clone of a reference spec and keeps
// the first error, so a sequence of writes reads as one. The clone copies the
// spec's top level only (clonedSpec); writer copies each object along a path
// before its first write into it. What kiso never writes stays the
// reference's, shared by every pool's clone and only read, so the request
// never changes and a pool costs what kiso sets, not the reference's size.
type writer struct {
	obj    map[string]any
	copied map[string]bool // the dotted paths of the objects copied so far
	err    error
}

func newWriter(clone map[string]any) *writer {
	return &writer{obj: clone, copied: map[string]bool{}}
}

func (w *writer) set(value any, path ...string) {
	if w.err != nil {
		return
	}
	obj := w.obj
	for i, f := range path[:len(path)-1] {
		at := strings.Join(path[:i+1], ".")
		v, found := obj[f]
		child, isObject := v.(map[string]any)
		switch {
		case !found:
			child = map[string]any{}
		case !isObject:
			w.err = errors.Errorf("%s is not an object", at)
			return
		case !w.copied[at]:
			child = maps.Clone(child)
		}
		obj[f], w.copied[at] = child, true
		obj = child
	}
	obj[path[len(path)-1]] = value
}

// setString sets a string field unless value is empty.
func (w *writer) setString(value string, path ...string) {
	if value != "" {
		w.set(value, path...)
	}
}

func budgetObject(b v1alpha1.Budget) map[string]any {
	o := map[string]any{"nodes": b.Nodes}
	if b.Schedule != "" {
		o["schedule"] = b.Schedule
	}
	if b.Duration != "" {
		o["duration"] = b.Duration
	}
	if len(b.Reasons) > 0 {
		reasons := make([]any, 0, len(b.Reasons))
		for _, r := range b.Reasons {
			reasons = append(reasons, r)
		}
		o["reasons"] = reasons
	}
	return o
}

// quantity keeps a limit as the user wrote it: 100 stays a number, "400Gi" a string.
func quantity(v intstr.IntOrString) any {
	if v.Type == intstr.Int {
		return int64(v.IntVal)
	}
	return v.StrVal
}

// clonedSpec copies the top level of the reference's spec, for a writer to
// fill in: rendering never changes the request.
func clonedSpec(ref *unstructured.Unstructured) (map[string]any, error) {
	spec, ok := ref.Object["spec"].(map[string]any)
	if !ok {
		return nil, errors.Errorf("%s %q has no spec", ref.GetKind(), ref.GetName())
	}
	return maps.Clone(spec), nil
}

// newObject starts a cluster-scoped object named after the pool and labelled
// with its identity.
func newObject(apiVersion, kind string, p pool, keys placement.Keys) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: objectMap(metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}, p.Name, "", toAnyMap(objectLabels(p, keys)))}
}

// objectLabels label every object of a pool with its identity, so
// `kubectl get nodepools -l kiso.dev/organization=acme` finds an
// organization's pools.
func objectLabels(p pool, keys placement.Keys) map[string]string {
	labels := map[string]string{placement.ManagedByLabel: placement.ManagedByValue}
	for _, k := range keys.Managed() {
		if v, ok := p.Labels[k]; ok {
			labels[k] = v
		}
	}
	return labels
}

func toAnyMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
