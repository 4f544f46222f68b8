// RequeueAfter says how soon Crossplane reconciles an XR again when
// nothing about it changes.
//
// Crossplane v2 reconciles an XR at once when the XR, an object it composes
// or an object its function requires changes (realtime composition watches
// all three), and otherwise only when the TTL of the function's response has
// passed. So the TTL is not how kiso notices a change: it is the backstop for
// an event Crossplane dropped (its per-XR circuit breaker drops events while
// an XR receives too many), and it is the idle cost, since every XR is
// reconciled once per TTL: a function call and an apply of every object it
// composes. An XR that waits on nothing gets a long TTL, one that waits on
// something outside its spec a short one, and so does an XR whose events
// Crossplane is dropping now.

package fncall

import (
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	corev1 "k8s.io/api/core/v1"

	xpv1 "github.com/crossplane/crossplane/apis/v2/core/v2"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
)

const (
	// TTLSettled is the TTL of an XR that waits on nothing: everything it
	// composes is observed and Ready and nothing is being replaced. A fleet
	// of 1,000 idle organizations costs one reconcile each per hour, as
	// Crossplane's own resync of every object would anyway.
	TTLSettled = time.Hour
	// TTLSettling is the TTL of an XR that waits on something (an object not
	// yet observed or Ready, pools being replaced, a reference not found):
	// an event dropped meanwhile delays it by a minute at most.
	TTLSettling = time.Minute
	// TTLDropping is the TTL of an XR whose events Crossplane's circuit breaker
	// is dropping: it lets one event through every 30 seconds and drops the
	// rest, so a change that arrives within 30 seconds of the last event it
	// let through (a namespace labelled right after a pool switch) would
	// otherwise wait for the TTL. Under 30 seconds (Crossplane adds up to 10%
	// jitter), so such a change reaches the XR as soon as a let-through event
	// would have, and two in a row (the Role, then the grant it enables)
	// within a minute. It costs a call every 25 seconds only while the
	// breaker is open: minutes after a burst.
	TTLDropping = 25 * time.Second

	// breakerWindow is how long after Crossplane's breaker opens for an XR
	// it may drop the XR's events: it stays open five minutes, then closes
	// at the XR's next event, which it still drops if that comes within 30
	// seconds of the last one it let through. Past the window the XR's
	// Responsive condition may stay False for as long as no event comes (only
	// an event closes the breaker), but the next event passes: a settled XR
	// then waits for the hour again, instead of being called every 25
	// seconds for as long as it stays quiet.
	breakerWindow = 5*time.Minute + 30*time.Second

	// watchWindow is how long after an XR's Ready condition changed it is
	// not yet trusted to hear every event. Crossplane starts the watches an
	// XR needs when it reconciles it, and once a minute stops those of kinds
	// no XR depended on when it looked: a kind no XR needed a moment before
	// (the first organization, the first dedicated one, a fleet emptied and
	// refilled) can have its watch stopped just after the XR that now needs
	// it started it, within seconds of that XR's first reconcile, before it
	// is Ready. Crossplane restarts it at that XR's next reconcile (realtime
	// composition disables its own poll), so an XR Ready for less than this
	// is reconciled once more a minute later before it waits for the hour.
	// Under a minute, so that later reconcile (a minute, less Crossplane's
	// 10% jitter) asks for the hour.
	watchWindow = 50 * time.Second

	// typeResponsive is the condition Crossplane sets on an XR: False while
	// its watch circuit breaker is open, that is while it lets through only
	// one of the XR's events every 30 seconds, for minutes after a burst.
	typeResponsive xpv1.ConditionType = "Responsive"
)

// After sets how soon Crossplane reconciles the XR again if nothing changes:
// TTLDropping while Crossplane may drop the XR's events (whatever it waits
// on), else TTLSettled if settled and Ready for watchWindow, and TTLSettling if not. A change Crossplane drops
// while the breaker is open (a namespace the platform labels right after a
// mode switch) is then picked up within 30 seconds, not an hour.
func RequeueAfter(rsp *fnv1.RunFunctionResponse, xr *resource.Composite, settled bool) {
	after(rsp, xr, settled, time.Now())
}

func after(rsp *fnv1.RunFunctionResponse, xr *resource.Composite, settled bool, now time.Time) {
	ttl := TTLSettling
	switch {
	case droppingEvents(Observed(xr, typeResponsive), now):
		ttl = TTLDropping
	case settled && !readyChangedWithin(xr, watchWindow, now):
		ttl = TTLSettled
	}
	if rsp.GetMeta() == nil {
		rsp.Meta = &fnv1.ResponseMeta{}
	}
	rsp.GetMeta().Ttl = durationpb.New(ttl)
}

// readyChangedWithin reports whether the XR's Ready condition changed less
// than window ago, or Crossplane has not reported it yet (a new XR).
func readyChangedWithin(xr *resource.Composite, window time.Duration, now time.Time) bool {
	return transitionedWithin(Observed(xr, xpv1.TypeReady), window, now)
}

// transitionedWithin reports whether the condition last changed status less than window ago, or has no
// transition time (not reported yet).
func transitionedWithin(c xpv1.Condition, window time.Duration, now time.Time) bool {
	return c.LastTransitionTime.IsZero() || now.Sub(c.LastTransitionTime.Time) < window
}

// droppingEvents reports whether Crossplane may be dropping the XR's events
// now: its Responsive condition turned False (the breaker opened) less than
// breakerWindow ago. Crossplane keeps the condition's transition time while
// it stays False.
func droppingEvents(responsive xpv1.Condition, now time.Time) bool {
	if responsive.Status != corev1.ConditionFalse {
		return false
	}
	return transitionedWithin(responsive, breakerWindow, now)
}
