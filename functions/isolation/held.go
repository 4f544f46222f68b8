package main

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/response"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/fncall"
	"github.com/kiso-dev/kiso/functions/internal/ownership"
	"github.com/kiso-dev/kiso/functions/internal/placement"
)

// Names something else holds, in one place: which conflicts refuse the XR (another XR holds the organization,
// or a pool's name is taken) and which namespace objects are held, composed once free and said meanwhile.

// A heldObject is a namespace's ConfigMap or Role kiso-placement whose name
// something kiso did not compose for this XR holds: an object a tenant
// created there (a tenant may delete kiso's and create its own, controlled by
// its own Deployment), or the grant of the organization the platform gave the
// namespace before, until that XR lets go. No tenant may stop the platform
// from changing its organization, so the organization composes everything
// else and says on the claim who holds the name; it composes the object once
// the name is free. A held Role leaves the namespace without its grant, and
// the policies refuse its pods: the grant fails closed.
type heldObject struct {
	Resource  resource.Name
	Namespace string
	Kind      string
	// Holder says who holds the name, as a user reads it.
	Holder string
}

func (h heldObject) String() string {
	msg := fmt.Sprintf("%s %s/%s is held by %s, not composed by this organization: kiso composes it once the name is free", h.Kind, h.Namespace, placement.Name, h.Holder)
	if h.Kind == roleGVK.Kind {
		msg += "; until then the namespace's pods are refused (the policies trust only the Role this organization composes)"
	}
	return msg
}

// namespaceConflicts sorts the objects that hold names the organization
// needs: a namespace's ConfigMap or Role held by something else is held
// (composed once free, reported meanwhile); any other conflict refuses the
// XR. Another XR holding the organization explains every other conflict: it
// holds the organization's pools and namespaces too.
func namespaceConflicts(spec v1alpha1.XKarpenterIsolationSpec, namespaces []specNamespace, conflicts []ownership.Conflict, keys placement.Keys) (refused []string, held []heldObject) {
	for _, c := range conflicts {
		if c.Planned.Resource == organizationLockResource {
			return []string{organizationConflict(spec, c.Holder)}, nil
		}
	}
	listed := map[string]bool{}
	for _, ns := range namespaces {
		listed[ns.Name] = true
	}
	for _, c := range conflicts {
		if c.Planned.GVK != configMapGVK && c.Planned.GVK != roleGVK || !listed[c.Planned.Namespace] {
			refused = append(refused, c.String())
			continue
		}
		held = append(held, heldObject{Resource: c.Planned.Resource, Namespace: c.Planned.Namespace, Kind: c.Planned.GVK.Kind, Holder: holderOf(c.Holder, keys)})
	}
	return refused, held
}

// holderOf names who holds a namespace object: its controller, and the
// organization when that controller is an organization's XR. Labels alone
// say nothing: a tenant who takes kiso's object keeps them.
func holderOf(holder *unstructured.Unstructured, keys placement.Keys) string {
	owner := metav1.GetControllerOf(holder)
	if owner == nil {
		return "an object without a controller"
	}
	who := fmt.Sprintf("%s %s", owner.Kind, owner.Name)
	if org := holder.GetLabels()[keys.Organization]; org != "" && owner.Kind == v1alpha1.IsolationKind {
		return fmt.Sprintf("organization %q (%s)", org, who)
	}
	return who
}

// organizationConflict says which XR holds the organization, from its
// ConfigMap, at spec.organization.
func organizationConflict(spec v1alpha1.XKarpenterIsolationSpec, holder *unstructured.Unstructured) string {
	who := fmt.Sprintf("a ConfigMap %s/%s that kiso did not compose", holder.GetNamespace(), holder.GetName())
	if owner := metav1.GetControllerOf(holder); owner != nil {
		who = fmt.Sprintf("%s %s", owner.Kind, owner.Name)
		if c, _, _ := unstructured.NestedString(holder.Object, configMapData, "claim"); c != "" {
			who += " (claim " + c + ")"
		}
	}
	return field.Invalid(field.NewPath("spec", "organization"), spec.Organization, "organization is held by "+who+"; one claim only holds an organization, whatever its isolation mode").Error()
}

// reportHeld says which namespace objects something else holds, on the XR
// and the claim, as a False NamesAvailable and a warning event; the
// organization is rendered all the same.
func reportHeld(rsp *fnv1.RunFunctionResponse, held []heldObject) {
	if len(held) == 0 {
		fncall.NamesAvailable(rsp, fncall.CompositeAndClaim)
		return
	}
	msgs := make([]string, 0, len(held))
	for _, h := range held {
		msgs = append(msgs, h.String())
	}
	msg := strings.Join(msgs, "; ")
	response.ConditionFalse(rsp, fncall.TypeNamesAvailable, ReasonNamespaceObjectsHeld).WithMessage(msg).TargetCompositeAndClaim()
	response.Warning(rsp, errors.New(msg)).TargetCompositeAndClaim()
}
