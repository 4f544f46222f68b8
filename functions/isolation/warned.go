package main

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/fnstate"
	"github.com/kiso-dev/kiso/functions/internal/placement"
)

// Warn mode counts what Enforce would refuse: the pods in the organization's
// namespaces that select none of its pools, as the pools policy reads a pod
// (its nodeSelector, or every term of its required node affinity). A
// platform switches to Enforce once the count is zero. The pods are read
// only in Warn mode, a transition: an organization in Enforce mode costs
// nothing more.

// requireWarnedPodsPrefix starts the required resource of each namespace's pods.
const requireWarnedPodsPrefix = "warn-pods-"

// requireWarnedPods asks, in Warn mode, for the pods of every namespace the
// platform gives the organization, those no stack lists included.
func requireWarnedPods(rs map[string]*fnv1.ResourceSelector, spec v1alpha1.XKarpenterIsolationSpec, given givenSet) {
	if !spec.Placement.Warned() {
		return
	}
	namespaces := unlistedNamespaces(spec, given)
	for _, ns := range specNamespaces(spec) {
		if given.Namespaces[ns.Name] {
			namespaces = append(namespaces, ns.Name)
		}
	}
	for _, ns := range namespaces {
		namespace := ns
		rs[requireWarnedPodsPrefix+ns] = &fnv1.ResourceSelector{ApiVersion: "v1", Kind: "Pod", Namespace: &namespace,
			Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{}}}
	}
}

// warnedPods lists, as namespace/name, the pods Enforce would refuse: in each
// namespace given, the pods that select no pool the namespace's Role grants,
// and every pod of a namespace given that no stack lists (no Role grants it
// anything). A pod being deleted or done is not counted. Resolved is false
// until Crossplane has answered for every namespace.
func warnedPods(req *fnv1.RunFunctionRequest, spec v1alpha1.XKarpenterIsolationSpec, given givenSet, keys placement.Keys) ([]string, bool) {
	if !spec.Placement.Warned() {
		return nil, true
	}
	var out []string
	resolved := true
	for _, ns := range specNamespaces(spec) {
		if !given.Namespaces[ns.Name] {
			continue
		}
		pods, ok := fnstate.Required(req, requireWarnedPodsPrefix+ns.Name)
		resolved = resolved && ok
		own := spec.Organization
		if spec.Isolation == v1alpha1.IsolationStack {
			own = placement.GrantName(spec.Organization, ns.Stack)
		}
		for _, p := range pods {
			if counted(p.Resource) && !selectsPool(p.Resource, own, keys) {
				out = append(out, ns.Name+"/"+p.Resource.GetName())
			}
		}
	}
	for _, ns := range unlistedNamespaces(spec, given) {
		pods, ok := fnstate.Required(req, requireWarnedPodsPrefix+ns)
		resolved = resolved && ok
		for _, p := range pods {
			if counted(p.Resource) {
				out = append(out, ns+"/"+p.Resource.GetName())
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out), resolved
}

// counted reports whether a pod still runs or waits to.
func counted(pod *unstructured.Unstructured) bool {
	phase, _, _ := unstructured.NestedString(pod.Object, "status", "phase")
	return pod.GetDeletionTimestamp() == nil && phase != "Succeeded" && phase != "Failed"
}

// selectsPool reports whether a pod selects a pool ("o" or "o.s") as the
// pools policy reads it: its nodeSelector names the pool's organization (and
// stack), or every term of its required node affinity requires exactly them.
func selectsPool(pod *unstructured.Unstructured, pool string, keys placement.Keys) bool {
	org, stack, hasStack := strings.Cut(pool, ".")
	selector, _, _ := unstructured.NestedStringMap(pod.Object, "spec", "nodeSelector")
	if selector[keys.NodeOrganization] == org && (!hasStack || selector[keys.NodeStack] == stack) {
		return true
	}
	terms, _, _ := unstructured.NestedSlice(pod.Object, "spec", "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
	if len(terms) == 0 {
		return false
	}
	for _, t := range terms {
		term, _ := t.(map[string]any)
		exprs, _, _ := unstructured.NestedSlice(term, "matchExpressions")
		if !requiresExactly(exprs, keys.NodeOrganization, org) || (hasStack && !requiresExactly(exprs, keys.NodeStack, stack)) {
			return false
		}
	}
	return true
}

// requiresExactly reports whether a term's expressions require key In
// values that are all value.
func requiresExactly(exprs []any, key, value string) bool {
	for _, e := range exprs {
		m, _ := e.(map[string]any)
		values, _, _ := unstructured.NestedStringSlice(m, "values")
		if m["key"] != key || m["operator"] != "In" || len(values) == 0 {
			continue
		}
		if !slices.ContainsFunc(values, func(v string) bool { return v != value }) {
			return true
		}
	}
	return false
}

// countWarned says in the status, in Warn mode, how many pods Enforce would refuse.
func countWarned(st *v1alpha1.XKarpenterIsolationStatus, spec v1alpha1.XKarpenterIsolationSpec, warned []string) {
	if spec.Placement.Warned() {
		st.WarnedPods = ptr.To(int32(min(len(warned), math.MaxInt32)))
	}
}

// warnedMessage adds the count to the WarnOnly condition's message.
func warnedMessage(warned []string) string {
	if len(warned) == 0 {
		return "; every pod in its namespaces selects a pool of the organization: switching to Enforce refuses none of them"
	}
	return fmt.Sprintf("; %d pods in its namespaces select no pool of the organization, so Enforce would refuse them: %s", len(warned), listed(warned))
}
