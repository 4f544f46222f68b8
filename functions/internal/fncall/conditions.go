// These are the conditions both functions report on their XR
// (and, for a claimable XR, its claim): whether the spec can be rendered as
// written, and whether every name the XR composes is free.

package fncall

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/response"
)

// Condition types.
const (
	// TypeSpecValid is False when the spec cannot be rendered as written.
	TypeSpecValid = "SpecValid"
	// TypeNamesAvailable is False when an object kiso did not create holds a
	// name one of the XR's composed resources needs.
	TypeNamesAvailable = "NamesAvailable"
)

// Condition reasons.
const (
	ReasonValid        = "Valid"
	ReasonInvalidSpec  = "InvalidSpec"
	ReasonAvailable    = "Available"
	ReasonNameConflict = "NameConflict"
)

// A Target is where a condition goes: the XR only, or the XR and its claim.
type Target int

// Targets.
const (
	Composite Target = iota
	CompositeAndClaim
)

func (t Target) set(c *response.ConditionOption) {
	if t == CompositeAndClaim {
		c.TargetCompositeAndClaim()
		return
	}
	c.TargetComposite()
}

// InvalidSpec reports spec errors, each naming its field, as a False
// SpecValid condition and a Fatal result. A Fatal result stops Crossplane
// before it applies or deletes anything, so nothing composed is lost to a
// typo.
func InvalidSpec(rsp *fnv1.RunFunctionResponse, errs field.ErrorList, to Target) {
	msg := errs.ToAggregate().Error()
	to.set(response.ConditionFalse(rsp, TypeSpecValid, ReasonInvalidSpec).WithMessage(msg))
	response.Fatal(rsp, errors.New(msg))
}

// SpecValid reports that the spec was rendered.
func SpecValid(rsp *fnv1.RunFunctionResponse, to Target) {
	to.set(response.ConditionTrue(rsp, TypeSpecValid, ReasonValid))
}

// NameConflicts reports objects kiso did not create that hold names the XR
// needs, as a False NamesAvailable condition and a Fatal result: kiso never
// adopts them.
func NameConflicts(rsp *fnv1.RunFunctionResponse, conflicts []string, to Target) {
	msg := strings.Join(conflicts, "; ")
	to.set(response.ConditionFalse(rsp, TypeNamesAvailable, ReasonNameConflict).WithMessage(msg))
	response.Fatal(rsp, errors.New(msg))
}

// NamesAvailable reports that no other object holds a name the XR needs.
func NamesAvailable(rsp *fnv1.RunFunctionResponse, to Target) {
	to.set(response.ConditionTrue(rsp, TypeNamesAvailable, ReasonAvailable))
}
