package placement

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// reservedKeyDomains are label domains Karpenter's CRDs reserve for itself, or that would let kiso's keys (and
// a tenant's pod selecting them) pass as Kubernetes' own.
var reservedKeyDomains = []string{"karpenter.sh", "karpenter.k8s.aws", "kubernetes.io", "k8s.io"}

// ValidateKeyDomain checks a function input's key domain: a DNS subdomain, as a label key's prefix must be,
// outside the reserved domains. Both functions check it the same way, since the isolation function writes the
// keys the cluster function's policies read.
func ValidateKeyDomain(path *field.Path, domain string) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(domain) {
		errs = append(errs, field.Invalid(path, domain, msg))
	}
	if len(domain) > MaxKeyDomainLength {
		errs = append(errs, field.TooLong(path, domain, MaxKeyDomainLength))
	}
	for _, d := range reservedKeyDomains {
		if domain == d || strings.HasSuffix(domain, "."+d) {
			errs = append(errs, field.Forbidden(path, "the "+d+" domain is reserved"))
		}
	}
	return errs
}
