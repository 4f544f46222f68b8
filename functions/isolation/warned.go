package main

import (
	"math"
	"slices"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/fnstate"
	"github.com/kiso-dev/kiso/functions/internal/placement"
	"github.com/kiso-dev/kiso/functions/internal/readlimit"
)

// Warn mode counts what Enforce would refuse: the pods in the organization's
// namespaces that select none of its pools, as the pools policy reads a pod
// (its nodeSelector, or every term of its required node affinity). A
// platform switches to Enforce once the count is zero. The pods are read
// only in Warn mode, a transition: an organization in Enforce mode costs
// nothing more.

// requireWarnedPodsPrefix starts the required resource of each namespace's pods.
const requireWarnedPodsPrefix = "warn-pods-"

// Crossplane sends every pod it is asked for whole, in every request, and
// calls the organization at each change of one: measured with 5,000 pods in
// one organization (make bench-reads), each call took the function about two
// CPU-seconds and Crossplane held 2 GB. So Warn mode counts at each change
// only while the organization's namespaces hold at most warnRecountLimit
// pods; above that it counts once per warnRecountEvery and asks for no pod in
// between, so their changes wake nothing.
const (
	warnRecountLimit = 1000
	warnRecountEvery = time.Hour
)

// warnCount is Warn mode's count as the last call left it in the XR's status.
type warnCount struct {
	// Paused is true while the last count saw more than warnRecountLimit
	// pods and warnRecountEvery has not passed since: no pod is read.
	Paused bool
	// Resume is when counting resumes, if Paused.
	Resume time.Time
	// Last is the status the last count wrote, carried over while Paused.
	Last v1alpha1.XKarpenterIsolationStatus
	// Unread is when the pods were last more than one request carries (readlimit): counting is Paused for
	// readlimit.RetryAfter from then. Zero while they fit.
	Unread time.Time
}

// lastCount reads the last count from the observed XR's status as the
// request holds it, those three fields alone: an organization of many
// stacks has a large status, which the function otherwise reads only the
// conditions of.
func lastCount(xr *structpb.Struct) v1alpha1.XKarpenterIsolationStatus {
	f := xr.GetFields()["status"].GetStructValue().GetFields()
	var st v1alpha1.XKarpenterIsolationStatus
	st.WarnedPods, st.PodsCounted = int32Of(f["warnedPods"]), int32Of(f["podsCounted"])
	st.WarnedPodsCountedAt = f["warnedPodsCountedAt"].GetStringValue()
	st.WarnedPodsUnreadAt = f["warnedPodsUnreadAt"].GetStringValue()
	return st
}

// int32Of reads a JSON number, nil if there is none.
func int32Of(v *structpb.Value) *int32 {
	n, ok := v.GetKind().(*structpb.Value_NumberValue)
	if !ok {
		return nil
	}
	return ptr.To(int32(max(min(n.NumberValue, math.MaxInt32), 0)))
}

// lastWarnCount reads the last count from the observed XR's status. refused is whether Crossplane's last
// reconcile failed on a request too large for the function (readlimit.Refused): in Warn mode the pods are what
// grows without bound, so counting pauses for readlimit.RetryAfter, which the status keeps.
func lastWarnCount(last v1alpha1.XKarpenterIsolationStatus, spec v1alpha1.XKarpenterIsolationSpec, now time.Time, refused bool) warnCount {
	wc := warnCount{Last: last}
	if !spec.Placement.Warned() {
		return wc
	}
	if since, skip := readlimit.Skip(last.WarnedPodsUnreadAt, refused, now); skip {
		wc.Paused, wc.Unread, wc.Resume = true, since, since.Add(readlimit.RetryAfter)
		return wc
	}
	if last.PodsCounted == nil || *last.PodsCounted <= warnRecountLimit {
		return wc
	}
	at, err := time.Parse(time.RFC3339, last.WarnedPodsCountedAt)
	if err != nil {
		return wc
	}
	wc.Resume = at.Add(warnRecountEvery)
	wc.Paused = now.Before(wc.Resume)
	return wc
}

// requireWarnedPods asks, in Warn mode, for the pods of every namespace the
// platform gives the organization, those no stack lists included; none
// while counting is paused.
func (r *call) requireWarnedPods(rs map[string]*fnv1.ResourceSelector) {
	if !r.Spec.Placement.Warned() || r.at.PodsPaused {
		return
	}
	namespaces := unlistedNamespaces(r.namespaces, r.given)
	for _, ns := range r.served {
		namespaces = append(namespaces, ns.Name)
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
func (r *call) warnedPods() (warned []string, pods int, resolved bool) {
	req, spec, keys := r.Req, r.Spec, r.keys
	if !spec.Placement.Warned() {
		return nil, 0, true
	}
	var out []string
	resolved = true
	for _, ns := range r.served {
		nsPods, ok := fnstate.Required(req, requireWarnedPodsPrefix+ns.Name)
		resolved = resolved && ok
		pods += len(nsPods)
		own := spec.Organization
		if spec.Isolation == v1alpha1.IsolationStack {
			own = placement.GrantName(spec.Organization, ns.Stack)
		}
		for _, p := range nsPods {
			if counted(p.Resource) && !selectsPool(p.Resource, own, keys) {
				out = append(out, ns.Name+"/"+p.Resource.GetName())
			}
		}
	}
	for _, ns := range unlistedNamespaces(r.namespaces, r.given) {
		nsPods, ok := fnstate.Required(req, requireWarnedPodsPrefix+ns)
		resolved = resolved && ok
		pods += len(nsPods)
		for _, p := range nsPods {
			if counted(p.Resource) {
				out = append(out, ns+"/"+p.Resource.GetName())
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out), pods, resolved
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
