package main

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/aws"
	"github.com/kiso-dev/kiso/functions/internal/placement"
)

// AWS's rules for the values a spec names, checked here so a bad value fails
// on the XR, naming its field, rather than as an error on a managed resource.
var (
	// An EKS cluster name: 1-100 characters, starting with a letter or digit.
	clusterNamePattern = regexp.MustCompile(v1alpha1.PatternXKarpenterClusterSpecClusterName)
	regionPattern      = regexp.MustCompile(v1alpha1.PatternXKarpenterClusterSpecRegion)
	accountPattern     = regexp.MustCompile(v1alpha1.PatternXKarpenterClusterSpecAccountID)
	// IAM names (roles, instance profiles) hold these characters.
	iamNamePattern = regexp.MustCompile(`^[\w+=,.@-]+$`)
	// arn:<partition>:iam::<account>:<resource>, capturing the three.
	iamARNPattern = regexp.MustCompile(`^arn:([a-z-]+):iam::([0-9]{12}|aws):(.+)$`)
	// IAM resources: role/<path><name>, policy/<path><name>, oidc-provider/<issuer>.
	roleResource   = regexp.MustCompile(`^role/(/?[\x21-\x7E]+/)?[\w+=,.@-]{1,64}$`)
	policyResource = regexp.MustCompile(`^policy/(/?[\x21-\x7E]+/)?[\w+=,.@-]{1,128}$`)
	oidcResource   = regexp.MustCompile(`^oidc-provider/[^/\s]+(/[^/\s]+)*$`)
	// A name prefix starts IAM, SQS and EventBridge names: their common
	// characters. An IAM path is / or /<segment>/.../.
	namePrefixPattern = regexp.MustCompile(v1alpha1.PatternNamingPrefix)
	iamPathPattern    = regexp.MustCompile(v1alpha1.PatternNamingIAMPath)
)

// AWS's length limits on names the spec sets; a name prefix leaves room
// for the rest of the name before kiso shortens it with a hash.
const (
	maxClusterName         = v1alpha1.MaxLengthXKarpenterClusterSpecClusterName
	maxInstanceProfileName = v1alpha1.MaxLengthExistingInstanceProfileName
	maxNamePrefix          = v1alpha1.MaxLengthNamingPrefix
	maxIAMPath             = v1alpha1.MaxLengthNamingIAMPath
)

// validate stops the call on a spec with errors, each naming its field, and while the API server refuses
// Crossplane something this XR needs.
func (r *call) validate() bool {
	return r.Valid(validateSpec(r.Spec)) && !r.Refused()
}

// validateSpec returns every problem with the spec, each naming its field.
// The spec has had defaults applied.
func validateSpec(spec v1alpha1.XKarpenterClusterSpec) field.ErrorList {
	sp := field.NewPath("spec")
	var errs field.ErrorList

	errs = append(errs, validateClusterName(sp.Child("clusterName"), spec)...)

	partitionValid := slices.Contains(aws.Partitions, string(spec.Partition))
	if !partitionValid {
		errs = append(errs, field.NotSupported(sp.Child("partition"), spec.Partition, aws.Partitions))
	}
	switch {
	case spec.Region == "":
		errs = append(errs, field.Required(sp.Child("region"), ""))
	case !regionPattern.MatchString(spec.Region):
		errs = append(errs, field.Invalid(sp.Child("region"), spec.Region, "must be an AWS region, e.g. eu-west-3"))
	case partitionValid && aws.PartitionOfRegion(spec.Region) != spec.Partition:
		errs = append(errs, field.Invalid(sp.Child("region"), spec.Region,
			fmt.Sprintf("is in partition %s, not %s; set spec.partition to %s", aws.PartitionOfRegion(spec.Region), spec.Partition, aws.PartitionOfRegion(spec.Region))))
	}
	switch {
	case spec.AccountID == "":
		errs = append(errs, field.Required(sp.Child("accountId"), ""))
	case !accountPattern.MatchString(spec.AccountID):
		errs = append(errs, field.Invalid(sp.Child("accountId"), spec.AccountID, "must be 12 digits"))
	}

	for _, msg := range validation.IsDNS1123Subdomain(spec.ProviderConfigName) {
		errs = append(errs, field.Invalid(sp.Child("providerConfigName"), spec.ProviderConfigName, msg))
	}
	errs = append(errs, validateTags(sp.Child("tags"), spec.Tags)...)

	for _, msg := range validation.IsDNS1123Label(spec.Karpenter.Namespace) {
		errs = append(errs, field.Invalid(sp.Child("karpenter", "namespace"), spec.Karpenter.Namespace, msg))
	}
	for _, msg := range validation.IsDNS1123Subdomain(spec.Karpenter.ServiceAccount) {
		errs = append(errs, field.Invalid(sp.Child("karpenter", "serviceAccount"), spec.Karpenter.ServiceAccount, msg))
	}

	if wc := spec.WorkloadCluster; wc != nil {
		// It starts the names of the Objects that carry every Kubernetes object into the workload cluster.
		for _, msg := range validation.IsDNS1123Label(wc.ProviderConfigName) {
			errs = append(errs, field.Invalid(sp.Child("workloadCluster", "providerConfigName"), wc.ProviderConfigName, msg))
		}
	}
	errs = append(errs, validateController(sp.Child("controller"), spec)...)
	if ex := spec.NodeRole.ExistingInstanceProfile; ex != nil {
		errs = append(errs, validateExistingInstanceProfile(sp.Child("nodeRole", "existingInstanceProfile"), *ex, spec)...)
	}
	if b := spec.PermissionsBoundary; b != "" {
		errs = append(errs, validateIAMARN(sp.Child("permissionsBoundary"), b, managedPolicyARN, spec)...)
		errs = append(errs, validateBoundaryOutsideKiso(sp.Child("permissionsBoundary"), b, spec)...)
	}
	errs = append(errs, validateLabels(sp.Child("monitoring", "labels"), spec.Monitoring.Labels)...)
	errs = append(errs, validateNaming(sp.Child("naming"), spec.Naming)...)
	errs = append(errs, validateRollout(sp.Child("rollout"), spec.Rollout)...)
	return errs
}

// validateNaming checks the name prefix and IAM path: AWS's rules for the
// names and paths they start, and that a take-over keeps AWS's own.
func validateNaming(path *field.Path, n v1alpha1.Naming) field.ErrorList {
	var errs field.ErrorList
	if n.Prefix != "" {
		switch {
		case len(n.Prefix) > maxNamePrefix:
			errs = append(errs, field.TooLong(path.Child("prefix"), n.Prefix, maxNamePrefix))
		case !namePrefixPattern.MatchString(n.Prefix):
			errs = append(errs, field.Invalid(path.Child("prefix"), n.Prefix, "must start with a letter or digit and hold only letters, digits, '-' and '_': it starts IAM, SQS and EventBridge names"))
		}
	}
	if n.IAMPath != "" {
		switch {
		case len(n.IAMPath) > maxIAMPath:
			errs = append(errs, field.TooLong(path.Child("iamPath"), n.IAMPath, maxIAMPath))
		case !iamPathPattern.MatchString(n.IAMPath):
			errs = append(errs, field.Invalid(path.Child("iamPath"), n.IAMPath, "must be an IAM path: / or /<segment>/.../, segments of letters, digits and +=,.@_-"))
		}
	}
	switch n.TakeOver {
	case v1alpha1.TakeOverNone:
	case v1alpha1.TakeOverAWSGettingStarted:
		if n.IAMPath != "" {
			errs = append(errs, field.Forbidden(path.Child("iamPath"), "takeOver AWSGettingStarted uses AWS's names and the path / for what it takes over; iamPath is only for kiso's own names"))
		}
	default:
		errs = append(errs, field.NotSupported(path.Child("takeOver"), n.TakeOver, v1alpha1.EnumNamingTakeOver))
	}
	return errs
}

// validateClusterName checks an EKS cluster name, and that it can name the
// interruption queue (SQS allows 80 characters, EKS 100) when there is one.
func validateClusterName(path *field.Path, spec v1alpha1.XKarpenterClusterSpec) field.ErrorList {
	name := spec.ClusterName
	switch {
	case name == "":
		return field.ErrorList{field.Required(path, "")}
	case len(name) > maxClusterName:
		return field.ErrorList{field.TooLong(path, name, maxClusterName)}
	case !clusterNamePattern.MatchString(name):
		return field.ErrorList{field.Invalid(path, name, "must start with a letter or digit and hold only letters, digits, '-' and '_', as an EKS cluster name does")}
	case *spec.Interruption.Enabled && spec.Naming.TakeOver == v1alpha1.TakeOverAWSGettingStarted && len(name) > maxQueueName:
		return field.ErrorList{field.Invalid(path, name, fmt.Sprintf("must be at most %d characters while spec.interruption.enabled is true and spec.naming.takeOver is AWSGettingStarted: AWS's template names the interruption queue after the cluster, and SQS refuses longer queue names", maxQueueName))}
	}
	return nil
}

func validateTags(path *field.Path, tags map[string]string) field.ErrorList {
	errs := aws.ValidateTags(path, tags)
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		if slices.Contains(reservedTagKeys, k) {
			errs = append(errs, field.Forbidden(path.Key(k), "kiso or provider-aws sets this tag on every resource"))
		}
	}
	if len(tags) > maxUserTags {
		errs = append(errs, field.TooMany(path, len(tags), maxUserTags))
	}
	return errs
}

func validateController(path *field.Path, spec v1alpha1.XKarpenterClusterSpec) field.ErrorList {
	c := spec.Controller
	arnPath := path.Child("oidcProviderArn")
	switch c.Identity {
	case v1alpha1.IdentityPodIdentity:
		if c.OIDCProviderARN != "" {
			return field.ErrorList{field.Forbidden(arnPath, "only with spec.controller.identity IRSA; Pod Identity needs no OIDC provider")}
		}
	case v1alpha1.IdentityIRSA:
		if c.OIDCProviderARN == "" {
			return field.ErrorList{field.Required(arnPath, "IRSA trusts the cluster's IAM OIDC provider")}
		}
		return validateIAMARN(arnPath, c.OIDCProviderARN, oidcProviderARN, spec)
	default:
		return field.ErrorList{field.NotSupported(path.Child("identity"), c.Identity, v1alpha1.EnumControllerIdentityIdentity)}
	}
	return nil
}

func validateExistingInstanceProfile(path *field.Path, ex v1alpha1.ExistingInstanceProfile, spec v1alpha1.XKarpenterClusterSpec) field.ErrorList {
	var errs field.ErrorList
	switch {
	case ex.Name == "":
		errs = append(errs, field.Required(path.Child("name"), ""))
	case len(ex.Name) > maxInstanceProfileName:
		errs = append(errs, field.TooLong(path.Child("name"), ex.Name, maxInstanceProfileName))
	case !iamNamePattern.MatchString(ex.Name):
		errs = append(errs, field.Invalid(path.Child("name"), ex.Name, "an instance profile name holds only letters, digits and + = , . @ _ -"))
	}
	if ex.RoleARN == "" {
		return append(errs, field.Required(path.Child("roleArn"), "the role in the instance profile, which the controller may pass to EC2"))
	}
	return append(errs, validateIAMARN(path.Child("roleArn"), ex.RoleARN, roleARN, spec)...)
}

// arnForm is the form of an IAM ARN of one kind of resource: its resource part, what to call it in an error,
// and whether AWS may own it (a managed policy).
type arnForm struct {
	resource *regexp.Regexp
	what     string
	awsOwned bool
}

// The IAM ARNs a spec names.
var (
	roleARN          = arnForm{resource: roleResource, what: "a role ARN, arn:<partition>:iam::<account>:role/<name>"}
	managedPolicyARN = arnForm{resource: policyResource, what: "a managed policy ARN, arn:<partition>:iam::<account>:policy/<name>", awsOwned: true}
	oidcProviderARN  = arnForm{resource: oidcResource, what: "an IAM OIDC provider ARN, arn:<partition>:iam::<account>:oidc-provider/<issuer>"}
)

// validateIAMARN checks an IAM ARN's form and that it is in the cluster's
// partition and account (or, for a managed policy when awsOwned, owned by AWS).
func validateIAMARN(path *field.Path, v string, form arnForm, spec v1alpha1.XKarpenterClusterSpec) field.ErrorList {
	resource, what, awsOwned := form.resource, form.what, form.awsOwned
	m := iamARNPattern.FindStringSubmatch(v)
	if m == nil || !resource.MatchString(m[3]) || (m[2] == "aws" && !awsOwned) {
		return field.ErrorList{field.Invalid(path, v, "must be "+what)}
	}
	if m[1] != string(spec.Partition) || (m[2] != spec.AccountID && m[2] != "aws") {
		return field.ErrorList{field.Invalid(path, v, fmt.Sprintf("must be in the cluster's partition %s and account %s", spec.Partition, spec.AccountID))}
	}
	return nil
}

// validateBoundaryOutsideKiso refuses a permissions boundary under the IAM path kiso writes its policies to (the
// spec's naming.iamPath, else /kiso/, where the provider's policy lets it write every cluster's): the provider
// could rewrite such a boundary, which would then bound nothing.
func validateBoundaryOutsideKiso(path *field.Path, boundary string, spec v1alpha1.XKarpenterClusterSpec) field.ErrorList {
	written := "/kiso/"
	if spec.Naming.IAMPath != "" {
		written = spec.Naming.IAMPath
	}
	m := iamARNPattern.FindStringSubmatch(boundary)
	if m == nil || !strings.HasPrefix(strings.TrimPrefix(m[3], "policy"), written) {
		return nil
	}
	return field.ErrorList{field.Forbidden(path, fmt.Sprintf("%s is under %s, where kiso writes its own policies: a boundary the provider may rewrite bounds nothing; "+
		"keep it on a path of its own (docs/install.md: policy/kiso-boundary/kiso-roles)", boundary, written))}
}

func validateLabels(path *field.Path, labels map[string]string) field.ErrorList {
	var errs field.ErrorList
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		for _, msg := range validation.IsQualifiedName(k) {
			errs = append(errs, field.Invalid(path.Key(k), k, msg))
		}
		for _, msg := range validation.IsValidLabelValue(labels[k]) {
			errs = append(errs, field.Invalid(path.Key(k), labels[k], msg))
		}
		if k == placement.ManagedByLabel {
			errs = append(errs, field.Forbidden(path.Key(k), "kiso sets this label on every object it composes"))
		}
	}
	return errs
}
