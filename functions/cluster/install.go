package main

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	xpv1 "github.com/crossplane/crossplane/apis/v2/core/v2"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	"github.com/crossplane/function-sdk-go/response"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/fnstate"
	"github.com/kiso-dev/kiso/functions/internal/placement"
	"github.com/kiso-dev/kiso/functions/internal/usage"
)

// Which of Karpenter's Releases the cluster composes, in which order, and what it says of them.
//
// With spec.karpenter.install the cluster composes the Release of Karpenter's CRD chart, and Karpenter's own
// Release follows it: rendered from the spec only once provider-helm has deployed the CRD chart at the spec's
// repository and version. Until then Karpenter's Release composed before stays exactly as it was, and none is
// composed on a first install, so Karpenter never starts before its CRDs nor runs a new version on older ones,
// and a reconcile that cannot tell never drops it. Without spec.karpenter.install, Karpenter's Release stays
// while a tenant pool is bound to the cluster (releaseUsers), and the CRD Release goes, orphaned.

// Condition of Karpenter's install.
const (
	TypeKarpenterInstalled = "KarpenterInstalled"
	// ReasonKarpenterInstalled: both Releases are deployed at the spec's chart.
	ReasonKarpenterInstalled = "Installed"
	// ReasonKarpenterCRDsPending: the CRD Release is not deployed at the spec's chart yet; Karpenter's waits.
	ReasonKarpenterCRDsPending = "CRDsPending"
	// ReasonKarpenterChartPending: the CRDs are; Karpenter's Release is not deployed at the spec's chart yet.
	ReasonKarpenterChartPending = "ChartPending"
	// ReasonKarpenterInstallDisabled: spec.karpenter.install is not set.
	ReasonKarpenterInstallDisabled = "Disabled"
)

// helmDeployed is the state of a Helm release whose last install or upgrade succeeded.
const helmDeployed = "deployed"

// karpenterInstall is what the cluster knows of Karpenter's Releases, one concern: it asks whether a Release the
// spec no longer asks for still serves a tenant pool (require), reads the Releases as provider-helm observed them
// (resolve), renders the Releases in their order (render) and says how far the install is (report).
type karpenterInstall struct {
	plan  plan
	users releaseUsers
	// crds and chart say why provider-helm has not deployed the CRD Release and Karpenter's Release at the
	// spec's chart; "" when it has.
	crds, chart string
	// kept is Karpenter's Release as it was rendered before, nil if Crossplane observed none.
	kept *composed.Unstructured
}

// resolve reads whether the Release's users still use it, and Karpenter's Releases as provider-helm observed them;
// the plan is the one the Releases are rendered from.
func (k *karpenterInstall) resolve(r *state) {
	k.users.resolve(r.Req, r.ObservedXR, r.keys.Domain)
	p, observed := r.plan, r.Observed
	k.plan, k.kept = p, keptRelease(observed)
	if install := p.Spec.Karpenter.Install; install != nil {
		k.crds = notDeployed(observed, crKarpenterCRDRelease, karpenterCRDChart, install)
		k.chart = notDeployed(observed, crKarpenterRelease, karpenterChart, install)
	}
}

// keptRelease is Karpenter's Release as it was rendered, if Crossplane observed one.
func keptRelease(observed fnstate.Observed) *composed.Unstructured {
	oc, ok := observed.Get(crKarpenterRelease)
	if !ok || oc.Resource == nil {
		return nil
	}
	return fnstate.AsRendered(oc, []string{meta.AnnotationKeyExternalName})
}

// notDeployed says why provider-helm has not deployed the Release observed under name at spec.karpenter.install's
// chart, "" when it has: the Release names that chart, provider-helm has reconciled its current generation
// without error, and Helm's release is deployed. Not its Ready condition: after an upgrade provider-helm says
// Ready only at its next poll of the Release (ten minutes by default).
func notDeployed(observed fnstate.Observed, name resource.Name, chart string, install *v1alpha1.ChartInstall) string {
	oc, ok := observed.Get(name)
	if !ok || oc.Resource == nil {
		return "not created yet"
	}
	u := &oc.Resource.Unstructured
	if u.GetDeletionTimestamp() != nil {
		return "being deleted"
	}
	field := func(path ...string) string {
		v, _, _ := unstructured.NestedString(u.Object, path...)
		return v
	}
	repository, version := field("spec", "forProvider", "chart", "repository"), field("spec", "forProvider", "chart", "version")
	if field("spec", "forProvider", "chart", "name") != chart || repository != install.Repository || version != install.Version {
		return fmt.Sprintf("still at %s from %s", version, repository)
	}
	synced, generation := condition(u, string(xpv1.TypeSynced))
	switch {
	case synced == nil || generation != 0 && generation < generationOf(u):
		return "provider-helm has not reconciled its latest change yet"
	case synced["status"] != string(corev1.ConditionTrue):
		return fmt.Sprintf("%v", synced["message"])
	}
	if state := field("status", "atProvider", "state"); state != helmDeployed {
		return "Helm release " + state
	}
	return ""
}

// generationOf reads an observed object's metadata.generation, which Crossplane's request holds as a number
// GetGeneration does not read (a float64).
func generationOf(u *unstructured.Unstructured) int64 {
	v, _, _ := unstructured.NestedFieldNoCopy(u.Object, "metadata", "generation")
	return wholeNumber(v)
}

// wholeNumber reads a number of an observed object: a float64 as Crossplane's request holds it, an int64 as Go
// code builds it; anything else is 0.
func wholeNumber(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	}
	return 0
}

// render composes Karpenter's Releases.
func (k *karpenterInstall) render(r *state) error {
	releases, err := k.releases()
	if err != nil {
		return err
	}
	for name, cd := range releases {
		r.objects[name] = cd
	}
	return nil
}

// releases returns the Releases the cluster composes, by composed resource name.
func (k *karpenterInstall) releases() (map[resource.Name]*composed.Unstructured, error) {
	out := map[resource.Name]*composed.Unstructured{}
	if k.plan.Spec.Karpenter.Install == nil {
		if k.users.inUse && k.kept != nil {
			out[crKarpenterRelease] = k.kept
		}
		return out, nil
	}
	out[crKarpenterCRDRelease] = renderCRDRelease(k.plan)
	chart, err := renderKarpenterRelease(k.plan)
	if err != nil {
		return nil, err
	}
	if k.crds != "" {
		chart = k.kept
	}
	if chart != nil {
		out[crKarpenterRelease] = chart
	}
	return out, nil
}

// require asks for what tells whether Karpenter's Release still serves a tenant pool, where it is read.
func (k *karpenterInstall) require(r *state) {
	*k = karpenterInstall{users: releaseUsers{read: readsReleaseUsers(r.Spec, r.Observed)}}
	k.users.require(r.required)
}

// report says how far Karpenter's install is.
func (k *karpenterInstall) report(r *state) {
	rsp := r.Rsp
	install := k.plan.Spec.Karpenter.Install
	if install == nil {
		msg := "spec.karpenter.install is not set: kiso installs neither Karpenter nor its CRDs"
		if k.users.inUse && k.kept != nil {
			msg += fmt.Sprintf("; Release %s keeps Karpenter while a tenant pool is bound to the cluster", k.kept.GetName())
		}
		response.ConditionTrue(rsp, TypeKarpenterInstalled, ReasonKarpenterInstallDisabled).WithMessage(msg).TargetComposite()
		return
	}
	crds := fmt.Sprintf("Release %s (%s %s)", k.plan.crdReleaseName(), karpenterCRDChart, install.Version)
	chart := fmt.Sprintf("Release %s (%s %s)", k.plan.releaseName(), karpenterChart, install.Version)
	switch {
	case k.crds != "":
		msg := fmt.Sprintf("Karpenter's CRDs are not deployed yet: %s: %s. %s waits for them", crds, k.crds, chart)
		if k.kept != nil {
			msg += fmt.Sprintf(", and its earlier version stays as it is meanwhile (chart %s)", keptVersion(k.kept))
		}
		response.ConditionFalse(rsp, TypeKarpenterInstalled, ReasonKarpenterCRDsPending).WithMessage(msg).TargetComposite()
	case k.chart != "":
		response.ConditionFalse(rsp, TypeKarpenterInstalled, ReasonKarpenterChartPending).
			WithMessage(fmt.Sprintf("%s is deployed; %s is not yet: %s", crds, chart, k.chart)).TargetComposite()
	default:
		response.ConditionTrue(rsp, TypeKarpenterInstalled, ReasonKarpenterInstalled).
			WithMessage(fmt.Sprintf("%s and %s are deployed", crds, chart)).TargetComposite()
	}
}

// keptVersion is the chart version of a kept Release.
func keptVersion(r *composed.Unstructured) string {
	v, _, _ := unstructured.NestedString(r.Object, "spec", "forProvider", "chart", "version")
	return v
}

// Required resources that say whether a Release the spec no longer asks for still serves tenant pools.
const (
	requireReleaseNodePools   = "release-users-nodepools"
	requireReleaseNodeClasses = "release-users-ec2nodeclasses"
)

// releaseUsers says whether Karpenter's Release, composed before and no longer asked for, still serves a tenant
// pool bound to the cluster (a NodePool, or an EC2NodeClass whose nodes Karpenter still drains), and asks for
// what tells. Only then is anything read: the reads grow with the fleet. An XR Crossplane labels in use is in
// use too (releases before this one composed a Usage of it per pool).
type releaseUsers struct {
	read  bool
	inUse bool
}

// readsReleaseUsers reports whether the Release's users are read: Karpenter's Release was composed before and
// spec.karpenter.install is not set.
func readsReleaseUsers(spec v1alpha1.XKarpenterClusterSpec, observed fnstate.Observed) bool {
	return spec.Karpenter.Install == nil && observed.Has(crKarpenterRelease)
}

// resolve reads whether the Release's users still use it, if they are read.
func (u *releaseUsers) resolve(req *fnv1.RunFunctionRequest, xr *resource.Composite, domain string) {
	if !u.read {
		return
	}
	u.inUse = usage.InUse(&xr.Resource.Unstructured)
	annotation := placement.NewRolloutAnnotations(domain).Cluster
	for _, key := range []string{requireReleaseNodePools, requireReleaseNodeClasses} {
		pools, resolved := fnstate.Required(req, key)
		// Until Crossplane answers, the Release stays.
		u.inUse = u.inUse || !resolved || slices.ContainsFunc(pools, func(r resource.Required) bool {
			return r.Resource.GetAnnotations()[annotation] == xr.Resource.GetName()
		})
	}
}

// require asks for the tenant pools, if the Release's users are read.
func (u releaseUsers) require(rs map[string]*fnv1.ResourceSelector) {
	if !u.read {
		return
	}
	kiso := &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: map[string]string{placement.ManagedByLabel: placement.ManagedByValue}}}
	rs[requireReleaseNodePools] = &fnv1.ResourceSelector{ApiVersion: nodePoolParam.APIVersion, Kind: nodePoolParam.Kind, Match: kiso}
	rs[requireReleaseNodeClasses] = &fnv1.ResourceSelector{ApiVersion: ec2NodeClassParam.APIVersion, Kind: ec2NodeClassParam.Kind, Match: kiso}
}
