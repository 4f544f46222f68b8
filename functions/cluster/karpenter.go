package main

import (
	"encoding/json"
	"slices"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/fnstate"
	"github.com/kiso-dev/kiso/functions/internal/keep"
	"github.com/kiso-dev/kiso/functions/internal/ownership"
	"github.com/kiso-dev/kiso/functions/internal/remote"
	"github.com/kiso-dev/kiso/functions/internal/rollout"
	"github.com/kiso-dev/kiso/functions/internal/usage"
)

// provider-helm's cluster-scoped Release, and Karpenter's chart in it.
const (
	releaseAPIVersion = "helm.crossplane.io/v1beta1"
	releaseKind       = "Release"
	karpenterChart    = "karpenter"
	// karpenterRelease is the Helm release's name (the Release's external name): the chart names its
	// Deployment, RBAC and default service account after it, as `helm install karpenter` does in AWS's guide.
	karpenterRelease = "karpenter"
	// localProviderConfig is provider-helm's ProviderConfig for the cluster that runs Crossplane, by the
	// provider's convention (an InjectedIdentity config named default).
	localProviderConfig = "default"
)

// crKarpenterRelease is the composed resource name of Karpenter's Release.
const crKarpenterRelease = resource.Name("karpenter-release")

// releaseName is the Kubernetes name of the cluster's Karpenter Release.
func (p plan) releaseName() string { return p.objectName("release") }

// chartValues are the values kiso knows for Karpenter's chart: the cluster's name and interruption queue, the
// service account Karpenter's identity is bound to and, with IRSA, its role annotation. Everything else keeps
// the chart's defaults, which already keep the controller off the nodes Karpenter manages (a required
// karpenter.sh/nodepool DoesNotExist affinity), spread it over zones and run two replicas.
func chartValues(p plan) map[string]any {
	settings := map[string]any{"clusterName": p.Cluster}
	if p.QueueName != "" {
		settings["interruptionQueue"] = p.QueueName
	}
	serviceAccount := map[string]any{"name": p.Spec.Karpenter.ServiceAccount}
	if !p.PodIdentity {
		serviceAccount["annotations"] = map[string]any{irsaRoleAnnotation: p.ControllerRoleARN}
	}
	return map[string]any{"settings": settings, "serviceAccount": serviceAccount}
}

// mergeValues merges over into base as Helm merges a values file over the chart's: maps key by key, anything
// else replaced, over winning. base is changed and returned.
func mergeValues(base, over map[string]any) map[string]any {
	for k, v := range over {
		bm, bok := base[k].(map[string]any)
		om, ook := v.(map[string]any)
		if bok && ook {
			base[k] = mergeValues(bm, om)
			continue
		}
		base[k] = v
	}
	return base
}

// keptRelease is Karpenter's Release as it was rendered, if Crossplane observed one: a cluster whose spec stops
// installing Karpenter keeps it while the cluster is in use. Organizations' pools use the XKarpenterCluster,
// not its Release, and the nodes they still drain need Karpenter until they are gone.
func keptRelease(observed fnstate.Observed) *composed.Unstructured {
	oc, ok := observed.Get(crKarpenterRelease)
	if !ok || oc.Resource == nil {
		return nil
	}
	return keep.AsRendered(oc, []string{meta.AnnotationKeyExternalName})
}

// renderKarpenterRelease renders the Release that installs Karpenter's chart, or nil without
// spec.karpenter.install.
func renderKarpenterRelease(p plan) (*composed.Unstructured, error) {
	install := p.Spec.Karpenter.Install
	if install == nil {
		return nil, nil
	}
	values := chartValues(p)
	if install.Values != nil && len(install.Values.Raw) > 0 {
		var given map[string]any
		if err := json.Unmarshal(install.Values.Raw, &given); err != nil {
			return nil, errors.Wrap(err, "spec.karpenter.install.values: cannot read the values")
		}
		values = mergeValues(values, given)
	}
	providerConfig := localProviderConfig
	if pc, remote := p.Spec.Remote(); remote {
		providerConfig = pc
	}
	r := composed.New()
	r.Object = map[string]any{
		"apiVersion": releaseAPIVersion,
		"kind":       releaseKind,
		"metadata":   map[string]any{"name": p.releaseName()},
		"spec": map[string]any{
			"providerConfigRef": map[string]any{"name": providerConfig},
			"forProvider": map[string]any{
				"chart": map[string]any{
					"name":       karpenterChart,
					"repository": install.Repository,
					"version":    install.Version,
				},
				"namespace": p.Spec.Karpenter.Namespace,
				"values":    values,
			},
		},
	}
	r.SetLabels(map[string]string{ownership.ManagedByLabel: ownership.ManagedByValue})
	r.SetAnnotations(map[string]string{meta.AnnotationKeyExternalName: karpenterRelease})
	return r, nil
}

// workloadReader reads the workload cluster for the cluster's own requirements (the admission API it serves, and
// for a rollout its pools, NodeClaims and references); nil when Karpenter runs beside Crossplane.
func workloadReader(spec v1alpha1.XKarpenterClusterSpec, xrName string) *remote.Reader {
	providerConfig, ok := spec.Remote()
	if !ok {
		return nil
	}
	guard := clusterGuardName(xrName)
	return &remote.Reader{ProviderConfig: providerConfig, Owner: v1alpha1.ClusterKind + "/" + xrName,
		// The cluster's deletion policies stay where what they keep is.
		Local: func(gvk schema.GroupVersionKind, _, name string) bool {
			return gvk.Group == admissionv1.GroupName && name == guard
		}}
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

func newReleaseUsers(req *fnv1.RunFunctionRequest, spec v1alpha1.XKarpenterClusterSpec, xr *resource.Composite, observed fnstate.Observed, domain string) releaseUsers {
	if spec.Karpenter.Install != nil || !observed.Has(crKarpenterRelease) {
		return releaseUsers{}
	}
	u := releaseUsers{read: true, inUse: usage.InUse(&xr.Resource.Unstructured)}
	annotation := rollout.NewAnnotations(domain).Cluster
	for _, key := range []string{requireReleaseNodePools, requireReleaseNodeClasses} {
		pools, resolved := fnstate.Required(req, key)
		// Until Crossplane answers, the Release stays.
		u.inUse = u.inUse || !resolved || slices.ContainsFunc(pools, func(r resource.Required) bool {
			return r.Resource.GetAnnotations()[annotation] == xr.Resource.GetName()
		})
	}
	return u
}

// require asks for the tenant pools, if the Release's users are read.
func (u releaseUsers) require(rs map[string]*fnv1.ResourceSelector) {
	if !u.read {
		return
	}
	kiso := &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: map[string]string{ownership.ManagedByLabel: ownership.ManagedByValue}}}
	rs[requireReleaseNodePools] = &fnv1.ResourceSelector{ApiVersion: nodePoolParam.APIVersion, Kind: nodePoolParam.Kind, Match: kiso}
	rs[requireReleaseNodeClasses] = &fnv1.ResourceSelector{ApiVersion: ec2NodeClassParam.APIVersion, Kind: ec2NodeClassParam.Kind, Match: kiso}
}
