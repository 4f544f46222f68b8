package main

import (
	"go/constant"
	"go/types"
	"regexp"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-tools/pkg/crd"

	"github.com/crossplane/function-sdk-go/errors"
)

// placeholder is {{Name}} in a CEL rule or message, filled in with the value of the Go constant Name of the
// schema's package: a kubebuilder marker cannot name a constant, and the functions check the same limits.
var placeholder = regexp.MustCompile(`\{\{\s*([^{}]*?)\s*\}\}`)

// fillPlaceholders fills in the placeholders of every x-kubernetes-validations rule and message throughout
// schema with the constants of pkg, failing on a placeholder that names none.
func fillPlaceholders(schema *apiextensionsv1.JSONSchemaProps, pkg *types.Package) error {
	if schema == nil {
		return nil
	}
	v := &placeholderFiller{pkg: pkg}
	crd.EditSchema(schema, v)
	return v.err
}

// placeholderFiller is the schema visitor that fills in placeholders, keeping the first error.
type placeholderFiller struct {
	pkg *types.Package
	err error
}

func (f *placeholderFiller) Visit(schema *apiextensionsv1.JSONSchemaProps) crd.SchemaVisitor {
	if schema == nil {
		return nil
	}
	for i := range schema.XValidations {
		rule := &schema.XValidations[i]
		rule.Rule = f.fill(rule.Rule)
		rule.Message = f.fill(rule.Message)
		rule.MessageExpression = f.fill(rule.MessageExpression)
	}
	return f
}

// fill replaces each placeholder in s with its constant's value.
func (f *placeholderFiller) fill(s string) string {
	filled := placeholder.ReplaceAllStringFunc(s, func(p string) string {
		name := placeholder.FindStringSubmatch(p)[1]
		value, err := constantValue(f.pkg, name)
		if err != nil && f.err == nil {
			f.err = errors.Wrapf(err, "cannot fill in placeholder %s in %q", p, s)
		}
		return value
	})
	if f.err == nil && strings.Contains(filled, "{{") {
		f.err = errors.Errorf("%q holds a malformed placeholder; write {{Name}}, Name a constant of %s", s, f.pkg.Path())
	}
	return filled
}

// constantValue is the value of pkg's constant name as it reads in a rule: an integer or boolean literal,
// or a string's text, which a rule quotes itself.
func constantValue(pkg *types.Package, name string) (string, error) {
	c, ok := pkg.Scope().Lookup(name).(*types.Const)
	if !ok {
		return "", errors.Errorf("%s has no constant %s", pkg.Path(), name)
	}
	switch v := c.Val(); v.Kind() {
	case constant.Int, constant.Bool:
		return v.ExactString(), nil
	case constant.String:
		return constant.StringVal(v), nil
	default:
		return "", errors.Errorf("constant %s.%s is %s; a rule can take an integer, boolean or string", pkg.Path(), name, v.Kind())
	}
}

// leftPlaceholders fails when a generated schema still holds a placeholder, one written where nothing fills
// it in (placeholders are filled in x-kubernetes-validations rules and messages only). Go files are not
// searched: a composite literal such as []T{{}} reads as one.
func leftPlaceholders(path string, b []byte) error {
	if !strings.HasSuffix(path, ".yaml") {
		return nil
	}
	left := placeholder.FindAllString(string(b), -1)
	if len(left) == 0 {
		return nil
	}
	return errors.Errorf("%s: placeholders %s left unfilled; only x-kubernetes-validations rules and messages are filled in", path, strings.Join(left, ", "))
}
