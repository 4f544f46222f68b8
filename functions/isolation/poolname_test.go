package main

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestPoolNamesNeverShared(t *testing.T) {
	cases := map[string]struct {
		reason string
		a, b   [2]string // organization, stack
	}{
		"HyphenInStackOrOrganization": {
			reason: "organization acme's stack web-x and organization acme-web's stack x must not share a pool name",
			a:      [2]string{"acme", "web-x"}, b: [2]string{"acme-web", "x"},
		},
		"StackPoolAndOrganizationPool": {
			reason: "a stack's pool never takes the name of another organization's shared pool",
			a:      [2]string{"acme", "web"}, b: [2]string{"acme-web", ""},
		},
		"LongNamesCutAtTheSamePlace": {
			reason: "two long names that share their first 54 characters still differ (hash of the whole name)",
			a:      [2]string{strings.Repeat("a", 50), strings.Repeat("b", 20)}, b: [2]string{strings.Repeat("a", 50), strings.Repeat("b", 21)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			a, b := poolName(tc.a[0], tc.a[1]), poolName(tc.b[0], tc.b[1])
			if a == b {
				t.Errorf("%s\npoolName(%q, %q) == poolName(%q, %q) == %q", tc.reason, tc.a[0], tc.a[1], tc.b[0], tc.b[1], a)
			}
		})
	}
}

func TestPoolNameIsStable(t *testing.T) {
	for _, tc := range []struct{ organization, stack, want string }{
		{"acme", "", "kiso-acme"},
		{"acme", "web", "kiso-acme.web"},
		{"acme-web", "x", "kiso-acme-web.x"},
	} {
		if got := poolName(tc.organization, tc.stack); got != tc.want {
			t.Errorf("poolName(%q, %q): want %q, got %q", tc.organization, tc.stack, tc.want, got)
		}
	}
}

// FuzzPoolName checks what a pool name promises for any valid organization
// and stack: it fits a label value and a DNS-1123 subdomain (a NodePool's
// name is both), and two different pairs never share it.
func FuzzPoolName(f *testing.F) {
	f.Add("acme", "web-x", "acme-web", "x")
	f.Add("acme", "", "acme", "web")
	f.Add(strings.Repeat("a", 63), strings.Repeat("b", 63), strings.Repeat("a", 63), strings.Repeat("b", 62))
	f.Fuzz(func(t *testing.T, org1, stack1, org2, stack2 string) {
		valid := func(org, stack string) bool {
			return len(validation.IsDNS1123Label(org)) == 0 && (stack == "" || len(validation.IsDNS1123Label(stack)) == 0)
		}
		if !valid(org1, stack1) || !valid(org2, stack2) {
			t.Skip()
		}
		n1, n2 := poolName(org1, stack1), poolName(org2, stack2)
		for _, n := range []string{n1, n2} {
			if errs := validation.IsValidLabelValue(n); len(errs) > 0 {
				t.Fatalf("pool name %q is not a label value: %v", n, errs)
			}
			if errs := validation.IsDNS1123Subdomain(n); len(errs) > 0 {
				t.Fatalf("pool name %q is not a DNS-1123 subdomain: %v", n, errs)
			}
		}
		if n1 == n2 && (org1 != org2 || stack1 != stack2) {
			t.Fatalf("(%q, %q) and (%q, %q) share the pool name %q", org1, stack1, org2, stack2, n1)
		}
	})
}
