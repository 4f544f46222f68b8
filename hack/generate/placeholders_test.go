package main

import (
	"go/constant"
	"go/token"
	"go/types"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// limitsPackage is a package holding the constants a rule may name.
func limitsPackage() *types.Package {
	pkg := types.NewPackage("example.com/limits", "limits")
	for _, c := range []struct {
		name string
		typ  types.BasicKind
		val  constant.Value
	}{
		{"MaxThings", types.UntypedInt, constant.MakeInt64(7)},
		{"Unit", types.UntypedString, constant.MakeString("KiB")},
		{"Ratio", types.UntypedFloat, constant.MakeFloat64(0.5)},
	} {
		pkg.Scope().Insert(types.NewConst(token.NoPos, pkg, c.name, types.Typ[c.typ], c.val))
	}
	return pkg
}

// deepSchema nests rule under a map value, inside a list item, inside an object property, so a test shows
// the whole tree is filled in.
func deepSchema(rule apiextensionsv1.ValidationRule) *apiextensionsv1.JSONSchemaProps {
	leaf := apiextensionsv1.JSONSchemaProps{Type: "object", XValidations: apiextensionsv1.ValidationRules{rule}}
	item := apiextensionsv1.JSONSchemaProps{
		Type:                 "object",
		AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true, Schema: &leaf},
	}
	return &apiextensionsv1.JSONSchemaProps{
		Type: "object",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
				"things": {Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &item}},
			}},
		},
	}
}

func TestFillPlaceholders(t *testing.T) {
	cases := map[string]struct {
		reason  string
		rule    apiextensionsv1.ValidationRule
		want    apiextensionsv1.ValidationRule
		wantErr string
	}{
		"KnownPlaceholdersAreFilledDeepInTheTree": {
			reason: "a rule and its message read the constant's value wherever the schema nests them",
			rule:   apiextensionsv1.ValidationRule{Rule: "size(self) <= {{MaxThings}}", Message: "at most {{MaxThings}} things of 1 {{ Unit }}"},
			want:   apiextensionsv1.ValidationRule{Rule: "size(self) <= 7", Message: "at most 7 things of 1 KiB"},
		},
		"UnknownPlaceholderFailsNamingIt": {
			reason:  "a placeholder naming no constant of the package is an error that names it",
			rule:    apiextensionsv1.ValidationRule{Rule: "size(self) <= {{MaxWidgets}}"},
			wantErr: "{{MaxWidgets}}",
		},
		"UnknownPlaceholderInMessageFails": {
			reason:  "messages are filled in as rules are",
			rule:    apiextensionsv1.ValidationRule{Rule: "true", Message: "at most {{MaxWidgets}}"},
			wantErr: "{{MaxWidgets}}",
		},
		"MalformedPlaceholderFails": {
			reason:  "a placeholder that is not closed would otherwise reach the XRD as it is",
			rule:    apiextensionsv1.ValidationRule{Rule: "size(self) <= {{MaxThings"},
			wantErr: "malformed placeholder",
		},
		"ConstantOfAnotherKindFails": {
			reason:  "a float has no single literal a rule reads the same way",
			rule:    apiextensionsv1.ValidationRule{Rule: "self <= {{Ratio}}"},
			wantErr: "{{Ratio}}",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			schema := deepSchema(tc.rule)
			err := fillPlaceholders(schema, limitsPackage())
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("%s\nfillPlaceholders(): error %v, want one naming %s", tc.reason, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s\nfillPlaceholders(): %v", tc.reason, err)
			}
			if diff := cmp.Diff(deepSchema(tc.want), schema); diff != "" {
				t.Errorf("%s\nfillPlaceholders(): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestLeftPlaceholdersFail: a placeholder where nothing fills it in, such as a field's description, fails
// generation naming it rather than reaching an XRD.
func TestLeftPlaceholdersFail(t *testing.T) {
	err := leftPlaceholders("apis/things/definition.yaml", []byte("description: at most {{MaxThings}} things\n"))
	if err == nil || !strings.Contains(err.Error(), "{{MaxThings}}") || !strings.Contains(err.Error(), "apis/things/definition.yaml") {
		t.Errorf("leftPlaceholders(): error %v, want one naming {{MaxThings}} and the file", err)
	}
	if err := leftPlaceholders("apis/things/definition.yaml", []byte("rule: size(self) <= 7\n")); err != nil {
		t.Errorf("leftPlaceholders() without placeholders: %v", err)
	}
}
