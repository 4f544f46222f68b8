package main

import (
	"encoding/json"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/placement"
	"github.com/kiso-dev/kiso/functions/internal/remote"
)

// provider-helm's cluster-scoped Release, and Karpenter's two charts in it.
const (
	releaseAPIVersion = "helm.crossplane.io/v1beta1"
	releaseKind       = "Release"
	karpenterChart    = "karpenter"
	// karpenterRelease is the Helm release's name (the Release's external name): the chart names its
	// Deployment, RBAC and default service account after it, as `helm install karpenter` does in AWS's guide.
	karpenterRelease = "karpenter"
	// karpenterCRDChart holds Karpenter's CRDs as templates, which Helm upgrades with the chart: Helm installs
	// the crds/ folder of Karpenter's own chart once and never upgrades it. Published beside it, same version.
	karpenterCRDChart   = "karpenter-crd"
	karpenterCRDRelease = "karpenter-crd"
	// localProviderConfig is provider-helm's ProviderConfig for the cluster that runs Crossplane, by the
	// provider's convention (an InjectedIdentity config named default).
	localProviderConfig = "default"
)

// Composed resource names of Karpenter's Releases.
const (
	crKarpenterRelease    = resource.Name("karpenter-release")
	crKarpenterCRDRelease = resource.Name("karpenter-crd-release")
)

// releaseName is the Kubernetes name of the cluster's Karpenter Release.
func (p plan) releaseName() string { return p.objectName("release") }

// crdReleaseName is the Kubernetes name of the Release of Karpenter's CRDs.
func (p plan) crdReleaseName() string { return p.objectName("crd-release") }

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

// helmKeep is the annotation by which Helm keeps an object its release no longer renders, or uninstalls.
const helmKeep = "helm.sh/resource-policy"

// crdChartValues are the values of Karpenter's CRD chart: every CRD carries Helm's keep annotation, so that
// nothing Helm does to the release (an uninstall by hand, a version whose chart drops a CRD) deletes a CRD, and
// with it every NodePool, NodeClaim and EC2NodeClass of the cluster.
func crdChartValues() map[string]any {
	return map[string]any{"additionalAnnotations": map[string]any{helmKeep: "keep"}}
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

// newRelease renders a Release of one of Karpenter's charts, from spec.karpenter.install's repository and
// version, into Karpenter's namespace of the cluster Karpenter runs in.
func (p plan) newRelease(name, chart, helmRelease string, forProvider map[string]any) *composed.Unstructured {
	install := p.Spec.Karpenter.Install
	providerConfig := localProviderConfig
	if pc, remote := p.Spec.Remote(); remote {
		providerConfig = pc
	}
	forProvider["chart"] = map[string]any{"name": chart, "repository": install.Repository, "version": install.Version}
	forProvider["namespace"] = p.Spec.Karpenter.Namespace
	r := composed.New()
	r.Object = map[string]any{
		"apiVersion": releaseAPIVersion,
		"kind":       releaseKind,
		"metadata":   map[string]any{"name": name},
		"spec": map[string]any{
			"providerConfigRef": map[string]any{"name": providerConfig},
			"forProvider":       forProvider,
		},
	}
	r.SetLabels(map[string]string{placement.ManagedByLabel: placement.ManagedByValue})
	r.SetAnnotations(map[string]string{meta.AnnotationKeyExternalName: helmRelease})
	return r
}

// renderKarpenterRelease renders the Release that installs Karpenter's chart, or nil without
// spec.karpenter.install. Its CRDs are the CRD Release's (renderCRDRelease): the chart's own are skipped.
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
	return p.newRelease(p.releaseName(), karpenterChart, karpenterRelease, map[string]any{"skipCRDs": true, "values": values}), nil
}

// renderCRDRelease renders the Release of Karpenter's CRD chart, or nil without spec.karpenter.install.
// Deleting a CRD deletes every object of its kind and drains every tenant node, so kiso never does: the Release
// orphans its Helm release when deleted (with the cluster, or the install dropped) and Helm keeps each CRD
// (crdChartValues). takeOwnership lets Helm take over, once, CRDs an earlier install left without Helm's
// ownership (Helm installs the crds/ folder of Karpenter's chart so).
func renderCRDRelease(p plan) *composed.Unstructured {
	if p.Spec.Karpenter.Install == nil {
		return nil
	}
	r := p.newRelease(p.crdReleaseName(), karpenterCRDChart, karpenterCRDRelease, map[string]any{"takeOwnership": true, "values": crdChartValues()})
	r.Object["spec"].(map[string]any)["deletionPolicy"] = "Orphan"
	return r
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
