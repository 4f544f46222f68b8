package remote

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/kiso-dev/kiso/functions/internal/ownership"
	"github.com/kiso-dev/kiso/functions/internal/ready"
)

// Reads from the workload cluster. A function asks Crossplane for what it reads (required resources); Crossplane
// reads only its own cluster. For a workload cluster, a Reader turns each such requirement into a composed
// resource that reads it there, and the reads' results back into the answers Crossplane would have given, so the
// function reads the workload cluster exactly as it reads its own:
//
//   - a requirement by name becomes an observe-only Object of that object;
//   - a requirement by labels becomes an ObservedObjectCollection, for which provider-kubernetes creates an
//     observe-only Object per match, labelled with the collection's name; Crossplane is asked for those Objects.
//
// A read is answered once the provider has observed it: the object (found), "does not exist" (not found), or
// every member of a collection observed. Until then the requirement stays unanswered, as Crossplane leaves one
// until it has fetched it, and the function waits and keeps what it composed.

// provider-kubernetes' ObservedObjectCollection, and the label it puts on its members.
const (
	collectionAPIVersion = "kubernetes.crossplane.io/v1alpha1"
	collectionKind       = "ObservedObjectCollection"
	membershipLabel      = "kubernetes.crossplane.io/owned-by-collection"
)

// readPrefix starts the composed resource name of every read; the rest is the requirement's name.
const readPrefix = "read:"

// membersPrefix starts the name of the requirement for a collection's members.
const membersPrefix = "read-members:"

// RereadEvery is how often a collection the function keeps current (Reader.Current) is listed again, and each
// of its members observed again. A collection is not watched: without this the provider lists it, and observes
// its members, at its own poll (10 minutes by default), which is what an idle fleet should pay; a rollout's open
// wave, judged by its pools' NodeClaims, should not wait that long.
const RereadEvery = 30 * time.Second

// rereadAnnotation is put, through a current collection's object template, on every member the provider makes
// for it. Its value, the call's clock truncated to RereadEvery, changes once per RereadEvery: the provider lists
// a collection again at once when its spec changes, and observes a member again at once when its annotations
// change (its controllers' DesiredStateChanged predicate), so each change is one fresh read of the collection.
const rereadAnnotation = "kiso.dev/reread-at"

// notExist is what crossplane-runtime says of an observe-only managed resource whose external resource does not
// exist (its errExternalResourceNotExist).
const notExist = "external resource does not exist"

// noKindMatch is how apimachinery's REST mapping refuses a kind the apiserver does not serve (NoKindMatchError),
// which provider-kubernetes passes on in the Synced condition of an Object that reads one.
const noKindMatch = "no matches for kind"

// A Reader reads from one workload cluster for one XR.
type Reader struct {
	// ProviderConfig is the workload cluster's provider-kubernetes ProviderConfig.
	ProviderConfig string
	// Owner names the XR the reads are for; the reads' names are derived from it.
	Owner string
	// Local reports whether a requirement stays with Crossplane though its kind lives in a workload cluster
	// too, e.g. a ConfigMap the function keeps beside its XR.
	Local func(gvk schema.GroupVersionKind, namespace, name string) bool

	// Current names the requirements by labels whose collections are read again every RereadEvery, for as long
	// as they are named here, not only at the provider's poll; Now is the call's one reading of the clock. Only
	// a collection already composed (observed by Answer or Localize) is: the provider lists a new one as it is
	// created, and the first render of a read stays the same at any time.
	Current map[string]bool
	Now     time.Time

	// composed holds the reads Answer or Localize observed composed.
	composed map[resource.Name]bool

	// unanswered describes, after Localize, each read the provider has not answered yet, and why.
	unanswered []string
	// notServed holds, after Answer or Localize, the requirements by name whose read the workload cluster
	// refused because it does not serve their kind.
	notServed map[string]bool
	// rereading is true when Requirements composed a current collection.
	rereading bool
}

// readName is the Kubernetes name of one read: a hash of the owner and the requirement, short enough that a
// collection's members (name-<7 hex>) and its membership label value fit.
func (r *Reader) readName(requirement string) string {
	sum := sha256.Sum256([]byte(r.ProviderConfig + "\x00" + r.Owner + "\x00" + requirement))
	return "kiso-read-" + hex.EncodeToString(sum[:])[:20]
}

// Requirements splits a function's requirements: those Crossplane answers from its own cluster stay in rs;
// each of the others is removed and becomes a read, returned as composed resources, with, for a collection,
// a requirement for its members added to rs. A nil reader, for a cluster that runs Crossplane, reads nothing.
func (r *Reader) Requirements(rs map[string]*fnv1.ResourceSelector) map[resource.Name]*composed.Unstructured {
	if r == nil {
		return nil
	}
	r.rereading = false
	reads := map[resource.Name]*composed.Unstructured{}
	for key, sel := range rs {
		gvk := schema.FromAPIVersionAndKind(sel.GetApiVersion(), sel.GetKind())
		if !Wrapped(gvk.Group) || (r.Local != nil && r.Local(gvk, sel.GetNamespace(), sel.GetMatchName())) {
			continue
		}
		delete(rs, key)
		name := r.readName(key)
		if sel.GetMatchLabels() == nil {
			// A name check lasts until the object is composed, and what it finds is often that very object
			// being created, which its controller writes many times a second (a NodePool Karpenter is
			// provisioning): watched, each write would wake the XR until Crossplane's circuit breaker opened.
			reads[ReadOf(key)] = r.observe(name, gvk, sel, !ownership.IsNameCheck(key))
			continue
		}
		c := r.collection(name, gvk, sel.GetNamespace(), sel.GetMatchLabels().GetLabels())
		if r.Current[key] && r.composed[ReadOf(key)] {
			r.reread(c)
		}
		reads[ReadOf(key)] = c
		rs[membersPrefix+key] = &fnv1.ResourceSelector{
			ApiVersion: ObjectAPIVersion,
			Kind:       ObjectKind,
			Match:      &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: map[string]string{membershipLabel: name}}},
		}
	}
	return reads
}

// observe is an observe-only Object of the one object of the workload cluster sel names, watched if watch.
func (r *Reader) observe(name string, gvk schema.GroupVersionKind, sel *fnv1.ResourceSelector, watch bool) *composed.Unstructured {
	metadata := map[string]any{"name": sel.GetMatchName()}
	if namespace := sel.GetNamespace(); namespace != "" {
		metadata["namespace"] = namespace
	}
	o := composed.New()
	o.Object = map[string]any{
		"apiVersion": ObjectAPIVersion,
		"kind":       ObjectKind,
		"metadata":   map[string]any{"name": name},
		"spec": map[string]any{
			"managementPolicies": []any{"Observe"},
			"forProvider": map[string]any{"manifest": map[string]any{
				"apiVersion": gvk.GroupVersion().String(),
				"kind":       gvk.Kind,
				"metadata":   metadata,
			}},
			providerConfigRef: map[string]any{"name": r.ProviderConfig},
		},
	}
	if watch {
		// Watched, so an edit of the reference or of the cluster's policy in the workload cluster reaches the
		// organizations that read it at once, not at the provider's next poll. A collection cannot be watched:
		// what it lists waits for the provider's poll, unless the function keeps it current (Current).
		o.Object["spec"].(map[string]any)["watch"] = true
	}
	return o
}

// collection is an ObservedObjectCollection of the objects of a kind with the labels.
func (r *Reader) collection(name string, gvk schema.GroupVersionKind, namespace string, labels map[string]string) *composed.Unstructured {
	matchLabels := make(map[string]any, len(labels))
	for k, v := range labels {
		matchLabels[k] = v
	}
	observe := map[string]any{
		"apiVersion": gvk.GroupVersion().String(),
		"kind":       gvk.Kind,
		"selector":   map[string]any{"matchLabels": matchLabels},
	}
	if namespace != "" {
		observe["namespace"] = namespace
	}
	o := composed.New()
	o.Object = map[string]any{
		"apiVersion": collectionAPIVersion,
		"kind":       collectionKind,
		"metadata":   map[string]any{"name": name},
		"spec": map[string]any{
			"observeObjects":  observe,
			providerConfigRef: map[string]any{"name": r.ProviderConfig},
		},
	}
	return o
}

// reread stamps a collection with the current RereadEvery period, so that it is read again once the period
// changes (see rereadAnnotation).
func (r *Reader) reread(c *composed.Unstructured) {
	period := r.Now.UTC().Truncate(RereadEvery).Format(time.RFC3339)
	c.Object["spec"].(map[string]any)["objectTemplate"] = map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{rereadAnnotation: period}},
	}
	r.rereading = true
}

// Rereading reports whether the last Requirements composed a collection read again every RereadEvery: the
// function must then be called again within RereadEvery, or the next period's read waits for that call.
func (r *Reader) Rereading() bool { return r != nil && r.rereading }

// Answer is the package's Answer for a reader's reads; a nil reader returns the observed resources as they are.
func (r *Reader) Answer(req *fnv1.RunFunctionRequest, observed map[resource.Name]resource.ObservedComposed) (map[resource.Name]resource.ObservedComposed, error) {
	if r == nil {
		return observed, nil
	}
	r.composed = composedReads(observed)
	r.notServed = kindsNotServed(observed)
	return Answer(req, observed)
}

// Localize returns the observed composed resources as the function would observe them composed directly
// (UnwrapAll), without the reads, whose observations it turns into the request's answers (Answer). A nil reader
// returns them as they are.
func (r *Reader) Localize(req *fnv1.RunFunctionRequest, observed map[resource.Name]resource.ObservedComposed) (map[resource.Name]resource.ObservedComposed, error) {
	if r == nil {
		return observed, nil
	}
	r.composed = composedReads(observed)
	r.notServed = kindsNotServed(observed)
	rest, unanswered, err := answer(req, observed)
	if err != nil {
		return nil, err
	}
	r.unanswered = unanswered
	return UnwrapAll(rest), nil
}

// Unanswered describes each read the provider had not answered when Localize ran, and why; none for a nil
// reader.
func (r *Reader) Unanswered() []string {
	if r == nil {
		return nil
	}
	return r.unanswered
}

// NotServed reports whether the workload cluster refused the read of a requirement by name because it does not
// serve its kind, as last observed; such a read stays unanswered, since the provider retries it. False for a nil
// reader.
func (r *Reader) NotServed(requirement string) bool {
	return r != nil && r.notServed[requirement]
}

// kindsNotServed is the requirements by name whose observed read says the workload cluster does not serve its kind.
func kindsNotServed(observed map[resource.Name]resource.ObservedComposed) map[string]bool {
	out := map[string]bool{}
	for name, oc := range observed {
		if IsRead(name) && oc.Resource.GetKind() != collectionKind && strings.Contains(syncedMessage(oc.Resource), noKindMatch) {
			out[strings.TrimPrefix(string(name), readPrefix)] = true
		}
	}
	return out
}

// ReadOf is the composed resource name of the read of a requirement.
func ReadOf(requirement string) resource.Name { return resource.Name(readPrefix + requirement) }

// composedReads is the set of reads among the observed composed resources.
func composedReads(observed map[resource.Name]resource.ObservedComposed) map[resource.Name]bool {
	out := map[resource.Name]bool{}
	for name := range observed {
		if IsRead(name) {
			out[name] = true
		}
	}
	return out
}

// IsRead reports whether a composed resource is one of a Reader's reads.
func IsRead(name resource.Name) bool { return strings.HasPrefix(string(name), readPrefix) }

// Answer fills in the request's required resources from the reads the provider has observed, as Crossplane
// would have answered the requirements they stand for, and returns the observed composed resources without the
// reads, so that the function sees only what it composed.
func Answer(req *fnv1.RunFunctionRequest, observed map[resource.Name]resource.ObservedComposed) (map[resource.Name]resource.ObservedComposed, error) {
	rest, _, err := answer(req, observed)
	return rest, err
}

// answer is Answer, also describing each read not answered yet, in name order.
func answer(req *fnv1.RunFunctionRequest, observed map[resource.Name]resource.ObservedComposed) (map[resource.Name]resource.ObservedComposed, []string, error) {
	var unanswered []string
	rest := make(map[resource.Name]resource.ObservedComposed, len(observed))
	for name, oc := range observed {
		if !IsRead(name) {
			rest[name] = oc
			continue
		}
		key := strings.TrimPrefix(string(name), readPrefix)
		var items []*unstructured.Unstructured
		answered := false
		if oc.Resource.GetKind() == collectionKind {
			items, answered = collected(req, key, oc)
		} else {
			items, answered = observedOne(oc)
		}
		if !answered {
			unanswered = append(unanswered, describeRead(oc.Resource))
			continue
		}
		resources := &fnv1.Resources{Items: make([]*fnv1.Resource, 0, len(items))}
		for _, item := range items {
			s, err := structpb.NewStruct(item.Object)
			if err != nil {
				return nil, nil, errors.Wrapf(err, "cannot read what %s observed", name)
			}
			resources.Items = append(resources.Items, &fnv1.Resource{Resource: s})
		}
		if req.RequiredResources == nil {
			req.RequiredResources = map[string]*fnv1.Resources{}
		}
		req.RequiredResources[key] = resources
	}
	slices.Sort(unanswered)
	return rest, unanswered, nil
}

// describeRead says what a read reads and why it has no answer: the provider's own words (the workload cluster
// unreachable, its ProviderConfig missing), or that it has not observed it yet.
func describeRead(o *composed.Unstructured) string {
	what := ""
	if o.GetKind() == collectionKind {
		kind, _, _ := unstructured.NestedString(o.Object, "spec", "observeObjects", "kind")
		labels, _, _ := unstructured.NestedStringMap(o.Object, "spec", "observeObjects", "selector", "matchLabels")
		pairs := make([]string, 0, len(labels))
		for k, v := range labels {
			pairs = append(pairs, k+"="+v)
		}
		slices.Sort(pairs)
		what = kind + "s labelled " + strings.Join(pairs, ",")
	} else {
		m := &unstructured.Unstructured{}
		m.Object, _, _ = unstructured.NestedMap(o.Object, "spec", "forProvider", "manifest")
		what = m.GetKind() + " " + m.GetName()
		if ns := m.GetNamespace(); ns != "" {
			what = m.GetKind() + " " + ns + "/" + m.GetName()
		}
	}
	if why := syncedMessage(o); why != "" {
		return what + ": " + why
	}
	return what + ": not observed yet"
}

// observedOne reads an observe-only Object: the object it observed, none when the object does not exist, and
// false while the provider has not said either (not yet observed, or the workload cluster unreachable).
func observedOne(oc resource.ObservedComposed) ([]*unstructured.Unstructured, bool) {
	if there, ok := InForce(oc.Resource); ok && ready.IsTrue(oc, "Synced") {
		return []*unstructured.Unstructured{&there.Unstructured}, true
	}
	if synced := syncedMessage(oc.Resource); strings.Contains(synced, notExist) {
		return nil, true
	}
	return nil, false
}

// collected reads a collection: every member's observed object, once the provider has listed the matches and
// observed each of them. The provider creates a member for every match before it deletes the members of objects
// gone or no longer matching, and Crossplane's RBAC manager grants a provider no delete on its own kinds (the
// install grants provider-kubernetes that one): a collection that could not delete a member is still answered,
// and a member whose object is gone, or no longer carries the labels, is left out, as the provider would have.
func collected(req *fnv1.RunFunctionRequest, key string, oc resource.ObservedComposed) ([]*unstructured.Unstructured, bool) {
	listed := ready.IsTrue(oc, "Synced") || strings.HasPrefix(syncedMessage(oc.Resource), cannotDeleteMember)
	if !ready.IsTrue(oc, "Ready") || !listed {
		return nil, false
	}
	members, ok := req.GetRequiredResources()[membersPrefix+key]
	if !ok {
		return nil, false
	}
	selector, _, _ := unstructured.NestedStringMap(oc.Resource.Object, "spec", "observeObjects", "selector", "matchLabels")
	out := make([]*unstructured.Unstructured, 0, len(members.GetItems()))
	for _, m := range members.GetItems() {
		member := &composed.Unstructured{Unstructured: unstructured.Unstructured{Object: m.GetResource().AsMap()}}
		if strings.Contains(syncedMessage(member), notExist) {
			continue
		}
		manifest, ok, _ := unstructured.NestedMap(member.Object, "status", "atProvider", "manifest")
		if !ok {
			return nil, false
		}
		object := &unstructured.Unstructured{Object: manifest}
		if !carries(object.GetLabels(), selector) {
			continue
		}
		out = append(out, object)
	}
	return out, true
}

// cannotDeleteMember starts the provider's Synced message when it could not delete a collection's member.
const cannotDeleteMember = "cannot delete observed object"

// carries reports whether labels hold every key and value of selector.
func carries(labels, selector map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// syncedMessage is the message of an object's Synced condition.
func syncedMessage(o *composed.Unstructured) string {
	conditions, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
	for _, c := range conditions {
		if m, ok := c.(map[string]any); ok && m["type"] == "Synced" {
			msg, _ := m["message"].(string)
			return msg
		}
	}
	return ""
}
