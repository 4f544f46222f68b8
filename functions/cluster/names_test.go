package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation"
)

func TestAWSNames(t *testing.T) {
	cases := map[string]struct {
		reason  string
		cluster string
		want    map[string]string
	}{
		"AWSsOwnNames": {
			reason:  "A short cluster name gives exactly the names of AWS's template and eksctl.",
			cluster: "prod",
			want: map[string]string{
				"controllerRole": "prod-karpenter", "nodeRole": "KarpenterNodeRole-prod",
				"policy": "KarpenterControllerResourceDiscoveryPolicy-prod", "rule": "prod-capacity-reservation-interruption",
			},
		},
		"CaseAndUnderscoreKept": {
			reason:  "AWS names keep the cluster name as it is; only Kubernetes names are lowered.",
			cluster: "Prod_EU",
			want: map[string]string{
				"controllerRole": "Prod_EU-karpenter", "nodeRole": "KarpenterNodeRole-Prod_EU",
				"policy": "KarpenterControllerResourceDiscoveryPolicy-Prod_EU", "rule": "Prod_EU-capacity-reservation-interruption",
			},
		},
		"LongNamesAreHashed": {
			reason:  "An 80-character cluster name (the longest a queue allows) overflows role and rule names: they are cut and end in the first 8 hex digits of the full name's SHA-256.",
			cluster: strings.Repeat("c", 80),
			want: map[string]string{
				"controllerRole": strings.Repeat("c", 55) + "-e53ea24b",
				"nodeRole":       "KarpenterNodeRole-" + strings.Repeat("c", 37) + "-54ba256c",
				"policy":         "KarpenterControllerResourceDiscoveryPolicy-" + strings.Repeat("c", 80),
				"rule":           strings.Repeat("c", 55) + "-d6d9e267",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := map[string]string{
				"controllerRole": controllerRoleName(tc.cluster),
				"nodeRole":       nodeRoleName(tc.cluster),
				"policy":         policyName(managedPolicy{Name: "ResourceDiscovery"}, tc.cluster),
				"rule":           ruleName(tc.cluster, rules[4]),
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestObjectNamesAreDNSAndDistinct(t *testing.T) {
	for _, cluster := range []string{"prod", "Prod_EU", strings.Repeat("C", 80)} {
		spec := validSpec()
		spec.ClusterName = cluster
		objects, err := render(newPlan(spec))
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]string{}
		for name, o := range objects {
			u := o.(interface {
				GetName() string
			})
			n := u.GetName()
			for _, msg := range validation.IsDNS1123Subdomain(n) {
				t.Errorf("cluster %q, %s: name %q: %s", cluster, name, n, msg)
			}
			if len(n) > maxObjectName {
				t.Errorf("cluster %q, %s: name %q is longer than %d", cluster, name, n, maxObjectName)
			}
			// Names need only be unique per kind; the Go type stands for it.
			kind := fmt.Sprintf("%T", o)
			if other, dup := seen[kind+"/"+n]; dup {
				t.Errorf("cluster %q: %s and %s are both %s %q", cluster, other, name, kind, n)
			}
			seen[kind+"/"+n] = string(name)
		}
	}
}

func TestObjectNamesOfClustersDifferingInCaseDiffer(t *testing.T) {
	a, b := validSpec(), validSpec()
	a.ClusterName, b.ClusterName = "prod", "Prod"
	if pa, pb := newPlan(a).objectName("controller"), newPlan(b).objectName("controller"); pa == pb {
		t.Errorf("clusters prod and Prod share the object name %q", pa)
	}
}
