package main

import (
	"fmt"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/util/validation/field"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
)

// requireIsolations is the required resource under which Crossplane returns
// every XKarpenterIsolation in the cluster. An organization's XR sees only
// itself, yet two organizations must never share a name or a namespace: two
// placement policies on one namespace would refuse every pod in it, and a
// tenant that may create claims could otherwise take over another tenant's
// namespace, or the organization whose pools it wants.
const requireIsolations = "isolations"

// allIsolations selects every XKarpenterIsolation: a selector without a
// match lists the whole kind (cluster-scoped, so one list).
var allIsolations = &fnv1.ResourceSelector{ApiVersion: v1alpha1.Group + "/" + v1alpha1.Version, Kind: v1alpha1.IsolationKind}

// tenant is what one organization's XR says about what it holds.
type tenant struct {
	Name         string
	Claim        string // namespace/name of its claim, when it has one
	Created      time.Time
	Organization string
	// Serves are the namespaces its status lists: the ones its admission
	// policies and pools were last rendered for.
	Serves map[string]bool
}

// readTenant reads the few fields kiso compares straight from the protobuf
// Struct Crossplane sends: converting every organization's whole XR, on
// every reconcile of every organization, would cost more than rendering.
func readTenant(o *structpb.Struct) tenant {
	at := func(s *structpb.Struct, path ...string) *structpb.Value {
		var v *structpb.Value
		for _, p := range path {
			v = s.GetFields()[p]
			s = v.GetStructValue()
		}
		return v
	}
	t := tenant{
		Name:         at(o, "metadata", "name").GetStringValue(),
		Organization: at(o, "spec", "organization").GetStringValue(),
		Serves:       map[string]bool{},
	}
	if ts, err := time.Parse(time.RFC3339, at(o, "metadata", "creationTimestamp").GetStringValue()); err == nil {
		t.Created = ts
	}
	labels := at(o, "metadata", "labels").GetStructValue().GetFields()
	if name := labels["crossplane.io/claim-name"].GetStringValue(); name != "" {
		t.Claim = labels["crossplane.io/claim-namespace"].GetStringValue() + "/" + name
	}
	for _, s := range at(o, "status", "stacks").GetListValue().GetValues() {
		for _, ns := range s.GetStructValue().GetFields()["namespaces"].GetListValue().GetValues() {
			t.Serves[ns.GetStringValue()] = true
		}
	}
	return t
}

// olderThan orders tenants by age, then name, so that of two XRs that ask for
// the same thing at the same time exactly one wins, the same one on every
// reconcile of either.
func (t tenant) olderThan(o tenant) bool {
	if !t.Created.Equal(o.Created) {
		return t.Created.Before(o.Created)
	}
	return t.Name < o.Name
}

func (t tenant) String() string {
	s := fmt.Sprintf("organization %q (%s %s", t.Organization, v1alpha1.IsolationKind, t.Name)
	if t.Claim != "" {
		s += ", claim " + t.Claim
	}
	return s + ")"
}

// tenancy is this XR and every other organization's.
type tenancy struct {
	Self   tenant
	Others []tenant
}

// resolveTenants reads every XKarpenterIsolation Crossplane returned. The
// list includes this XR (matched by name: XR names are unique) whose status
// says what it already holds.
func (l *lookup) resolveTenants(req *fnv1.RunFunctionRequest) {
	found, resolved := req.GetRequiredResources()[requireIsolations]
	if !resolved {
		l.Waiting = true
		return
	}
	l.Tenants.Self = readTenant(req.GetObserved().GetComposite().GetResource())
	for _, r := range found.GetItems() {
		if o := readTenant(r.GetResource()); o.Name != l.Tenants.Self.Name {
			l.Tenants.Others = append(l.Tenants.Others, o)
		}
	}
}

// validateTenancy refuses an organization name another XR already has, and
// a namespace another organization serves. A namespace belongs to whoever
// serves it: an organization that adds a namespace another already serves is
// refused, whatever their ages; only when both serve it (they were rendered
// at the same moment) does the older keep it. A refused XR keeps what it
// composed before, as for any invalid spec.
func validateTenancy(spec v1alpha1.XKarpenterIsolationSpec, tn tenancy) field.ErrorList {
	var errs field.ErrorList
	sp := field.NewPath("spec")
	self := tn.Self
	for _, o := range tn.Others {
		if o.Organization == spec.Organization && o.olderThan(self) {
			errs = append(errs, field.Invalid(sp.Child("organization"), spec.Organization,
				fmt.Sprintf("organization already belongs to %s %s%s; one XR per organization is the single source of truth for its pools",
					v1alpha1.IsolationKind, o.Name, claimSuffix(o))))
		}
	}
	for i, s := range spec.Stacks {
		for j, ns := range namespacesOf(spec.Organization, s) {
			var holders []string
			for _, o := range tn.Others {
				if o.Organization != spec.Organization && o.Serves[ns] && (!self.Serves[ns] || o.olderThan(self)) {
					holders = append(holders, o.String())
				}
			}
			if len(holders) > 0 {
				errs = append(errs, field.Invalid(sp.Child("stacks").Index(i).Child("namespaces").Index(j), ns,
					fmt.Sprintf("namespace is served by %s; a namespace's pods run on one organization's pools only", strings.Join(holders, ", "))))
			}
		}
	}
	return errs
}

func claimSuffix(t tenant) string {
	if t.Claim == "" {
		return ""
	}
	return " (claim " + t.Claim + ")"
}
