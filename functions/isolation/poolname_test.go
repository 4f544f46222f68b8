package main

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

// owner is who a pool belongs to: an organization, its stack in stack isolation, its class of capacity.
type owner struct{ organization, stack, class string }

func (o owner) poolName() string { return poolName(o.organization, o.stack, o.class) }

func TestPoolNamesNeverShared(t *testing.T) {
	cases := map[string]struct {
		reason string
		a, b   owner
	}{
		"HyphenInStackOrOrganization": {
			reason: "organization acme's stack web-x and organization acme-web's stack x must not share a pool name",
			a:      owner{"acme", "web-x", ""}, b: owner{"acme-web", "x", ""},
		},
		"StackPoolAndOrganizationPool": {
			reason: "a stack's pool never takes the name of another organization's shared pool",
			a:      owner{"acme", "web", ""}, b: owner{"acme-web", "", ""},
		},
		"ShortenedNameIsNoOnesWholeName": {
			reason: "a 60-character organization's shortened pool name must not be the whole name of the organization named like it",
			// kiso- + 49 a + -370f05a1 was both the cut name of the first and the whole name of the second.
			a: owner{strings.Repeat("a", 60), "", ""}, b: owner{strings.Repeat("a", 49) + "-370f05a1", "", ""},
		},
		"LongNamesCutAtTheSamePlace": {
			reason: "two long names that share their first 54 characters still differ (hash of the whole name)",
			a:      owner{strings.Repeat("a", 50), strings.Repeat("b", 20), ""}, b: owner{strings.Repeat("a", 50), strings.Repeat("b", 21), ""},
		},
		"ClassPoolAndStackPool": {
			reason: "organization acme's pool of class gpu is not its stack gpu's pool",
			a:      owner{"acme", "", "gpu"}, b: owner{"acme", "gpu", ""},
		},
		"StackClassPoolAndClassPool": {
			reason: "stack web's pool of class gpu is not the organization's pool of a class named like them",
			a:      owner{"acme", "web", "gpu"}, b: owner{"acme", "", "web"},
		},
		"ClassPoolAndAnotherOrganizationsPool": {
			reason: "acme's pool of class gpu is never organization acme-gpu's pool",
			a:      owner{"acme", "", "gpu"}, b: owner{"acme-gpu", "", ""},
		},
		"StackAndClassSwapped": {
			reason: "stack web's class gpu and stack gpu's class web differ",
			a:      owner{"acme", "web", "gpu"}, b: owner{"acme", "gpu", "web"},
		},
		"LongClassNamesCutAtTheSamePlace": {
			reason: "two long class pool names that share their cut still differ (hash of the whole name)",
			a:      owner{strings.Repeat("a", 40), "web", strings.Repeat("c", 30)}, b: owner{strings.Repeat("a", 40), "web", strings.Repeat("c", 31)},
		},
		"ShortenedClassNameAndShortenedStackName": {
			reason: "a class pool and a stack pool cut to the same head still differ (hash of the whole name)",
			a:      owner{strings.Repeat("a", 60), "", "b"}, b: owner{strings.Repeat("a", 60), "b", ""},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			a, b := tc.a.poolName(), tc.b.poolName()
			if a == b {
				t.Errorf("%s\npoolName(%+v) == poolName(%+v) == %q", tc.reason, tc.a, tc.b, a)
			}
		})
	}
}

// asWholeName reads a pool name as the whole, uncut name of an owner, and reports whether it is one:
// kiso-<o>[.<s>] of the default class, kiso.<o>[.<s>].<c> of a class.
func asWholeName(name string) (owner, bool) {
	label := func(v string) bool { return len(validation.IsDNS1123Label(v)) == 0 }
	if rest, found := strings.CutPrefix(name, poolNamePrefix+"-"); found {
		org, stack, hasStack := strings.Cut(rest, ".")
		if !label(org) || hasStack && (!label(stack) || strings.Contains(stack, ".")) {
			return owner{}, false
		}
		return owner{org, stack, ""}, true
	}
	rest, found := strings.CutPrefix(name, poolNamePrefix+".")
	if !found {
		return owner{}, false
	}
	parts := strings.Split(rest, ".")
	for _, p := range parts {
		if !label(p) {
			return owner{}, false
		}
	}
	switch len(parts) {
	case 2:
		return owner{parts[0], "", parts[1]}, true
	case 3:
		return owner{parts[0], parts[1], parts[2]}, true
	}
	return owner{}, false
}

func TestPoolNameIsStable(t *testing.T) {
	for _, tc := range []struct {
		owner owner
		want  string
	}{
		{owner{"acme", "", ""}, "kiso-acme"},
		{owner{"acme", "web", ""}, "kiso-acme.web"},
		{owner{"acme-web", "x", ""}, "kiso-acme-web.x"},
		{owner{"acme", "", "gpu"}, "kiso.acme.gpu"},
		{owner{"acme", "web", "gpu"}, "kiso.acme.web.gpu"},
	} {
		if got := tc.owner.poolName(); got != tc.want {
			t.Errorf("poolName(%+v): want %q, got %q", tc.owner, tc.want, got)
		}
	}
}

// FuzzPoolName checks what a pool name promises for any valid organization,
// stack and class: it fits a label value and a DNS-1123 subdomain (a
// NodePool's name is both), two different owners never share it, and no
// owner's name is the whole name of another: a name read as kiso-<o>[.<s>]
// or kiso.<o>[.<s>].<c> is o's, s' and c's own (a shortened name taken by
// an organization named like it would let one tenant deny another its pool).
func FuzzPoolName(f *testing.F) {
	f.Add("acme", "web-x", "", "acme-web", "x", "")
	f.Add("acme", "", "", "acme", "web", "")
	f.Add(strings.Repeat("a", 63), strings.Repeat("b", 63), "", strings.Repeat("a", 63), strings.Repeat("b", 62), "")
	f.Add(strings.Repeat("a", 60), "", "", "x", "", "")
	f.Add("acme", "", "gpu", "acme", "gpu", "")
	f.Add("acme", "web", "gpu", "acme", "gpu", "web")
	f.Add(strings.Repeat("a", 63), strings.Repeat("b", 63), strings.Repeat("c", 63), strings.Repeat("a", 63), strings.Repeat("b", 63), strings.Repeat("c", 62))
	f.Fuzz(func(t *testing.T, org1, stack1, class1, org2, stack2, class2 string) {
		valid := func(o owner) bool {
			label := func(v string) bool { return v == "" || len(validation.IsDNS1123Label(v)) == 0 }
			return o.organization != "" && label(o.organization) && label(o.stack) && label(o.class)
		}
		o1, o2 := owner{org1, stack1, class1}, owner{org2, stack2, class2}
		if !valid(o1) || !valid(o2) {
			t.Skip()
		}
		n1, n2 := o1.poolName(), o2.poolName()
		for _, n := range []string{n1, n2} {
			if errs := validation.IsValidLabelValue(n); len(errs) > 0 {
				t.Fatalf("pool name %q is not a label value: %v", n, errs)
			}
			if errs := validation.IsDNS1123Subdomain(n); len(errs) > 0 {
				t.Fatalf("pool name %q is not a DNS-1123 subdomain: %v", n, errs)
			}
		}
		for _, p := range []struct {
			name  string
			owner owner
		}{{n1, o1}, {n2, o2}} {
			if o, whole := asWholeName(p.name); whole && o != p.owner {
				t.Fatalf("pool name %q of %+v is the whole pool name of %+v", p.name, p.owner, o)
			}
		}
		if n1 == n2 && o1 != o2 {
			t.Fatalf("%+v and %+v share the pool name %q", o1, o2, n1)
		}
	})
}
