package main

import (
	"strings"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/aws"
)

// Service principals that assume kiso's roles.
const (
	// podIdentityPrincipal is EKS Pod Identity's agent, the same name in
	// every partition.
	podIdentityPrincipal = "pods.eks.amazonaws.com"
	// irsaAudience is the audience EKS's pod identity webhook puts in the
	// projected service account token.
	irsaAudience = "sts.amazonaws.com"
)

// controllerTrust is the controller role's trust policy for its identity
// mode: Pod Identity (sts:AssumeRole and sts:TagSession from EKS's agent) or
// IRSA (web identity from the cluster's OIDC provider, for the controller's
// service account only).
func controllerTrust(spec v1alpha1.XKarpenterClusterSpec) aws.PolicyDocument {
	if spec.Controller.Identity == v1alpha1.IdentityIRSA {
		issuer := oidcIssuer(spec.Controller.OIDCProviderARN)
		return aws.PolicyDocument{Version: aws.PolicyVersion, Statement: []aws.Statement{{
			Effect:    aws.Allow,
			Principal: &aws.Principal{Federated: spec.Controller.OIDCProviderARN},
			Action:    aws.Values{"sts:AssumeRoleWithWebIdentity"},
			Condition: aws.Condition{"StringEquals": {
				issuer + ":aud": {irsaAudience},
				issuer + ":sub": {"system:serviceaccount:" + spec.Karpenter.Namespace + ":" + spec.Karpenter.ServiceAccount},
			}},
		}}}
	}
	return aws.PolicyDocument{Version: aws.PolicyVersion, Statement: []aws.Statement{{
		Effect:    aws.Allow,
		Principal: &aws.Principal{Service: aws.Values{podIdentityPrincipal}},
		Action:    aws.Values{"sts:AssumeRole", "sts:TagSession"},
	}}}
}

// oidcIssuer is the issuer of an IAM OIDC provider ARN, the part after
// "oidc-provider/", which prefixes IRSA's condition keys.
func oidcIssuer(providerARN string) string {
	_, issuer, _ := strings.Cut(providerARN, ":oidc-provider/")
	return issuer
}
