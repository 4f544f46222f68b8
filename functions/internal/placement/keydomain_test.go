package placement

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestValidateKeyDomain(t *testing.T) {
	path := field.NewPath("input", "keyDomain")
	for domain, wantType := range map[string]field.ErrorType{
		DefaultKeyDomain:        "",
		"platform.example.com":  "",
		"kubernetes.io":         field.ErrorTypeForbidden,
		"node.kubernetes.io":    field.ErrorTypeForbidden,
		"karpenter.sh":          field.ErrorTypeForbidden,
		"x.karpenter.k8s.aws":   field.ErrorTypeForbidden,
		"k8s.io":                field.ErrorTypeForbidden,
		"notkubernetes.io":      "",
		"Kiso.Dev":              field.ErrorTypeInvalid,
		"":                      field.ErrorTypeInvalid,
		"kiso.dev/organization": field.ErrorTypeInvalid,
		"-leading.example.com":  field.ErrorTypeInvalid,
	} {
		errs := ValidateKeyDomain(path, domain)
		if wantType == "" {
			if len(errs) != 0 {
				t.Errorf("%q: refused: %v", domain, errs.ToAggregate())
			}
			continue
		}
		if len(errs) == 0 {
			t.Errorf("%q: accepted, want %s", domain, wantType)
			continue
		}
		for _, e := range errs {
			if e.Type != wantType || e.Field != "input.keyDomain" {
				t.Errorf("%q: %s on %s, want %s on input.keyDomain", domain, e.Type, e.Field, wantType)
			}
		}
	}
}

// FuzzDomainOfNodeOrganizationLabel: the domain read back from an organization's node label is the one the keys
// were made in.
func FuzzDomainOfNodeOrganizationLabel(f *testing.F) {
	for _, d := range []string{"kiso.dev", "formance.com", "a", "node-restriction.kubernetes.io", "x.organization"} {
		f.Add(d)
	}
	f.Fuzz(func(t *testing.T, domain string) {
		keys := NewKeys(domain)
		got, ok := DomainOfNodeOrganizationLabel(keys.NodeOrganization)
		if ok != (domain != "") || (ok && got != domain) {
			t.Errorf("DomainOfNodeOrganizationLabel(%q) = %q, %v; want %q", keys.NodeOrganization, got, ok, domain)
		}
	})
}
