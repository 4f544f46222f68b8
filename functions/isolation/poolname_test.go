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
		"ShortenedNameIsNoOnesWholeName": {
			reason: "a 60-character organization's shortened pool name must not be the whole name of the organization named like it",
			// kiso- + 49 a + -370f05a1 was both the cut name of the first and the whole name of the second.
			a: [2]string{strings.Repeat("a", 60), ""}, b: [2]string{strings.Repeat("a", 49) + "-370f05a1", ""},
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

// asWholeName reads a pool name as the whole, uncut name of a pair, and
// reports whether it is one.
func asWholeName(name string) (org, stack string, ok bool) {
	rest, found := strings.CutPrefix(name, poolNamePrefix+"-")
	if !found {
		return "", "", false
	}
	org, stack, _ = strings.Cut(rest, ".")
	if len(validation.IsDNS1123Label(org)) > 0 || strings.Contains(stack, ".") || stack != "" && len(validation.IsDNS1123Label(stack)) > 0 {
		return "", "", false
	}
	return org, stack, true
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
// name is both), two different pairs never share it, and no pair's name is
// the whole name of another pair: a name read as kiso-<o>[.<s>] is o and s'
// own (a shortened name taken by an organization named like it would let
// one tenant deny another its pool).
func FuzzPoolName(f *testing.F) {
	f.Add("acme", "web-x", "acme-web", "x")
	f.Add("acme", "", "acme", "web")
	f.Add(strings.Repeat("a", 63), strings.Repeat("b", 63), strings.Repeat("a", 63), strings.Repeat("b", 62))
	f.Add(strings.Repeat("a", 60), "", "x", "")
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
		for _, p := range [][3]string{{n1, org1, stack1}, {n2, org2, stack2}} {
			if o, st, whole := asWholeName(p[0]); whole && (o != p[1] || st != p[2]) {
				t.Fatalf("pool name %q of (%q, %q) is the whole pool name of (%q, %q)", p[0], p[1], p[2], o, st)
			}
		}
		if n1 == n2 && (org1 != org2 || stack1 != stack2) {
			t.Fatalf("(%q, %q) and (%q, %q) share the pool name %q", org1, stack1, org2, stack2, n1)
		}
	})
}
