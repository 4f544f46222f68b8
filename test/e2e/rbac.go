package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// rbacExample is the ClusterRole kiso's README tells a platform team to apply: what Crossplane needs, beyond
// what its chart and RBAC manager grant, to compose Karpenter's kinds and the rest of what kiso renders.
const rbacExample = "examples/rbac/crossplane-karpenter.yaml"

// providersRole stands in for the ClusterRole Crossplane's RBAC manager makes for an installed provider
// package, aggregated into Crossplane's: the providers do not run here, only their CRDs are applied.
const providersRole = "crossplane:provider:provider-aws-e2e:aggregate-to-crossplane"

// aggregateToCrossplane is the label by which Crossplane's ClusterRole takes in a role's rules.
const aggregateToCrossplane = "rbac.crossplane.io/aggregate-to-crossplane"

// grantCrossplane applies kiso's RBAC example, as a platform team installing kiso does, and the stand-in for
// the providers' roles.
func grantCrossplane(ctx context.Context, kubectl *Kubectl, p *prepared, source string) error {
	example, err := os.ReadFile(filepath.Join(source, filepath.FromSlash(rbacExample)))
	if err != nil {
		return fmt.Errorf("cannot read %s: %w", rbacExample, err)
	}
	if err := kubectl.Apply(ctx, example); err != nil {
		return fmt.Errorf("cannot apply %s: %w", rbacExample, err)
	}
	role, err := providerRole(providersRole, p.ProviderAWSCRDFiles)
	if err != nil {
		return err
	}
	if err := kubectl.Apply(ctx, role); err != nil {
		return fmt.Errorf("cannot apply ClusterRole %s: %w", providersRole, err)
	}
	return nil
}

// providerRole grants every verb on the kinds of the given CRDs and their status, as the RBAC manager grants
// Crossplane a provider's managed resource kinds, in a ClusterRole aggregated into Crossplane's.
func providerRole(name string, crdFiles []string) ([]byte, error) {
	rules, err := crdRules(crdFiles, []string{rbacv1.VerbAll})
	if err != nil {
		return nil, err
	}
	role := rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{aggregateToCrossplane: "true"}},
		Rules:      rules,
	}
	out, err := yaml.Marshal(role)
	if err != nil {
		return nil, fmt.Errorf("cannot encode ClusterRole %s: %w", name, err)
	}
	return out, nil
}

// crdRules grants verbs on the kinds of the given CRDs and their status, one rule per API group.
func crdRules(crdFiles []string, verbs []string) ([]rbacv1.PolicyRule, error) {
	var rules []rbacv1.PolicyRule
	for _, f := range crdFiles {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("cannot read CRD %s: %w", f, err)
		}
		var crd struct {
			Spec struct {
				Group string `json:"group"`
				Names struct {
					Plural string `json:"plural"`
				} `json:"names"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(data, &crd); err != nil {
			return nil, fmt.Errorf("cannot decode CRD %s: %w", f, err)
		}
		plural := crd.Spec.Names.Plural
		i := slices.IndexFunc(rules, func(r rbacv1.PolicyRule) bool { return r.APIGroups[0] == crd.Spec.Group })
		if i < 0 {
			rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{crd.Spec.Group}, Verbs: verbs})
			i = len(rules) - 1
		}
		rules[i].Resources = append(rules[i].Resources, plural, plural+"/status")
	}
	return rules, nil
}
