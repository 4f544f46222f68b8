package main

// Keys are the label, taint and tag keys kiso owns, all in one domain.
type Keys struct {
	Domain       string
	Organization string
	Stack        string
	Customer     string
}

// NewKeys returns kiso's keys in the supplied domain.
func NewKeys(domain string) Keys {
	return Keys{
		Domain:       domain,
		Organization: domain + "/organization",
		Stack:        domain + "/stack",
		Customer:     domain + "/customer",
	}
}

// Managed returns every key kiso owns: on a cloned object these are the only
// keys kiso upserts or removes.
func (k Keys) Managed() []string {
	return []string{k.Organization, k.Stack, k.Customer}
}
