// Package remote composes Kubernetes objects into a workload cluster that Crossplane reaches through
// provider-kubernetes, from the management cluster that runs Crossplane: every object kiso would compose
// directly is wrapped in a cluster-scoped Object of the workload cluster's ProviderConfig, and what the
// provider observes there is unwrapped again, so the rest of a function reads the workload cluster's objects as
// if they were composed directly.
//
// The cluster-scoped kind (kubernetes.crossplane.io) rather than the namespaced one (kubernetes.m.crossplane.io):
// an Object can create anything its ProviderConfig may in the workload cluster, so whoever may edit it holds the
// workload cluster's platform credentials. A namespaced Object would hand that to every admin of the namespace
// it lives in; a cluster-scoped one needs cluster-wide RBAC in the management cluster, as kiso's XRs do.
package remote

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/kiso-dev/kiso/functions/internal/fnstate"
	"github.com/kiso-dev/kiso/functions/internal/names"
	"github.com/kiso-dev/kiso/functions/internal/ready"
	"github.com/kiso-dev/kiso/functions/internal/usage"
)

// provider-kubernetes' cluster-scoped Object.
const (
	ObjectAPIVersion = "kubernetes.crossplane.io/v1alpha2"
	ObjectKind       = "Object"
	objectGroup      = "kubernetes.crossplane.io"
)

// ObjectGVK is the Object's kind.
var ObjectGVK = schema.FromAPIVersionAndKind(ObjectAPIVersion, ObjectKind)

// providerConfigRef is a managed resource's reference to its ProviderConfig.
const providerConfigRef = "providerConfigRef"

// maxObjectName is the longest Kubernetes object name (a DNS-1123 subdomain).
const maxObjectName = 253

// Wrapped reports whether an object of the group lives in the workload cluster, so goes through an Object:
// everything but Crossplane's own kinds (composite resources, Usages, providers' kinds) and provider-aws' managed
// resources, which live in the management cluster.
func Wrapped(group string) bool {
	switch {
	case strings.HasSuffix(group, ".crossplane.io"), strings.HasSuffix(group, ".upbound.io"), group == "kiso.dev":
		return false
	}
	return true
}

// ObjectName is the name of the Object that holds one object of the workload cluster: the ProviderConfig, the
// kind, the namespace and the name, so objects of the same name in two workload clusters (every cluster's
// admission policy) get two Objects. Stable, so that a Usage can name the Object.
func ObjectName(providerConfig string, gvk schema.GroupVersionKind, namespace, name string) string {
	parts := []string{providerConfig, strings.ToLower(gvk.Kind)}
	if namespace != "" {
		parts = append(parts, namespace)
	}
	return names.Shorten(maxObjectName, strings.Join(append(parts, name), "."))
}

// readinessPolicy is how the provider judges an Object Ready: from the object's own Ready condition for the
// objects that have one (a NodePool, a NodeClass), so that the function reads the same readiness it reads from
// a local NodePool; once it exists for the rest.
func readinessPolicy(gvk schema.GroupVersionKind) string {
	if strings.HasPrefix(gvk.Group, "karpenter.") {
		return "DeriveFromObject"
	}
	return "SuccessfulCreate"
}

// Wrap returns the Object that composes the object into the workload cluster of the ProviderConfig. The Object
// carries the object's labels, so the management cluster can select by them as it would select the objects.
func Wrap(providerConfig string, o *composed.Unstructured) *composed.Unstructured {
	gvk := o.GroupVersionKind()
	manifest := runtime.DeepCopyJSON(o.Object)
	metadata := map[string]any{"name": ObjectName(providerConfig, gvk, o.GetNamespace(), o.GetName())}
	if labels := o.GetLabels(); len(labels) > 0 {
		l := make(map[string]any, len(labels))
		for k, v := range labels {
			l[k] = v
		}
		metadata["labels"] = l
	}
	w := composed.New()
	w.Object = map[string]any{
		"apiVersion": ObjectAPIVersion,
		"kind":       ObjectKind,
		"metadata":   metadata,
		"spec": map[string]any{
			"forProvider":     map[string]any{"manifest": manifest},
			providerConfigRef: map[string]any{"name": providerConfig},
			"readiness":       map[string]any{"policy": readinessPolicy(gvk)},
			// The provider then watches the object in the workload cluster (with --enable-watches, which the
			// install's DeploymentRuntimeConfig sets): a Role a tenant admin deletes comes back, and a NodePool's
			// readiness reaches its organization, at once rather than at the next poll.
			"watch": true,
		},
	}
	return w
}

// WrapObjects wraps every object that lives in the workload cluster in its Object, and points every ClusterUsage
// that names one of them at its Object instead.
func WrapObjects(providerConfig string, objects map[resource.Name]*composed.Unstructured) {
	for name, o := range objects {
		gvk := o.GroupVersionKind()
		switch {
		case gvk.Group == usage.Group:
			retargetUsage(providerConfig, o)
		case Wrapped(gvk.Group):
			objects[name] = Wrap(providerConfig, o)
		}
	}
}

// WrapDesired is WrapObjects for desired composed resources whose readiness the caller judged from the unwrapped
// observed objects (UnwrapAll), but for the objects the reader keeps local. A wrapped object is ready when it
// is, and its Object too (observed Ready and Synced: an object the provider cannot apply is not ready).
// A nil reader, for a cluster that runs Crossplane, wraps nothing.
func (r *Reader) WrapDesired(desired map[resource.Name]*resource.DesiredComposed, observed fnstate.Observed) {
	if r == nil {
		return
	}
	for name, dc := range desired {
		gvk := dc.Resource.GroupVersionKind()
		switch {
		case gvk.Group == usage.Group:
			retargetUsage(r.ProviderConfig, dc.Resource)
		case r.Local != nil && r.Local(gvk, dc.Resource.GetNamespace(), dc.Resource.GetName()):
		case Wrapped(gvk.Group):
			dc.Resource = Wrap(r.ProviderConfig, dc.Resource)
			if oc, ok := observed.Get(name); !ok || !ready.Managed(oc) {
				dc.Ready = resource.ReadyFalse
			}
		}
	}
}

// retargetUsage points a ClusterUsage's of and by at the Objects of the objects they name, where those live in
// the workload cluster: Crossplane's usage webhook guards the management cluster's objects, so the Object is
// what must outlive its user there (and deleting an Object deletes its object).
func retargetUsage(providerConfig string, u *composed.Unstructured) {
	for _, side := range []string{"of", "by"} {
		ref, ok := u.Object["spec"].(map[string]any)[side].(map[string]any)
		if !ok {
			continue
		}
		apiVersion, _ := ref["apiVersion"].(string)
		kind, _ := ref["kind"].(string)
		name, _, _ := unstructured.NestedString(ref, "resourceRef", "name")
		gvk := schema.FromAPIVersionAndKind(apiVersion, kind)
		if !Wrapped(gvk.Group) {
			continue
		}
		ref["apiVersion"], ref["kind"] = ObjectAPIVersion, ObjectKind
		ref["resourceRef"] = map[string]any{"name": ObjectName(providerConfig, gvk, "", name)}
	}
}

// UnwrapAll returns the observed composed resources as the function would observe them composed directly: an
// Object becomes its desired manifest, with what the provider last observed of it in the workload cluster
// (its status) and the Object's deletion. The manifest is what the function keeps on a gap; the status is what
// it reads (a NodePool's Ready).
func UnwrapAll(observed map[resource.Name]resource.ObservedComposed) map[resource.Name]resource.ObservedComposed {
	out := make(map[resource.Name]resource.ObservedComposed, len(observed))
	for name, oc := range observed {
		if oc.Resource.GroupVersionKind().GroupKind() != ObjectGVK.GroupKind() {
			out[name] = oc
			continue
		}
		out[name] = resource.ObservedComposed{Resource: Unwrap(oc.Resource), ConnectionDetails: oc.ConnectionDetails}
	}
	return out
}

// InForce returns the object an observed Object composes as provider-kubernetes last observed it in the workload
// cluster (status.atProvider.manifest), and false until it has. What is in force there is that, not the manifest
// the Object asks for: an update the provider could not apply leaves the Object Ready with the old object in place.
func InForce(obj *composed.Unstructured) (*composed.Unstructured, bool) {
	manifest, ok, _ := unstructured.NestedMap(obj.Object, "status", "atProvider", "manifest")
	if !ok {
		return nil, false
	}
	u := composed.New()
	u.Object = manifest
	return u, true
}

// WhereItRuns returns an observed composed resource as it is where it runs: itself, in the management cluster;
// the object an Object composes as the provider last observed it in the workload cluster (InForce), and false
// until it has.
func WhereItRuns(obj *composed.Unstructured) (*composed.Unstructured, bool) {
	if obj.GroupVersionKind().GroupKind() != ObjectGVK.GroupKind() {
		return obj, true
	}
	return InForce(obj)
}

// Unwrap returns the object an observed Object composes, as observed in the workload cluster.
func Unwrap(obj *composed.Unstructured) *composed.Unstructured {
	manifest, _, _ := unstructured.NestedMap(obj.Object, "spec", "forProvider", "manifest")
	u := composed.New()
	u.Object = manifest
	if u.Object == nil {
		u.Object = map[string]any{}
	}
	if status, ok, _ := unstructured.NestedFieldNoCopy(obj.Object, "status", "atProvider", "manifest", "status"); ok {
		u.Object["status"] = runtime.DeepCopyJSONValue(status)
	}
	if ts := obj.GetDeletionTimestamp(); ts != nil {
		u.SetDeletionTimestamp(ts)
	}
	return u
}
