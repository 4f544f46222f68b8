package main

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"k8s.io/utils/ptr"

	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/response"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/fncall"
	"github.com/kiso-dev/kiso/functions/internal/fnstate"
	"github.com/kiso-dev/kiso/functions/internal/placement"
	"github.com/kiso-dev/kiso/functions/internal/readlimit"
)

// report says on the XR and its claim what the call found and rendered, in the order a user reads the
// conditions: whether the references resolved, which revision the pools are on, whether they are settled,
// which namespaces the organization has and what admission enforces for it; and writes the status, whole.
func (r *call) report() {
	r.status = buildStatus(r.pools, r.ready, r.stacks)
	reportUsage(&r.status, r.Spec, r.view, r.pools)
	switch {
	case r.found.Unresolved():
		r.reportUnresolved()
	case r.taking:
		r.reportTaking()
	default:
		response.ConditionTrue(r.Rsp, TypeReferencesResolved, ReasonResolved).TargetCompositeAndClaim()
		r.reportRevisions()
		r.reportTransition()
		r.reportHeadroom()
		r.reportNamespaces()
		r.reportUnlistedNamespaces()
		r.reportPlacement()
		r.countWarned()
		r.Settled(r.tr.Idle() && allObserved(r.rendered, r.view))
		r.requeueForCount()
	}
	r.domain.report(r.Rsp)
	fncall.SpecValid(r.Rsp, r.To)
}

// reportTaking says that a new organization is being taken before its pools are composed (takeOrganization),
// and asks to be called again soon.
func (r *call) reportTaking() {
	lock := plannedOrganizationLock(r.Spec, r.In)
	response.ConditionFalse(r.Rsp, TypePoolsSettled, ReasonTaking).
		WithMessage(fmt.Sprintf("taking organization %s (ConfigMap %s/%s) before composing its pools, so that one claim alone holds it", r.Spec.Organization, lock.Namespace, lock.Name)).
		TargetCompositeAndClaim()
	r.Settled(false)
}

// reportUnresolved says why nothing new was rendered. A brand-new XR has nothing
// to keep, so it is explicitly not ready rather than "ready with no pools".
func (r *call) reportUnresolved() {
	rsp, found, wl, kept := r.Rsp, r.found, r.wl, r.view.Len()
	switch {
	case found.Waiting && len(wl.Unanswered()) > 0:
		// The workload cluster has not answered what the organization reads there: say what and why (it may be
		// unreachable, or its ProviderConfig missing).
		msg := fmt.Sprintf("waiting for workload cluster %s to answer: %s", wl.ProviderConfig, strings.Join(wl.Unanswered(), "; "))
		if kept > 0 {
			msg += "; keeping the pools already composed unchanged meanwhile"
		}
		response.ConditionFalse(rsp, TypeReferencesResolved, ReasonWaiting).WithMessage(msg).TargetCompositeAndClaim()
	case found.Waiting:
		response.ConditionFalse(rsp, TypeReferencesResolved, ReasonWaiting).
			WithMessage("waiting for Crossplane to fetch the reference NodeClass and NodePool").TargetCompositeAndClaim()
	default:
		reason, msg := ReasonNotFound, strings.Join(append(found.Missing, found.NotReady...), "; ")
		if len(found.Missing) == 0 {
			reason = ReasonClusterNotReady
		}
		if kept > 0 {
			msg += "; keeping the pools already composed unchanged meanwhile"
		}
		response.ConditionFalse(rsp, TypeReferencesResolved, reason).WithMessage(msg).TargetCompositeAndClaim()
		response.Warning(rsp, errors.New(msg)).TargetCompositeAndClaim()
	}
	if kept == 0 {
		r.DesiredXR.Ready = resource.ReadyFalse
	}
}

// reportRevisions says on the claim which revision each pool is on and
// whether the organization waits for a wave, for each class's reference pair.
func (r *call) reportRevisions() {
	rsp, st, rr := r.Rsp, &r.status, r.rr
	revisions := make([]string, 0, 1)
	for i := range st.Pools {
		st.Pools[i].Reference = rr.Sources[st.Pools[i].Name].Revision
		if ref := st.Pools[i].Reference; ref != "" && !slices.Contains(revisions, ref) {
			revisions = append(revisions, ref)
		}
	}
	slices.Sort(revisions)
	st.Revisions = strings.Join(revisions, ",")
	messages := make([]string, 0, len(rr.Classes))
	waiting := false
	for _, c := range rr.Classes {
		messages = append(messages, c.message())
		waiting = waiting || len(c.waiting()) > 0
	}
	if !waiting {
		response.ConditionTrue(rsp, TypeReferenceCurrent, ReasonCurrent).WithMessage(strings.Join(messages, "; ")).TargetCompositeAndClaim()
		return
	}
	response.ConditionFalse(rsp, TypeReferenceCurrent, ReasonWaitingForWave).WithMessage(strings.Join(messages, "; ")).TargetCompositeAndClaim()
}

// reportTransition says on the XR and the claim whether the organization's pools are what its spec asks
// for, or what is being replaced, and what for.
func (r *call) reportTransition() {
	rsp, t := r.Rsp, r.tr
	var waits []string
	if t.Holding() {
		waits = append(waits, fmt.Sprintf("keeping retired pools %s until new pools %s report Ready", strings.Join(t.RetiredPools, ", "), strings.Join(t.Waiting, ", ")))
	}
	if len(t.Draining) > 0 {
		waits = append(waits, fmt.Sprintf("pools %s are composed anew once their earlier objects of the same names are deleted", strings.Join(t.Draining, ", ")))
	}
	reason := ReasonReplacing
	if t.retiring() {
		held := make([]string, 0, len(t.Retiring))
		for _, rp := range t.Retiring {
			held = append(held, fmt.Sprintf("%s (%d nodes)", rp.Name, rp.Nodes))
		}
		waits = append(waits, fmt.Sprintf("retired pools %s launch no node and go once they hold none: their pods move to the new pools as their owners roll them (kubectl rollout restart), and Karpenter removes each node once empty, within the pool's disruption budget", strings.Join(held, ", ")))
		if len(t.Draining) == 0 {
			reason = ReasonRetiring
		}
	}
	if len(waits) == 0 {
		response.ConditionTrue(rsp, TypePoolsSettled, ReasonSettled).WithMessage(guardedMessage(t.Guarded)).TargetCompositeAndClaim()
		return
	}
	response.ConditionFalse(rsp, TypePoolsSettled, reason).WithMessage(strings.Join(waits, "; ")).TargetCompositeAndClaim()
}

// guardedMessage says which retired objects wait for what still uses them, "" when none does: the cluster's
// policies refuse their deletion until then (keepGuarded).
func guardedMessage(guarded []guard) string {
	kept := make([]string, 0, len(guarded))
	for _, g := range guarded {
		kept = append(kept, fmt.Sprintf("retired %s goes once %s no longer uses it", g.Object, g.User))
	}
	return strings.Join(kept, "; ")
}

// reportPlacement sets the placement conditions on the XR and its claim.
// In Warn mode it adds what the count says (warnedMessage).
func (r *call) reportPlacement() {
	for _, c := range placementConditions(r.Spec, r.found.Placement, pendingGrants(r.served, r.view), r.keys) {
		if c.Reason == ReasonWarnOnly {
			c.Message += r.warnedMessage()
		}
		if c.OK {
			response.ConditionTrue(r.Rsp, c.Type, c.Reason).WithMessage(c.Message).TargetCompositeAndClaim()
		} else {
			response.ConditionFalse(r.Rsp, c.Type, c.Reason).WithMessage(c.Message).TargetCompositeAndClaim()
		}
	}
}

// reportNamespaces says which of the spec's namespaces the platform has not
// given the organization: their pods get no grant until it does.
func (r *call) reportNamespaces() {
	rsp, spec, found, keys := r.Rsp, r.Spec, r.found, r.keys
	missing := unassignedNamespaces(r.namespaces, found.Namespaces)
	if len(missing) == 0 {
		response.ConditionTrue(rsp, TypeNamespacesAssigned, ReasonAssigned).TargetCompositeAndClaim()
		return
	}
	response.ConditionFalse(rsp, TypeNamespacesAssigned, ReasonNotAssigned).WithMessage(fmt.Sprintf(
		"namespaces %s are not labelled %s=%s by the platform (or do not exist yet): their pods get no grant to the organization's nodes until the platform labels them",
		fncall.Listed(missing), keys.Organization, spec.Organization)).TargetCompositeAndClaim()
}

// reportUnlistedNamespaces says which namespaces the platform gives the
// organization that no stack lists: the placement conditions speak only of
// the namespaces the stacks list, and these get no grant at all.
func (r *call) reportUnlistedNamespaces() {
	rsp, spec, given, keys := r.Rsp, r.Spec, r.given, r.keys
	unlisted := unlistedNamespaces(r.namespaces, given)
	switch {
	case len(unlisted) == 0:
		response.ConditionTrue(rsp, TypeNamespacesListed, ReasonAllListed).TargetCompositeAndClaim()
		return
	case len(unlisted) == 1 && unlisted[0] == r.claim.Namespace:
		response.ConditionTrue(rsp, TypeNamespacesListed, ReasonClaimNamespaceUnlisted).WithMessage(fmt.Sprintf(
			"every namespace the platform gives organization %s is listed under a stack but %s, where the claim is: it holds the claim, "+
				"and admission refuses every pod in it, in Warn mode too (list it under a stack to run pods there)",
			spec.Organization, unlisted[0])).TargetCompositeAndClaim()
		return
	}
	response.ConditionFalse(rsp, TypeNamespacesListed, ReasonGivenNotListed).WithMessage(fmt.Sprintf(
		"namespaces %s are labelled %s=%s by the platform but no stack lists them: they get no grant to the organization's nodes, so admission refuses every pod in them, in Warn mode too; "+
			"list them under a stack, or the platform removes the label",
		fncall.Listed(unlisted), keys.Organization, spec.Organization)).TargetCompositeAndClaim()
}

// countWarned says in the status, in Warn mode, how many pods Enforce would
// refuse, when and out of how many; while counting is paused, what the last
// count said.
func (r *call) countWarned() {
	st, spec, found, wc, now := &r.status, r.Spec, r.found, r.wc, r.Now
	switch {
	case !spec.Placement.Warned():
	case wc.Paused:
		st.WarnedPods, st.WarnedPodsCountedAt, st.PodsCounted = wc.Last.WarnedPods, wc.Last.WarnedPodsCountedAt, wc.Last.PodsCounted
		st.WarnedPodsUnreadAt = readlimit.Format(wc.Unread)
	default:
		st.WarnedPods = ptr.To(int32(min(len(found.Warned), math.MaxInt32)))
		st.PodsCounted = ptr.To(int32(max(0, min(found.PodsCounted, math.MaxInt32))))
		st.WarnedPodsCountedAt = now.UTC().Format(time.RFC3339)
	}
}

// warnedMessage adds the count to the WarnOnly condition's message.
func (r *call) warnedMessage() string {
	found, wc, now := r.found, r.wc, r.Now
	if !wc.Unread.IsZero() {
		msg := "; " + readlimit.Why("the pods of its namespaces", wc.Unread) + ": nothing counts what Enforce would refuse meanwhile"
		if wc.Last.WarnedPods != nil {
			msg += fmt.Sprintf(" (the last count that fitted, at %s, found %d of %d pods selecting no pool of the organization)",
				wc.Last.WarnedPodsCountedAt, *wc.Last.WarnedPods, ptr.Deref(wc.Last.PodsCounted, 0))
		}
		return msg
	}
	if wc.Paused {
		n := int32(0)
		if wc.Last.WarnedPods != nil {
			n = *wc.Last.WarnedPods
		}
		return fmt.Sprintf("; %d pods in its namespaces selected no pool of the organization when counted at %s, of %d there: above %d pods Warn mode counts once an hour, not at each change of a pod, next at %s",
			n, wc.Last.WarnedPodsCountedAt, ptr.Deref(wc.Last.PodsCounted, 0), warnRecountLimit, wc.Resume.UTC().Format(time.RFC3339))
	}
	var msg string
	if len(found.Warned) == 0 {
		msg = "; every pod in its namespaces selects a pool of the organization: switching to Enforce refuses none of them"
	} else {
		msg = fmt.Sprintf("; %d pods in its namespaces select no pool of the organization, so Enforce would refuse them: %s", len(found.Warned), fncall.Listed(found.Warned))
	}
	if found.PodsCounted > warnRecountLimit {
		msg += fmt.Sprintf(" (its namespaces hold %d pods, more than the %d Warn mode counts at each change: it counts again at %s)",
			found.PodsCounted, warnRecountLimit, now.Add(warnRecountEvery).UTC().Format(time.RFC3339))
	}
	return msg
}

// requeueForCount asks to be called again when a paused count resumes, or
// when the count that just saw too many pods is due again.
func (r *call) requeueForCount() {
	rsp, spec, found, wc, now := r.Rsp, r.Spec, r.found, r.wc, r.Now
	var next time.Duration
	switch {
	case !spec.Placement.Warned():
		return
	case wc.Paused:
		next = wc.Resume.Sub(now)
	case found.PodsCounted > warnRecountLimit:
		next = warnRecountEvery
	default:
		return
	}
	if ttl := rsp.GetMeta().GetTtl(); ttl == nil || next < ttl.AsDuration() {
		rsp.GetMeta().Ttl = durationpb.New(max(next, time.Second))
	}
}

type condition struct {
	Type, Reason, Message string
	OK                    bool
}

// pendingGrants lists the namespaces given to the organization whose Role
// is not there yet: until it is, admission refuses every pod there.
func pendingGrants(served []specNamespace, observed fnstate.Observed) []string {
	var out []string
	for _, ns := range served {
		if !observed.Has(placementRoleResourceName(ns.Name)) {
			out = append(out, ns.Name)
		}
	}
	return out
}

// placementConditions say what admission enforces for the organization:
// True only once the policies and every grant they read are there.
func placementConditions(spec v1alpha1.XKarpenterIsolationSpec, cp *v1alpha1.PlacementPolicyStatus, pending []string, keys placement.Keys) []condition {
	var enforced condition
	switch {
	case cp == nil:
		enforced = condition{Reason: ReasonNoPlacementPolicy, Message: "no XKarpenterCluster composes the admission policy " + placement.PolicyName +
			" in this cluster: nothing keeps other pods off this organization's nodes, nor its pods on its pools"}
	case cp.KeyDomain != keys.Domain:
		enforced = condition{Reason: ReasonKeyDomainMismatch, Message: fmt.Sprintf("the admission policy %s of XKarpenterCluster %q checks keys of domain %s, this organization's nodes are tainted %s: "+
			"set the same keyDomain in both functions' inputs", placement.PolicyName, cp.Cluster, cp.KeyDomain, keys.Organization)}
	case len(pending) > 0:
		enforced = condition{Reason: ReasonGrantsPending, Message: "waiting for Crossplane to compose the Role " + placement.Name + " in namespaces " + fncall.Listed(pending) +
			": until it is there, admission refuses every pod in them"}
	case cp.Mode == v1alpha1.ClusterPlacementAudit:
		enforced = condition{Reason: ReasonClusterAudits, Message: fmt.Sprintf("XKarpenterCluster %q audits (spec.placement.mode Audit): a pod of a namespace neither an organization's nor the platform's "+
			"that could run on this organization's nodes is admitted with a warning, so nothing keeps it off them; this organization's own namespaces are enforced as its spec says. "+
			"The cluster's status.placementAudit names what Enforce would refuse", cp.Cluster)}
	case !placementEnforced(spec):
		enforced = condition{Reason: ReasonEnforcementOff, Message: "spec.placement.enforce is false: pods in the organization's namespaces may run outside its pools; other pods are still kept off its nodes"}
	case spec.Placement.Warned():
		enforced = condition{Reason: ReasonWarnOnly, Message: fmt.Sprintf("spec.placement.mode is Warn: the admission policies of XKarpenterCluster %q admit a pod of the organization's namespaces "+
			"that does not select its pool, with the refusal Enforce would give as a warning and an audit annotation (policy %s); other pods are still kept off its nodes", cp.Cluster, placement.WarnPolicyName)}
	default:
		enforced = condition{OK: true, Reason: ReasonEnforced, Message: fmt.Sprintf("the admission policies of XKarpenterCluster %q hold the organization's pods to its pools and other pods off its nodes", cp.Cluster)}
	}
	enforced.Type = TypePlacementEnforced
	out := make([]condition, 0, 2)
	out = append(out, enforced)
	if !placementInjected(spec) {
		return out
	}
	injected := condition{Type: TypePlacementInjected, Reason: ReasonInjectionUnavailable}
	switch {
	case cp == nil || !enforced.OK && enforced.Reason != ReasonEnforcementOff && enforced.Reason != ReasonWarnOnly && enforced.Reason != ReasonGrantsPending && enforced.Reason != ReasonClusterAudits:
		injected.Message = "spec.placement.inject: " + enforced.Message
	case cp.InjectAPIVersion == "":
		injected.Message = fmt.Sprintf("spec.placement.inject: XKarpenterCluster %q says the apiserver serves no MutatingAdmissionPolicy (its function input sets no mutatingAdmissionPolicy), so nothing is injected: "+
			"pods must carry the nodeSelector and tolerations in status.stacks. Kubernetes 1.36+ serves admissionregistration.k8s.io/v1; 1.34 and 1.35 serve v1beta1 "+
			"with --feature-gates=MutatingAdmissionPolicy=true and --runtime-config=admissionregistration.k8s.io/v1beta1=true", cp.Cluster)
	default:
		injected = condition{Type: TypePlacementInjected, OK: true, Reason: ReasonInjected, Message: "MutatingAdmissionPolicy " + placement.InjectPolicyName + " (" + cp.InjectAPIVersion + ") adds the pools' nodeSelector and tolerations where a pod lacks them"}
	}
	return append(out, injected)
}

// unassignedNamespaces lists the spec's namespaces the platform has not
// given the organization (they may not exist yet): their pods get no grant.
func unassignedNamespaces(namespaces []specNamespace, assigned map[string]bool) []string {
	var out []string
	for _, ns := range namespaces {
		if !assigned[ns.Name] {
			out = append(out, ns.Name)
		}
	}
	return out
}
