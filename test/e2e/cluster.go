package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
)

// Cluster reads and waits on objects of any kind, including kinds whose CRDs appear during the run (XRDs
// make CRDs): an unknown kind refreshes discovery once before it is an error.
type Cluster struct {
	Dynamic dynamic.Interface
	Typed   kubernetes.Interface
	mapper  *restmapper.DeferredDiscoveryRESTMapper
	config  *rest.Config
}

func newCluster(kubeconfig string) (*Cluster, error) {
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("cannot load kubeconfig: %w", err)
	}
	// The harness polls many objects at once during boot; client-go's default 5 QPS would pace it.
	config.QPS, config.Burst = 100, 200
	return newClusterFromConfig(config)
}

func newClusterFromConfig(config *rest.Config) (*Cluster, error) {
	dyn, err := dynamic.NewForConfig(config)
	if err != nil {
		return nil, fmt.Errorf("cannot make dynamic client: %w", err)
	}
	typed, err := kubernetes.NewForConfig(config)
	if err != nil {
		return nil, fmt.Errorf("cannot make client: %w", err)
	}
	disco, err := discovery.NewDiscoveryClientForConfig(config)
	if err != nil {
		return nil, fmt.Errorf("cannot make discovery client: %w", err)
	}
	return &Cluster{Dynamic: dyn, Typed: typed, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco)), config: config}, nil
}

// TypedWithoutWarnings is a client that drops the warnings the apiserver sends, for a benchmark that sends
// the same warned request hundreds of times.
func (c *Cluster) TypedWithoutWarnings() (kubernetes.Interface, error) {
	config := rest.CopyConfig(c.config)
	config.WarningHandler = rest.NoWarnings{}
	return kubernetes.NewForConfig(config)
}

// Resource returns the client for a kind, in namespace ns if the kind is namespaced.
func (c *Cluster) Resource(gvk schema.GroupVersionKind, ns string) (dynamic.ResourceInterface, error) {
	mapping, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		c.mapper.Reset()
		mapping, err = c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot map %s to a resource: %w", gvk, err)
	}
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		return c.Dynamic.Resource(mapping.Resource).Namespace(ns), nil
	}
	return c.Dynamic.Resource(mapping.Resource), nil
}

// Get returns one object; ns is ignored for cluster-scoped kinds.
func (c *Cluster) Get(ctx context.Context, gvk schema.GroupVersionKind, ns, name string) (*unstructured.Unstructured, error) {
	r, err := c.Resource(gvk, ns)
	if err != nil {
		return nil, err
	}
	u, err := r.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("cannot get %s %s: %w", gvk.Kind, objectName(ns, name), err)
	}
	return u, nil
}

// List returns the objects of a kind matching a label selector ("" for all), in ns ("" for all namespaces).
func (c *Cluster) List(ctx context.Context, gvk schema.GroupVersionKind, ns, labelSelector string) ([]unstructured.Unstructured, error) {
	r, err := c.Resource(gvk, ns)
	if err != nil {
		return nil, err
	}
	list, err := r.List(ctx, metav1.ListOptions{LabelSelector: labelSelector})
	if err != nil {
		return nil, fmt.Errorf("cannot list %s with labels %q: %w", gvk.Kind, labelSelector, err)
	}
	return list.Items, nil
}

// WaitFor waits until the object exists and ready reports it done; ready may be nil for "exists".
func (c *Cluster) WaitFor(ctx context.Context, timeout time.Duration, gvk schema.GroupVersionKind, ns, name string,
	ready func(*unstructured.Unstructured) (done bool, notYet string)) (*unstructured.Unstructured, error) {
	var got *unstructured.Unstructured
	err := waitFor(ctx, timeout, gvk.Kind+" "+objectName(ns, name), func(ctx context.Context) (bool, string, error) {
		r, err := c.Resource(gvk, ns)
		if meta.IsNoMatchError(err) {
			return false, err.Error(), nil
		}
		if err != nil {
			return false, "", err
		}
		u, err := r.Get(ctx, name, metav1.GetOptions{})
		if kerrors.IsNotFound(err) {
			return false, "not found", nil
		}
		if err != nil {
			return false, err.Error(), nil
		}
		got = u
		if ready == nil {
			return true, "", nil
		}
		done, notYet := ready(u)
		return done, notYet, nil
	})
	return got, err
}

// WaitForCondition waits until the object's condition of type conditionType has status "True".
func (c *Cluster) WaitForCondition(ctx context.Context, timeout time.Duration, gvk schema.GroupVersionKind, ns, name, conditionType string) (*unstructured.Unstructured, error) {
	return c.WaitFor(ctx, timeout, gvk, ns, name, HasCondition(conditionType))
}

// WaitForDeletion waits until the object is gone.
func (c *Cluster) WaitForDeletion(ctx context.Context, timeout time.Duration, gvk schema.GroupVersionKind, ns, name string) error {
	return waitFor(ctx, timeout, "deletion of "+gvk.Kind+" "+objectName(ns, name), func(ctx context.Context) (bool, string, error) {
		r, err := c.Resource(gvk, ns)
		if err != nil {
			return false, "", err
		}
		u, err := r.Get(ctx, name, metav1.GetOptions{})
		if kerrors.IsNotFound(err) {
			return true, "", nil
		}
		if err != nil {
			return false, err.Error(), nil
		}
		return false, fmt.Sprintf("still there, finalizers %v", u.GetFinalizers()), nil
	})
}

// HasCondition reports whether an object's status.conditions holds conditionType with status "True"; not
// yet, it says the condition's reason and message.
func HasCondition(conditionType string) func(*unstructured.Unstructured) (bool, string) {
	return func(u *unstructured.Unstructured) (bool, string) {
		c, ok := Condition(u, conditionType)
		if !ok {
			return false, "no " + conditionType + " condition; conditions: " + conditionSummary(u)
		}
		if c.Status != "True" {
			return false, fmt.Sprintf("%s=%s reason=%s message=%q", conditionType, c.Status, c.Reason, c.Message)
		}
		return true, ""
	}
}

// A ConditionStatus is the part of a status condition tests assert on.
type ConditionStatus struct {
	Type, Status, Reason, Message string
}

// Condition returns an object's status condition of a type.
func Condition(u *unstructured.Unstructured, conditionType string) (ConditionStatus, bool) {
	conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, raw := range conditions {
		c, ok := raw.(map[string]any)
		if !ok || c["type"] != conditionType {
			continue
		}
		str := func(key string) string { s, _ := c[key].(string); return s }
		return ConditionStatus{Type: str("type"), Status: str("status"), Reason: str("reason"), Message: str("message")}, true
	}
	return ConditionStatus{}, false
}

func conditionSummary(u *unstructured.Unstructured) string {
	conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	parts := make([]string, 0, len(conditions))
	for _, raw := range conditions {
		if c, ok := raw.(map[string]any); ok {
			parts = append(parts, fmt.Sprintf("%v=%v(%v)", c["type"], c["status"], c["reason"]))
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func objectName(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

// GetT returns one object or fails the test.
func (c *Cluster) GetT(t *testing.T, gvk schema.GroupVersionKind, ns, name string) *unstructured.Unstructured {
	t.Helper()
	u, err := c.Get(t.Context(), gvk, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// ListT returns the objects of a kind with a label selector or fails the test.
func (c *Cluster) ListT(t *testing.T, gvk schema.GroupVersionKind, ns, labelSelector string) []unstructured.Unstructured {
	t.Helper()
	items, err := c.List(t.Context(), gvk, ns, labelSelector)
	if err != nil {
		t.Fatal(err)
	}
	return items
}

// WaitForConditionT waits for a condition to be True or fails the test.
func (c *Cluster) WaitForConditionT(t *testing.T, timeout time.Duration, gvk schema.GroupVersionKind, ns, name, conditionType string) *unstructured.Unstructured {
	t.Helper()
	u, err := c.WaitForCondition(t.Context(), timeout, gvk, ns, name, conditionType)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// WaitForT waits until ready reports the object done, or fails the test.
func (c *Cluster) WaitForT(t *testing.T, timeout time.Duration, gvk schema.GroupVersionKind, ns, name string, ready func(*unstructured.Unstructured) (bool, string)) *unstructured.Unstructured {
	t.Helper()
	u, err := c.WaitFor(t.Context(), timeout, gvk, ns, name, ready)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// WaitForDeletionT waits until the object is gone or fails the test.
func (c *Cluster) WaitForDeletionT(t *testing.T, timeout time.Duration, gvk schema.GroupVersionKind, ns, name string) {
	t.Helper()
	if err := c.WaitForDeletion(t.Context(), timeout, gvk, ns, name); err != nil {
		t.Fatal(err)
	}
}
