// ValidateTags validates AWS resource tags the way AWS does, so a bad tag
// fails on the claim with its field path instead of later in a provider.

package aws

import (
	"maps"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
)

// AWS's limits for a tag on EC2, IAM, SQS and EventBridge resources. The XRDs' schemas check the value's
// length too, so it has its home beside them.
const (
	MaxKeyLength   = 128
	MaxValueLength = v1alpha1.MaxTagValueLength
)

// allowed is the character set AWS documents for tag keys and values across
// services: letters, digits, spaces and _ . : / = + - @.
var allowed = regexp.MustCompile(`^[\p{L}\p{Z}\p{N}_.:/=+\-@]*$`)

// Validate returns an error for every tag AWS would refuse, naming its key.
func ValidateTags(path *field.Path, tags map[string]string) field.ErrorList {
	var errs field.ErrorList
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		v := tags[k]
		p := path.Key(k)
		switch {
		case k == "":
			errs = append(errs, field.Invalid(p, k, "a tag key must not be empty"))
		case utf8.RuneCountInString(k) > MaxKeyLength:
			errs = append(errs, field.TooLong(p, k, MaxKeyLength))
		case strings.HasPrefix(strings.ToLower(k), "aws:"):
			errs = append(errs, field.Forbidden(p, "tag keys starting with aws: are reserved by AWS"))
		case !allowed.MatchString(k):
			errs = append(errs, field.Invalid(p, k, "a tag key may hold only letters, digits, spaces and _ . : / = + - @"))
		}
		switch {
		case utf8.RuneCountInString(v) > MaxValueLength:
			errs = append(errs, field.TooLong(p, v, MaxValueLength))
		case !allowed.MatchString(v):
			errs = append(errs, field.Invalid(p, v, "a tag value may hold only letters, digits, spaces and _ . : / = + - @"))
		}
	}
	return errs
}
