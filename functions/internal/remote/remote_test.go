package remote

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/kiso-dev/kiso/functions/internal/fnstate"
	"github.com/kiso-dev/kiso/functions/internal/usage"
)

func object(t testing.TB, doc string) *composed.Unstructured {
	t.Helper()
	u := composed.New()
	if err := json.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

func TestWrapped(t *testing.T) {
	for group, want := range map[string]bool{
		"":                             true, // ConfigMaps, namespaces
		"karpenter.sh":                 true,
		"karpenter.k8s.aws":            true,
		"admissionregistration.k8s.io": true,
		"rbac.authorization.k8s.io":    true,
		"monitoring.coreos.com":        true,
		"iam.aws.upbound.io":           false, // managed resources live beside Crossplane
		"protection.crossplane.io":     false, // Usages guard the management cluster's objects
		"kubernetes.crossplane.io":     false, // never an Object in an Object
		"helm.crossplane.io":           false,
		"kiso.dev":                     false,
	} {
		if got := Wrapped(group); got != want {
			t.Errorf("Wrapped(%q) = %v, want %v", group, got, want)
		}
	}
}

func TestObjectName(t *testing.T) {
	nodePool := schema.GroupVersionKind{Group: "karpenter.sh", Version: "v1", Kind: "NodePool"}
	configMap := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	cases := map[string]struct {
		pc        string
		gvk       schema.GroupVersionKind
		namespace string
		name      string
		want      string
	}{
		"ClusterScoped": {pc: "eu-workloads", gvk: nodePool, name: "kiso-acme", want: "eu-workloads.nodepool.kiso-acme"},
		"Namespaced":    {pc: "eu-workloads", gvk: configMap, namespace: "team-a", name: "kiso-placement", want: "eu-workloads.configmap.team-a.kiso-placement"},
		"OtherCluster":  {pc: "us-workloads", gvk: nodePool, name: "kiso-acme", want: "us-workloads.nodepool.kiso-acme"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := ObjectName(tc.pc, tc.gvk, tc.namespace, tc.name); got != tc.want {
				t.Errorf("ObjectName() = %q, want %q", got, tc.want)
			}
		})
	}
	long := ObjectName(strings.Repeat("p", 63), configMap, strings.Repeat("n", 63), strings.Repeat("c", 253))
	if errs := validation.IsDNS1123Subdomain(long); len(errs) > 0 {
		t.Errorf("ObjectName of the longest names %q: %v", long, errs)
	}
}

// TestWrapObjects: what lives in the workload cluster goes into Objects of its ProviderConfig, judged Ready as
// the object itself says where it has a Ready condition; managed resources stay; a Usage between objects of the
// workload cluster guards their Objects instead, and one naming a managed resource keeps that side.
func TestWrapObjects(t *testing.T) {
	objects := map[resource.Name]*composed.Unstructured{
		"nodepool":  object(t, `{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"kiso-acme","labels":{"kiso.dev/organization":"acme"}},"spec":{"limits":{"cpu":"8"}}}`),
		"configmap": object(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"kiso-placement","namespace":"team-a"},"data":{"a":"b"}}`),
		"role":      object(t, `{"apiVersion":"iam.aws.upbound.io/v1beta1","kind":"Role","metadata":{"name":"kiso-acme-node"},"spec":{"providerConfigRef":{"name":"aws"}}}`),
		"usage-nodeclass": usage.Usage{Name: "u1",
			Of: usage.Ref{APIVersion: "karpenter.k8s.aws/v1", Kind: "EC2NodeClass", Name: "kiso-acme"},
			By: usage.Ref{APIVersion: "karpenter.sh/v1", Kind: "NodePool", Name: "kiso-acme"}}.Render(nil),
		"usage-role": usage.Usage{Name: "u2",
			Of: usage.Ref{APIVersion: "iam.aws.upbound.io/v1beta1", Kind: "Role", Name: "kiso-prod-karpenter-controller"},
			By: usage.Ref{APIVersion: "karpenter.sh/v1", Kind: "NodePool", Name: "kiso-acme"}}.Render(nil),
	}
	nodePool := runtime.DeepCopyJSON(objects["nodepool"].Object)
	WrapObjects("eu", objects)

	want := map[string]any{
		"apiVersion": ObjectAPIVersion, "kind": ObjectKind,
		"metadata": map[string]any{"name": "eu.nodepool.kiso-acme", "labels": map[string]any{"kiso.dev/organization": "acme"}},
		"spec": map[string]any{
			"forProvider":       map[string]any{"manifest": nodePool},
			"providerConfigRef": map[string]any{"name": "eu"},
			"readiness":         map[string]any{"policy": "DeriveFromObject"},
			"watch":             true,
		},
	}
	if diff := cmp.Diff(want, objects["nodepool"].Object); diff != "" {
		t.Errorf("NodePool's Object: -want, +got:\n%s", diff)
	}
	if got, _, _ := unstructured.NestedString(objects["configmap"].Object, "spec", "readiness", "policy"); got != "SuccessfulCreate" {
		t.Errorf("ConfigMap's Object readiness policy %q, want SuccessfulCreate: a ConfigMap has no Ready condition", got)
	}
	if objects["role"].GetKind() != "Role" {
		t.Errorf("a managed resource was wrapped: %v", objects["role"].Object)
	}
	refs := func(name resource.Name) (of, by string) {
		of, _, _ = unstructured.NestedString(objects[name].Object, "spec", "of", "resourceRef", "name")
		by, _, _ = unstructured.NestedString(objects[name].Object, "spec", "by", "resourceRef", "name")
		return of, by
	}
	if of, by := refs("usage-nodeclass"); of != "eu.ec2nodeclass.kiso-acme" || by != "eu.nodepool.kiso-acme" {
		t.Errorf("NodeClass usage names of %q, by %q; want the Objects eu.ec2nodeclass.kiso-acme and eu.nodepool.kiso-acme", of, by)
	}
	if of, by := refs("usage-role"); of != "kiso-prod-karpenter-controller" || by != "eu.nodepool.kiso-acme" {
		t.Errorf("controller role usage names of %q, by %q; want the Role itself, used by the NodePool's Object", of, by)
	}
	if kind, _, _ := unstructured.NestedString(objects["usage-role"].Object, "spec", "of", "kind"); kind != "Role" {
		t.Errorf("controller role usage's of kind %q, want Role", kind)
	}
}

// TestWrapDesiredReadiness: an object is Ready only when it is and its Object is Ready and Synced.
func TestWrapDesiredReadiness(t *testing.T) {
	observedObject := func(ready, synced string) resource.ObservedComposed {
		return resource.ObservedComposed{Resource: object(t, `{"apiVersion":"kubernetes.crossplane.io/v1alpha2","kind":"Object","status":{"conditions":[
			{"type":"Ready","status":"`+ready+`"},{"type":"Synced","status":"`+synced+`"}]}}`)}
	}
	cases := map[string]struct {
		own      resource.Ready
		observed map[resource.Name]resource.ObservedComposed
		want     resource.Ready
	}{
		"BothReady":        {own: resource.ReadyTrue, observed: map[resource.Name]resource.ObservedComposed{"cm": observedObject("True", "True")}, want: resource.ReadyTrue},
		"ObjectNotSynced":  {own: resource.ReadyTrue, observed: map[resource.Name]resource.ObservedComposed{"cm": observedObject("True", "False")}, want: resource.ReadyFalse},
		"ObjectNotCreated": {own: resource.ReadyTrue, want: resource.ReadyFalse},
		"OwnNotReady":      {own: resource.ReadyFalse, observed: map[resource.Name]resource.ObservedComposed{"cm": observedObject("True", "True")}, want: resource.ReadyFalse},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			desired := map[resource.Name]*resource.DesiredComposed{"cm": {Resource: object(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"y"}}`), Ready: tc.own}}
			(&Reader{ProviderConfig: "eu"}).WrapDesired(desired, fnstate.ObservedOf(tc.observed))
			if got := desired["cm"].Ready; got != tc.want {
				t.Errorf("Ready = %q, want %q", got, tc.want)
			}
		})
	}
}

// FuzzUnwrapUndoesWrap: whatever object kiso composes, the function reads back through its Object exactly the
// object it composed, with the status the provider observed in the workload cluster; nothing of the Object's own
// leaks in. Keeping an observed object on a gap depends on it.
func FuzzUnwrapUndoesWrap(f *testing.F) {
	f.Add(`{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"kiso-acme","labels":{"a":"b"}},"spec":{"limits":{"cpu":"8"}}}`, `{"conditions":[{"type":"Ready","status":"True"}]}`)
	f.Add(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"y"},"data":{"k":"v"}}`, ``)
	f.Fuzz(func(t *testing.T, manifest, status string) {
		o := composed.New()
		if err := json.Unmarshal([]byte(manifest), &o.Object); err != nil || o.Object == nil {
			return
		}
		delete(o.Object, "status") // what kiso composes has no status
		want := runtime.DeepCopyJSON(o.Object)
		w := Wrap("eu", o)
		var st any
		if json.Unmarshal([]byte(status), &st) == nil && st != nil {
			if err := unstructured.SetNestedField(w.Object, map[string]any{"status": st, "metadata": map[string]any{"uid": "from-the-workload-cluster"}}, "status", "atProvider", "manifest"); err != nil {
				t.Fatal(err)
			}
			want["status"] = runtime.DeepCopyJSONValue(st)
		}
		if err := unstructured.SetNestedSlice(w.Object, []any{map[string]any{"type": "Ready", "status": "True"}}, "status", "conditions"); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, Unwrap(w).Object); diff != "" {
			t.Errorf("Unwrap(Wrap(o)) != o: -want, +got:\n%s", diff)
		}
	})
}
