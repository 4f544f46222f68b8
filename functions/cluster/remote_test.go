package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/clusterview"
	"github.com/kiso-dev/kiso/functions/internal/fntest"
	"github.com/kiso-dev/kiso/functions/internal/remote"
	"github.com/kiso-dev/kiso/functions/internal/usage"
)

const workloadClusterSpec = `{"clusterName":"prod","region":"eu-west-3","accountId":"111122223333","providerConfigName":"aws-prod",
	"workloadCluster":{"providerConfigName":"prod-workloads"},"karpenter":{"install":{}}}`

// TestWorkloadClusterComposesThroughObjects: with spec.workloadCluster, nothing of Kubernetes' own kinds is
// composed into the cluster that runs Crossplane: the admission policies and the PrometheusRule are Objects of
// the workload cluster's ProviderConfig, Karpenter's Releases use provider-helm's of the same name, and the AWS
// managed resources keep the AWS ProviderConfig.
func TestWorkloadClusterComposesThroughObjects(t *testing.T) {
	// The alerts wait for the workload cluster to say it holds PrometheusRules: answer its read.
	first := run(t, newRequest(t, xr(workloadClusterSpec), nil))
	read, ok := first.GetDesired().GetResources()["read:"+requirePrometheusRuleCRD]
	if !ok {
		t.Fatal("no read of the workload cluster's PrometheusRule CRD")
	}
	answered := fntest.AsMap(t, read.GetResource())
	answered["status"] = map[string]any{
		"atProvider": map[string]any{"manifest": fntest.JSONMap(t, prometheusOperatorCRD)},
		"conditions": []any{map[string]any{"type": "Ready", "status": "True"}, map[string]any{"type": "Synced", "status": "True"}},
	}
	observed := deployedCRDs(t, xr(workloadClusterSpec))
	observed["read:"+requirePrometheusRuleCRD] = fntest.ToJSON(t, answered)
	rsp := run(t, newRequest(t, xr(workloadClusterSpec), observed))
	kinds := map[string]int{}
	wrapped := map[string]bool{}
	for name, r := range rsp.GetDesired().GetResources() {
		o := fntest.AsMap(t, r.GetResource())
		apiVersion, kind := o["apiVersion"].(string), o["kind"].(string)
		kinds[kind]++
		group, _, _ := strings.Cut(apiVersion, "/")
		if !strings.Contains(apiVersion, "/") {
			group = ""
		}
		switch {
		case kind == remote.ObjectKind:
			if pc := fntest.Dig(o, "spec", "providerConfigRef", "name"); pc != "prod-workloads" {
				t.Errorf("%s: Object's providerConfigRef %v, want prod-workloads", name, pc)
			}
			wrapped[fntest.Dig(o, "spec", "forProvider", "manifest", "kind").(string)] = true
		case kind == releaseKind:
			if pc := fntest.Dig(o, "spec", "providerConfigRef", "name"); pc != "prod-workloads" {
				t.Errorf("Release's providerConfigRef %v, want prod-workloads", pc)
			}
		case strings.HasSuffix(group, ".aws.upbound.io"):
			if pc := fntest.Dig(o, "spec", "providerConfigRef", "name"); pc != "aws-prod" {
				t.Errorf("%s: managed resource's providerConfigRef %v, want aws-prod", name, pc)
			}
		case group == usage.Group:
		case resource.Name(name) == crClusterGuardPolicy || resource.Name(name) == crClusterGuardBinding:
			// The cluster's deletion policies keep it and its organizations' identities, here.
		case kind == clusterview.GVK.Kind:
			// The organizations' XRs read it where they and Crossplane run.
		default:
			t.Errorf("%s: %s %s composed into the management cluster", name, apiVersion, kind)
		}
	}
	for _, kind := range []string{"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "PrometheusRule"} {
		if !wrapped[kind] {
			t.Errorf("no %s composed into the workload cluster; wrapped kinds %v", kind, wrapped)
		}
	}
	if kinds[clusterview.GVK.Kind] != 1 {
		t.Errorf("%d views for the organizations, want 1", kinds[clusterview.GVK.Kind])
	}
	if kinds[releaseKind] != 2 {
		t.Errorf("%d Releases, want 2: Karpenter's CRDs and Karpenter", kinds[releaseKind])
	}
	st := fntest.AsMap(t, rsp.GetDesired().GetComposite().GetResource())["status"].(map[string]any)
	if st["karpenterReleaseResource"] != "prod-karpenter-release" {
		t.Errorf("status.karpenterReleaseResource %v, want prod-karpenter-release", st["karpenterReleaseResource"])
	}
}

// TestKarpenterInstallIsOptIn: without spec.karpenter.install nothing installs Karpenter; with it and no
// workload cluster, the Release goes to the cluster that runs Crossplane through provider-helm's default
// ProviderConfig, with the chart and repository defaults.
func TestKarpenterInstallIsOptIn(t *testing.T) {
	rsp := run(t, newRequest(t, xr(`{"clusterName":"prod","region":"eu-west-3","accountId":"111122223333"}`), nil))
	if _, ok := rsp.GetDesired().GetResources()[string(crKarpenterRelease)]; ok {
		t.Error("a Release composed without spec.karpenter.install")
	}
	if st := fntest.AsMap(t, rsp.GetDesired().GetComposite().GetResource())["status"].(map[string]any); st["karpenterReleaseResource"] != nil {
		t.Errorf("status.karpenterReleaseResource %v without an install", st["karpenterReleaseResource"])
	}

	installed := xr(`{"clusterName":"prod","region":"eu-west-3","accountId":"111122223333","karpenter":{"install":{}}}`)
	rsp = run(t, newRequest(t, installed, deployedCRDs(t, installed)))
	r, ok := rsp.GetDesired().GetResources()[string(crKarpenterRelease)]
	if !ok {
		t.Fatal("no Release composed with spec.karpenter.install")
	}
	o := fntest.AsMap(t, r.GetResource())
	for path, want := range map[string]string{
		"spec.providerConfigRef.name":                        localProviderConfig,
		"spec.forProvider.chart.name":                        "karpenter",
		"spec.forProvider.chart.repository":                  "oci://public.ecr.aws/karpenter",
		"spec.forProvider.chart.version":                     "1.15.0",
		"spec.forProvider.namespace":                         "kube-system",
		"spec.forProvider.values.settings.clusterName":       "prod",
		"spec.forProvider.values.settings.interruptionQueue": "kiso-prod-karpenter-interruption",
		"metadata.annotations.crossplane\\.io/external-name": "karpenter",
	} {
		if got := fntest.Dig(o, splitPath(path)...); got != want {
			t.Errorf("%s = %v, want %q", path, got, want)
		}
	}
	if got := fntest.Dig(o, "spec", "forProvider", "values", "serviceAccount", "annotations"); got != nil {
		t.Errorf("Pod Identity needs no service account annotation, got %v", got)
	}
}

// TestReleaseStaysWhileTheClusterIsInUse: organizations' pools use the XKarpenterCluster, not its Release, so a
// cluster whose spec stops installing Karpenter keeps the Release, exactly as it was rendered and still kept by
// its Usage, while Crossplane labels the cluster in use or a tenant pool is bound to it; once nothing uses the
// cluster, the Release goes.
func TestReleaseStaysWhileTheClusterIsInUse(t *testing.T) {
	install := xr(`{"clusterName":"prod","region":"eu-west-3","accountId":"111122223333","karpenter":{"install":{}}}`)
	installed := run(t, newRequest(t, install, deployedCRDs(t, install)))
	rendered, ok := installed.GetDesired().GetResources()[string(crKarpenterRelease)]
	if !ok {
		t.Fatal("no Release composed with spec.karpenter.install")
	}
	observedRelease := fntest.AsMap(t, rendered.GetResource())
	fntest.Dig(observedRelease, "metadata").(map[string]any)["labels"].(map[string]any)["crossplane.io/composite"] = "prod"
	fntest.Dig(observedRelease, "metadata").(map[string]any)["annotations"].(map[string]any)["crossplane.io/composition-resource-name"] = string(crKarpenterRelease)
	b, err := json.Marshal(observedRelease)
	if err != nil {
		t.Fatal(err)
	}
	observed := map[string]string{string(crKarpenterRelease): string(b)}
	notInstalled := `{"clusterName":"prod","region":"eu-west-3","accountId":"111122223333"}`
	inUse := `{"apiVersion":"kiso.dev/v1alpha1","kind":"XKarpenterCluster","metadata":{"name":"prod","labels":{"crossplane.io/in-use":"true"}},"spec":` + notInstalled + `}`

	rsp := run(t, newRequest(t, inUse, observed))
	fntest.AssertNoFatal(t, rsp)
	got := fntest.Desired(t, rsp)
	if diff := cmp.Diff(fntest.AsMap(t, rendered.GetResource()), got[string(crKarpenterRelease)]); diff != "" {
		t.Errorf("Release of a cluster in use that no longer installs Karpenter: -as rendered, +kept:\n%s", diff)
	}
	if u := got["usage-"+string(crKarpenterRelease)]; fntest.Dig(u, "spec", "of", "kind") != releaseKind {
		t.Errorf("the kept Release has no Usage keeping it with the cluster: %v", u)
	}
	if st := fntest.AsMap(t, rsp.GetDesired().GetComposite().GetResource())["status"].(map[string]any); st["karpenterReleaseResource"] != nil {
		t.Errorf("status.karpenterReleaseResource %v: the kept Release is no install", st["karpenterReleaseResource"])
	}

	// Releases from this one on compose no Usage per pool: the cluster reads its tenant pools, and keeps the
	// Release while a NodePool is bound to it, or an EC2NodeClass whose nodes Karpenter still drains.
	bound := func(kind, apiVersion, cluster string) string {
		return `{"apiVersion":"` + apiVersion + `","kind":"` + kind + `","metadata":{"name":"kiso-acme","labels":{"app.kubernetes.io/managed-by":"kiso"},` +
			`"annotations":{"kiso.dev/cluster":"` + cluster + `"}}}`
	}
	for _, c := range []fntest.Cluster{{bound("NodePool", "karpenter.sh/v1", "prod")}, {bound("EC2NodeClass", "karpenter.k8s.aws/v1", "prod")}} {
		rsp = fntest.Run(t, &Function{log: logging.NewNopLogger()}, newRequest(t, xr(notInstalled), observed), withPrometheusOperator(c))
		fntest.AssertNoFatal(t, rsp)
		if _, ok := rsp.GetDesired().GetResources()[string(crKarpenterRelease)]; !ok {
			t.Errorf("Release not kept while %s is bound to the cluster", c[0])
		}
	}
	elsewhere := fntest.Cluster{bound("NodePool", "karpenter.sh/v1", "staging"), bound("EC2NodeClass", "karpenter.k8s.aws/v1", "staging")}
	rsp = fntest.Run(t, &Function{log: logging.NewNopLogger()}, newRequest(t, xr(notInstalled), observed), withPrometheusOperator(elsewhere))
	fntest.AssertNoFatal(t, rsp)
	for _, name := range []string{string(crKarpenterRelease), "usage-" + string(crKarpenterRelease)} {
		if _, ok := rsp.GetDesired().GetResources()[name]; ok {
			t.Errorf("%s composed for a cluster nothing uses that no longer installs Karpenter", name)
		}
	}
}

// splitPath splits a dotted path, where "\." is a dot inside a key.
func splitPath(path string) []string {
	parts := strings.Split(strings.ReplaceAll(path, `\.`, "\x00"), ".")
	for i, p := range parts {
		parts[i] = strings.ReplaceAll(p, "\x00", ".")
	}
	return parts
}

// TestWorkloadClusterReadsItsOwnAPI: whether the workload cluster serves MutatingAdmissionPolicy is read there
// (an observe-only Object of its APIService), not from the cluster that runs Crossplane; once the read says it
// does, the injecting policy is composed there.
func TestWorkloadClusterReadsItsOwnAPI(t *testing.T) {
	rsp := run(t, newRequest(t, xr(workloadClusterSpec), nil))
	if sel, ok := rsp.GetRequirements().GetResources()[requireAdmissionAPI]; ok {
		t.Errorf("the APIService is asked of the management cluster: %v", sel)
	}
	read, ok := rsp.GetDesired().GetResources()["read:"+requireAdmissionAPI]
	if !ok {
		t.Fatalf("no read of the workload cluster's APIService; desired %d resources", len(rsp.GetDesired().GetResources()))
	}
	o := fntest.AsMap(t, read.GetResource())
	if fntest.Dig(o, "spec", "forProvider", "manifest", "kind") != "APIService" || fntest.Dig(o, "spec", "providerConfigRef", "name") != "prod-workloads" {
		t.Errorf("read %v", o)
	}
	if injectsThere(t, rsp) != "" {
		t.Error("the injecting policy is composed before the workload cluster said it serves its API")
	}

	o["status"] = map[string]any{
		"atProvider": map[string]any{"manifest": map[string]any{"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": map[string]any{"name": "v1beta1.admissionregistration.k8s.io"}}},
		"conditions": []any{map[string]any{"type": "Ready", "status": "True"}, map[string]any{"type": "Synced", "status": "True"}},
	}
	rsp = run(t, newRequest(t, xr(workloadClusterSpec), map[string]string{
		"read:" + requireAdmissionAPI: fntest.ToJSON(t, o),
		"read:" + requireInjectV1:     fntest.ToJSON(t, readRefused(t, rsp, requireInjectV1, `cannot get object: no matches for kind "MutatingAdmissionPolicy" in version "admissionregistration.k8s.io/v1"`)),
	}))
	if got := injectsThere(t, rsp); got != "admissionregistration.k8s.io/v1beta1" {
		t.Fatalf("injecting policy composed into the workload cluster at %q once it said it serves MutatingAdmissionPolicy at v1beta1 only, want v1beta1", got)
	}

	// The workload cluster stops answering: the injecting policy composed before is kept, not dropped.
	observed := map[string]string{}
	for name, r := range rsp.GetDesired().GetResources() {
		observed[name] = fntest.ToJSON(t, fntest.AsMap(t, r.GetResource()))
	}
	delete(o, "status")
	observed["read:"+requireAdmissionAPI] = fntest.ToJSON(t, o)
	delete(observed, "read:"+requireInjectV1)
	if rsp = run(t, newRequest(t, xr(workloadClusterSpec), observed)); injectsThere(t, rsp) != "admissionregistration.k8s.io/v1beta1" {
		t.Error("the injecting policy was dropped or moved while the workload cluster did not answer whether it serves its API")
	}
}

// TestWorkloadClusterServingV1GetsTheInjectingPolicyAtV1: a workload cluster on Kubernetes v1.36 or later serves
// MutatingAdmissionPolicy at v1 with no flag, and no v1beta1: its read of the injecting policy at v1 is answered
// (the policy does not exist yet), so the policy is composed there at v1.
func TestWorkloadClusterServingV1GetsTheInjectingPolicyAtV1(t *testing.T) {
	rsp := run(t, newRequest(t, xr(workloadClusterSpec), nil))
	notThere := func(key string) string {
		return fntest.ToJSON(t, readRefused(t, rsp, key, "observe-only: external resource does not exist"))
	}
	rsp = run(t, newRequest(t, xr(workloadClusterSpec), map[string]string{
		"read:" + requireAdmissionAPI: notThere(requireAdmissionAPI),
		"read:" + requireInjectV1:     notThere(requireInjectV1),
	}))
	if got := injectsThere(t, rsp); got != "admissionregistration.k8s.io/v1" {
		t.Fatalf("injecting policy composed into a workload cluster that serves MutatingAdmissionPolicy at v1 at %q, want v1", got)
	}
}

// injectsThere is the API version at which a response composes the injecting policy into the workload cluster,
// "" if it does not; reads of the workload cluster are not composed objects.
func injectsThere(t *testing.T, rsp *fnv1.RunFunctionResponse) string {
	t.Helper()
	for name, r := range rsp.GetDesired().GetResources() {
		if strings.HasPrefix(name, "read:") {
			continue
		}
		o := fntest.AsMap(t, r.GetResource())
		if fntest.Dig(o, "spec", "forProvider", "manifest", "kind") == "MutatingAdmissionPolicy" {
			v, _ := fntest.Dig(o, "spec", "forProvider", "manifest", "apiVersion").(string)
			return v
		}
	}
	return ""
}

// readRefused is a response's read of a requirement as the provider reports it when the workload cluster refuses
// it with message.
func readRefused(t *testing.T, rsp *fnv1.RunFunctionResponse, key, message string) map[string]any {
	t.Helper()
	read := fntest.AsMap(t, rsp.GetDesired().GetResources()["read:"+key].GetResource())
	read["status"] = map[string]any{"conditions": []any{
		map[string]any{"type": "Ready", "status": "False"},
		map[string]any{"type": "Synced", "status": "False", "reason": "ReconcileError", "message": message},
	}}
	return read
}

// TestWorkloadClusterRolloutReadsThere: a rollout's reads of kiso's NodePools and, while a wave is open,
// Karpenter's NodeClaims go to the workload cluster, as ObservedObjectCollections with the same selectors, and
// Crossplane is asked only for their members in the management cluster.
func TestWorkloadClusterRolloutReadsThere(t *testing.T) {
	spec := strings.Replace(workloadClusterSpec, `"karpenter":{"install":{}}`, `"karpenter":{"install":{}},"rollout":{"waves":[{"percent":50}]}`, 1)
	rsp := run(t, newRequest(t, xr(spec), nil))
	assertReadThere(t, rsp.GetRequirements().GetResources(), rsp.GetDesired().GetResources(), requirePools)
	if _, ok := rsp.GetDesired().GetResources()["read:"+requireNodeClaims]; ok {
		t.Error("the NodeClaims are read in the workload cluster while no wave is open")
	}

	// A wave is open: the NodeClaims are read there too.
	var s v1alpha1.XKarpenterClusterSpec
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		t.Fatal(err)
	}
	rs := map[string]*fnv1.ResourceSelector{}
	requireRollout(rs, s)
	requireJudgedNodeClaims(rs, rolloutResult{JudgesNodes: true}, rolloutView{})
	reads := workloadReader(s, "prod").Requirements(rs)
	desired := map[string]*fnv1.Resource{}
	for name, read := range reads {
		st, err := structpb.NewStruct(read.Object)
		if err != nil {
			t.Fatal(err)
		}
		desired[string(name)] = &fnv1.Resource{Resource: st}
	}
	assertReadThere(t, rs, desired, requireNodeClaims)
}

// assertReadThere checks that a requirement is read in the workload cluster as an ObservedObjectCollection, and
// only its members asked of the management cluster.
func assertReadThere(t *testing.T, rs map[string]*fnv1.ResourceSelector, desired map[string]*fnv1.Resource, key string) {
	t.Helper()
	if sel, ok := rs[key]; ok {
		t.Errorf("%s is asked of the management cluster: %v", key, sel)
	}
	members, ok := rs["read-members:"+key]
	if !ok || members.GetKind() != remote.ObjectKind {
		t.Errorf("no requirement for the members of the collection of %s: %v", key, members)
	}
	read, ok := desired["read:"+key]
	if !ok {
		t.Errorf("no read of %s in the workload cluster", key)
		return
	}
	o := fntest.AsMap(t, read.GetResource())
	if o["kind"] != "ObservedObjectCollection" || fntest.Dig(o, "spec", "providerConfigRef", "name") != "prod-workloads" {
		t.Errorf("read of %s: %v", key, o)
	}
}

// TestARolloutThereKeepsItsReadsCurrent: the provider lists a collection only at its poll (10 minutes by
// default), so while a rollout is in progress in a workload cluster, its pools and NodeClaims are read again every
// remote.RereadEvery and the cluster asks to be called again within it; once the rollout is done they wait for
// the poll again and the TTL is the settled one.
func TestARolloutThereKeepsItsReadsCurrent(t *testing.T) {
	spec := strings.Replace(workloadClusterSpec, `"karpenter":{"install":{}}`, `"karpenter":{"install":{}},"rollout":{"waves":[{"percent":50}]}`, 1)
	// composedReads is what Crossplane observes once both collections are composed, before the provider said
	// anything of them.
	composedReads := map[string]string{}
	for _, key := range []string{requirePools, requireNodeClaims} {
		composedReads[string(remote.ReadOf(key))] = `{"apiVersion":"kubernetes.crossplane.io/v1alpha1","kind":"ObservedObjectCollection","metadata":{"name":"kiso-read-` + key + `"}}`
	}
	// rendered runs the phases up to settle as RunFunction does, the rollout in progress or not and its
	// collections composed or not, and reports.
	rendered := func(inProgress, composed bool) *call {
		t.Helper()
		var observed map[string]string
		if composed {
			observed = composedReads
		}
		r, ok := begin(newRequest(t, xr(spec), observed), logging.NewNopLogger())
		if !ok || !r.validate() {
			t.Fatal("the spec is refused")
		}
		r.require()
		if !r.resolve() || !r.render() {
			t.Fatal("the cluster does not render")
		}
		r.rollouts.staged.InProgress, r.rollouts.staged.JudgesNodes = inProgress, inProgress
		requireJudgedNodeClaims(r.required, r.rollouts.staged, rolloutView{})
		if !r.settle() {
			t.Fatal("the cluster does not settle")
		}
		r.report()
		return r
	}
	current := func(r *call) map[string]bool {
		out := map[string]bool{}
		for name, read := range r.ownership.reads {
			if _, found, _ := unstructured.NestedMap(read.Object, "spec", "objectTemplate", "metadata", "annotations"); found {
				out[string(name)] = true
			}
		}
		return out
	}

	open := rendered(true, true)
	if got, want := current(open), map[string]bool{"read:" + requirePools: true, "read:" + requireNodeClaims: true}; !cmp.Equal(got, want) {
		t.Errorf("reads kept current while a wave is open: %v, want %v", got, want)
	}
	if ttl := open.Rsp.GetMeta().GetTtl().AsDuration(); ttl > remote.RereadEvery+time.Second {
		t.Errorf("TTL %s while a rollout's collections are read every %s: the next read would wait for the call after", ttl, remote.RereadEvery)
	}

	// Not composed yet: the provider lists a new collection as it is created (and a render is the same at
	// any time).
	if got := current(rendered(true, false)); len(got) != 0 {
		t.Errorf("reads kept current before they were composed: %v, want none", got)
	}

	done := rendered(false, true)
	if _, read := done.ownership.reads["read:"+requirePools]; !read {
		t.Fatal("the pools are not read with no rollout in progress")
	}
	if got := current(done); len(got) != 0 {
		t.Errorf("reads kept current with no rollout in progress: %v, want none", got)
	}
	if ttl := done.Rsp.GetMeta().GetTtl().AsDuration(); ttl <= remote.RereadEvery+time.Second {
		t.Errorf("TTL %s with no rollout in progress: the cluster would be called as often as while one is", ttl)
	}
}
