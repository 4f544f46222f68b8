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
		reason string
		names  awsNames
		want   map[string]string
	}{
		"KisosOwnNames": {
			reason: "By default every name starts with kiso-<cluster>: none is a name AWS's template or eksctl gives, so kiso never adopts their setup.",
			names:  awsNames{prefix: defaultNamePrefix("prod"), cluster: "prod"},
			want: map[string]string{
				"controllerRole": "kiso-prod-karpenter-controller", "nodeRole": "kiso-prod-karpenter-node",
				"policy": "kiso-prod-karpenter-resource-discovery", "queue": "kiso-prod-karpenter-interruption",
				"rule": "kiso-prod-karpenter-capacity-reservation-interruption",
			},
		},
		"PrefixForABoundary": {
			reason: "A boundary that scopes queues and rules to <cluster>-* is met with the cluster name as prefix.",
			names:  awsNames{prefix: "socle-sbx-53", cluster: "socle-sbx-53"},
			want: map[string]string{
				"controllerRole": "socle-sbx-53-karpenter-controller", "nodeRole": "socle-sbx-53-karpenter-node",
				"policy": "socle-sbx-53-karpenter-resource-discovery", "queue": "socle-sbx-53-karpenter-interruption",
				"rule": "socle-sbx-53-karpenter-capacity-reservation-interruption",
			},
		},
		"TakeOverUsesAWSsNames": {
			reason: "Taking over AWS's getting-started setup names what it created exactly as it did; rules, which the template leaves to CloudFormation, keep kiso's names.",
			names:  awsNames{prefix: defaultNamePrefix("Prod_EU"), cluster: "Prod_EU", takeOver: true},
			want: map[string]string{
				"controllerRole": "Prod_EU-karpenter", "nodeRole": "KarpenterNodeRole-Prod_EU",
				"policy": "KarpenterControllerResourceDiscoveryPolicy-Prod_EU", "queue": "Prod_EU",
				"rule": "kiso-Prod_EU-karpenter-capacity-reservation-interruption",
			},
		},
		"LongNamesAreHashed": {
			reason: "A 100-character cluster name overflows role, queue and rule names: they are cut and end in the first 8 hex digits of the full name's SHA-256.",
			names:  awsNames{prefix: defaultNamePrefix(strings.Repeat("c", 100)), cluster: strings.Repeat("c", 100)},
			want: map[string]string{
				"controllerRole": "kiso-" + strings.Repeat("c", 50) + "-bfca053e",
				"nodeRole":       "kiso-" + strings.Repeat("c", 50) + "-d37615a8",
				"policy":         "kiso-" + strings.Repeat("c", 100) + "-karpenter-res-e78f7e8b",
				"queue":          "kiso-" + strings.Repeat("c", 66) + "-aff4b67e",
				"rule":           "kiso-" + strings.Repeat("c", 50) + "-7179529d",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := map[string]string{
				"controllerRole": tc.names.controllerRole(),
				"nodeRole":       tc.names.nodeRole(),
				"policy":         tc.names.policy(managedPolicy{Key: "resource-discovery", Name: "ResourceDiscovery"}),
				"queue":          tc.names.queue(),
				"rule":           tc.names.rule(rules[4]),
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
