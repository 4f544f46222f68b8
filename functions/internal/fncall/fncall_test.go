package fncall

import (
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
)

type input struct{ Domain string }

type spec struct {
	Organization string `json:"organization"`
}

func request() *fnv1.RunFunctionRequest {
	return &fnv1.RunFunctionRequest{Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: resource.MustStructJSON(
		`{"apiVersion":"kiso.dev/v1alpha1","kind":"XKarpenterIsolation","metadata":{"name":"acme"},"spec":{"organization":"acme"}}`)}}}
}

func reader(inputErr, specErr error) Reader[input, spec] {
	return Reader[input, spec]{
		Input: func(*fnv1.RunFunctionRequest) (input, error) { return input{Domain: "kiso.dev"}, inputErr },
		Spec: func(xr *resource.Composite) (spec, error) {
			name, _ := xr.Resource.GetString("spec.organization")
			return spec{Organization: name}, specErr
		},
		To: CompositeAndClaim,
	}
}

func fatal(rsp *fnv1.RunFunctionResponse) string {
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
			return r.GetMessage()
		}
	}
	return ""
}

// Begin reads the input, the state and the spec, and stops the call with a Fatal result naming what it could
// not read.
func TestBeginReadsOrStops(t *testing.T) {
	c, ok := Begin(request(), logging.NewNopLogger(), reader(nil, nil))
	if !ok || c.In.Domain != "kiso.dev" || c.Spec.Organization != "acme" || c.ObservedXR.Resource.GetName() != "acme" || fatal(c.Rsp) != "" {
		t.Fatalf("Begin: ok=%v in=%+v spec=%+v fatal=%q", ok, c.In, c.Spec, fatal(c.Rsp))
	}
	for name, r := range map[string]Reader[input, spec]{
		"invalid function input": reader(errors.New("bad input"), nil),
		"bad spec":               reader(nil, errors.New("bad spec")),
	} {
		c, ok := Begin(request(), logging.NewNopLogger(), r)
		if ok || fatal(c.Rsp) == "" {
			t.Errorf("%s: Begin went on (ok=%v, fatal %q)", name, ok, fatal(c.Rsp))
		}
	}
}

// Valid stops the call on spec errors with a Fatal result and a False SpecValid condition on the XR and claim.
func TestValidStopsOnSpecErrors(t *testing.T) {
	c, _ := Begin(request(), logging.NewNopLogger(), reader(nil, nil))
	if !c.Valid(nil) || fatal(c.Rsp) != "" {
		t.Fatal("Valid(nil) stopped the call")
	}
	if c.Valid(field.ErrorList{field.Invalid(field.NewPath("spec", "organization"), "Acme", "must be lower case")}) {
		t.Fatal("Valid went on past an error")
	}
	conds := c.Rsp.GetConditions()
	if len(conds) != 1 || conds[0].GetType() != TypeSpecValid || conds[0].GetTarget() != fnv1.Target_TARGET_COMPOSITE_AND_CLAIM {
		t.Fatalf("conditions: %v", conds)
	}
}

// Respond returns what the call composed and the status it derived.
func TestRespondReturnsDesiredAndStatus(t *testing.T) {
	c, _ := Begin(request(), logging.NewNopLogger(), reader(nil, nil))
	cm := composed.New()
	cm.SetAPIVersion("v1")
	cm.SetKind("ConfigMap")
	cm.SetName("acme")
	c.Desired["lock"] = &resource.DesiredComposed{Resource: cm, Ready: resource.ReadyTrue}
	rsp, err := c.Respond(struct {
		Pools int `json:"pools"`
	}{Pools: 1})
	if err != nil || fatal(rsp) != "" {
		t.Fatalf("Respond: %v %q", err, fatal(rsp))
	}
	if got := rsp.GetDesired().GetResources()["lock"].GetResource().GetFields()["metadata"].GetStructValue().GetFields()["name"].GetStringValue(); got != "acme" {
		t.Errorf("desired lock named %q", got)
	}
	if got := rsp.GetDesired().GetComposite().GetResource().GetFields()["status"].GetStructValue().GetFields()["pools"].GetNumberValue(); got != 1 {
		t.Errorf("desired status pools %v", got)
	}
}
