// This file turns the API server refusing Crossplane something an XR
// needs (typically Karpenter's kinds or admission policies, before the
// platform granted them) into a condition on the XR and its claim.
//
// Crossplane reports such a refusal only in the XR's Synced condition: a
// claim shows Synced=True, and every condition a function set is marked
// Unknown, because a failed fetch or apply drops the function's results.
// A function, though, sees the XR's Synced condition on its next call, and
// a Fatal result keeps its conditions. So, after a refusal, the function
// stops (nothing applied, nothing deleted) and says what Crossplane may not
// do; every RetryAfter it renders normally once to learn whether the grant
// arrived, since nothing tells Crossplane when RBAC changes.

package fncall

import (
	"fmt"
	"regexp"
	"time"

	corev1 "k8s.io/api/core/v1"

	xpv1 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/response"
)

const (
	// TypePermitted says whether Crossplane may do everything the XR needs.
	// It appears only once Crossplane was refused something.
	TypePermitted = "Permitted"
	// ReasonForbidden: the API server refused Crossplane.
	ReasonForbidden = "Forbidden"
	// ReasonAllowed: the last render after a refusal was not refused.
	ReasonAllowed = "Allowed"

	// RetryAfter is how long a refusal stands before the function renders
	// normally again to find out whether it still holds. Crossplane
	// reconciles a failing XR about once a minute, so a claim shows the
	// refusal most of the time and recovers within a few minutes of the
	// grant.
	RetryAfter = 3 * time.Minute

	// grantHint names what grants every kind kiso composes.
	grantHint = "examples/rbac/crossplane-karpenter.yaml grants every kind kiso composes"
)

// forbidden matches the API server's message for an RBAC refusal, as it
// appears inside Crossplane's error, e.g. `nodepools.karpenter.sh "x" is
// forbidden: User "system:serviceaccount:crossplane-system:crossplane"
// cannot get resource "nodepools" in API group "karpenter.sh" at the cluster
// scope`.
var forbidden = regexp.MustCompile(`is forbidden: User "([^"]+)" cannot ([a-z]+) resource "([^"]+)" in API group "([^"]*)"`)

// escalation matches RBAC's refusal to let Crossplane write a Role that
// grants what Crossplane does not hold itself (kiso's placement Roles grant
// what examples/rbac gives Crossplane), e.g. `roles.rbac.authorization.k8s.io
// "kiso-placement" is forbidden: user "system:serviceaccount:…" (groups=[…])
// is attempting to grant RBAC permissions not currently held`. Holding the
// permissions, or the escalate verb on that resource, lifts it.
var escalation = regexp.MustCompile(`([a-z0-9]+)\.([a-z0-9.-]+) "[^"]*" is forbidden: user "([^"]+)" \(groups=[^)]*\) is attempting to grant RBAC permissions not currently held`)

// A Refusal is one thing the API server refused Crossplane.
type Refusal struct {
	User     string
	Verb     string
	Resource string
	Group    string
}

// Parse finds a refusal in a message Crossplane wrote.
func ParseRefusal(message string) (Refusal, bool) {
	if m := forbidden.FindStringSubmatch(message); m != nil {
		return Refusal{User: m[1], Verb: m[2], Resource: m[3], Group: m[4]}, true
	}
	if m := escalation.FindStringSubmatch(message); m != nil {
		return Refusal{User: m[3], Verb: "escalate", Resource: m[1], Group: m[2]}, true
	}
	return Refusal{}, false
}

// Message is what the XR and its claim say about the refusal. It quotes
// the API server's own words, so the next call finds the refusal in it, and
// it is a function of the refusal alone, so the condition (and its
// transition time) stays the same from one call to the next.
func (r Refusal) Message() string {
	return fmt.Sprintf("Crossplane's request is forbidden: User %q cannot %s resource %q in API group %q; grant it (%s). Until then kiso applies and deletes nothing, and retries every %s",
		r.User, r.Verb, r.Resource, r.Group, grantHint, RetryAfter)
}

// A RefusalVerdict is what the function does about refusals on this call.
type RefusalVerdict struct {
	// Refused is set when the function must stop and report it.
	Refused *Refusal
	// Report says the XR carries a Permitted condition from an earlier
	// refusal, which a normal render sets back to True.
	Report bool
}

// Check reads the observed XR: its Synced condition (Crossplane's last
// error) and its Permitted condition (the function's last verdict). now
// decides only when a standing refusal is retried.
func CheckRefusal(xr *resource.Composite, now time.Time) RefusalVerdict {
	permitted := Observed(xr, TypePermitted)
	// An absent condition reads as Unknown with no reason; every Permitted
	// condition written has one (the function's, or Crossplane's FatalError).
	known := permitted.Reason != ""
	if known && permitted.Status == corev1.ConditionFalse && permitted.Reason == ReasonForbidden {
		if now.Sub(permitted.LastTransitionTime.Time) >= RetryAfter {
			return RefusalVerdict{Report: true}
		}
		if r, ok := ParseRefusal(permitted.Message); ok {
			return RefusalVerdict{Refused: &r}
		}
	}
	synced := Observed(xr, xpv1.TypeSynced)
	if synced.Status == corev1.ConditionFalse {
		if r, ok := ParseRefusal(synced.Message); ok {
			return RefusalVerdict{Refused: &r}
		}
	}
	return RefusalVerdict{Report: known}
}

// Stop reports the refusal as a Fatal result, so Crossplane applies and
// deletes nothing, with a condition the claim shows.
func StopRefused(rsp *fnv1.RunFunctionResponse, r Refusal) {
	msg := r.Message()
	response.ConditionFalse(rsp, TypePermitted, ReasonForbidden).WithMessage(msg).TargetCompositeAndClaim()
	response.Fatal(rsp, errors.New(msg))
}

// Allowed sets the Permitted condition back to True after a refusal. If
// Crossplane is refused again on this call, it marks the condition Unknown
// and the next call reports the refusal.
func RefusalAllowed(rsp *fnv1.RunFunctionResponse) {
	response.ConditionTrue(rsp, TypePermitted, ReasonAllowed).TargetCompositeAndClaim()
}

// Apply checks the observed XR and reports on rsp: it returns true when the
// function must stop (a Fatal result and the condition are set), and sets
// Permitted back to True when an earlier refusal is being retried.
func ApplyRefusal(rsp *fnv1.RunFunctionResponse, xr *resource.Composite, now time.Time) (stop bool) {
	v := CheckRefusal(xr, now)
	switch {
	case v.Refused != nil:
		StopRefused(rsp, *v.Refused)
		return true
	case v.Report:
		RefusalAllowed(rsp)
	}
	return false
}
