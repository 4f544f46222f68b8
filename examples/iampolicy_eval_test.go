package examples_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// An iamPolicy is an IAM policy document, as much of it as the provider's policy uses: Allow statements of
// actions on resources, with string and ARN conditions.
type iamPolicy struct {
	Version   string         `json:"Version"`
	Statement []iamStatement `json:"Statement"`
}

type iamStatement struct {
	Sid         string                             `json:"Sid"`
	Effect      string                             `json:"Effect"`
	Action      stringOrList                       `json:"Action"`
	Resource    stringOrList                       `json:"Resource"`
	Condition   map[string]map[string]stringOrList `json:"Condition"`
	NotAction   stringOrList                       `json:"NotAction"`
	NotResource stringOrList                       `json:"NotResource"`
	Principal   any                                `json:"Principal"`
}

// stringOrList is a policy element IAM accepts as one string or a list of them.
type stringOrList []string

func (s *stringOrList) UnmarshalJSON(data []byte) error {
	var one string
	if err := json.Unmarshal(data, &one); err == nil {
		*s = stringOrList{one}
		return nil
	}
	var list []string
	if err := json.Unmarshal(data, &list); err != nil {
		return fmt.Errorf("want a string or a list of strings: %w", err)
	}
	*s = list
	return nil
}

// parseIAMPolicy decodes a policy document and refuses what allows does not read (NotAction, NotResource, a
// Principal, a condition operator it does not know), so a policy it judges is one it reads whole.
func parseIAMPolicy(data []byte) (iamPolicy, error) {
	var p iamPolicy
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return p, err
	}
	for _, s := range p.Statement {
		switch {
		case s.Effect != "Allow" && s.Effect != "Deny":
			return p, fmt.Errorf("statement %q: Effect %q: only Allow and Deny are read", s.Sid, s.Effect)
		case len(s.NotAction) > 0 || len(s.NotResource) > 0 || s.Principal != nil:
			return p, fmt.Errorf("statement %q: NotAction, NotResource and Principal are not read", s.Sid)
		case len(s.Action) == 0 || len(s.Resource) == 0:
			return p, fmt.Errorf("statement %q: no Action or no Resource", s.Sid)
		}
		for op := range s.Condition {
			if !slices.Contains(conditionOperators, op) && !slices.Contains(negatedOperators, op) {
				return p, fmt.Errorf("statement %q: condition operator %s is not read (only %v and %v)", s.Sid, op, conditionOperators, negatedOperators)
			}
		}
	}
	return p, nil
}

// conditionOperators are the operators allows reads. ArnLike and ArnEquals are matched on the whole ARN, as
// StringLike is: stricter than IAM's segment by segment match only for ARNs no kiso object has.
var conditionOperators = []string{"StringEquals", "StringLike", "ArnLike", "ArnEquals"}

// negatedOperators are the negations allows reads. As in IAM, a negated condition on a key the request does not
// carry is met: a Deny "unless the boundary is kiso's" denies a request that names no boundary.
var negatedOperators = []string{"StringNotEquals", "StringNotLike", "ArnNotLike", "ArnNotEquals"}

// A request is one call provider-aws makes: an action on a resource, with the values of the condition keys the
// call carries. A condition on a key the request does not carry fails: a statement that relies on a key grants
// only the calls whose table entry says they carry it.
type request struct {
	Action, Resource string
	Context          map[string]string
}

// allows says whether the policies allow the request, as IAM decides within one account: an explicit Deny that
// applies wins, else some Allow that applies grants; and if they do not, why.
func allows(policies []iamPolicy, r request) (bool, string) {
	var near []string
	granted := false
	for _, p := range policies {
		for _, s := range p.Statement {
			if !slices.ContainsFunc(s.Action, func(a string) bool { return wildcardMatch(strings.ToLower(a), strings.ToLower(r.Action)) }) ||
				!slices.ContainsFunc(s.Resource, func(pattern string) bool { return wildcardMatch(pattern, r.Resource) }) {
				continue
			}
			why := unmetCondition(s, r.Context)
			switch {
			case s.Effect == "Deny" && why == "":
				return false, fmt.Sprintf("statement %q denies it", s.Sid)
			case why != "":
				near = append(near, fmt.Sprintf("statement %q matches but %s", s.Sid, why))
			default:
				granted = true
			}
		}
	}
	switch {
	case granted:
		return true, ""
	case len(near) == 0:
		return false, "no statement allows the action on that resource"
	}
	return false, strings.Join(near, "; ")
}

// unmetCondition returns the first condition the context does not meet, or "".
func unmetCondition(s iamStatement, context map[string]string) string {
	for op, keys := range s.Condition {
		negated := slices.Contains(negatedOperators, op)
		for key, values := range keys {
			got, ok := context[key]
			if !ok {
				if negated {
					continue
				}
				return fmt.Sprintf("its condition %s on %s is on a key the call does not carry", op, key)
			}
			met := slices.ContainsFunc(values, func(v string) bool {
				if strings.Contains(op, "Equals") {
					return v == got
				}
				return wildcardMatch(v, got)
			})
			if met == negated {
				return fmt.Sprintf("%s %s=%s is not met by %v", op, key, got, values)
			}
		}
	}
	return ""
}

// wildcardMatch matches IAM's wildcards: * any run of characters (slashes too), ? one character.
func wildcardMatch(pattern, s string) bool {
	// The parts between stars must appear in order, the first at the start and the last at the end.
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return questionMatch(pattern, s)
	}
	if len(s) < len(parts[0]) || !questionMatch(parts[0], s[:len(parts[0])]) {
		return false
	}
	s = s[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, part := range parts[1 : len(parts)-1] {
		i := indexQuestion(s, part)
		if i < 0 {
			return false
		}
		s = s[i+len(part):]
	}
	return len(s) >= len(last) && questionMatch(last, s[len(s)-len(last):])
}

// questionMatch matches a pattern without * whose ? stands for any one character.
func questionMatch(pattern, s string) bool {
	if len(pattern) != len(s) {
		return false
	}
	for i := range len(pattern) {
		if pattern[i] != '?' && pattern[i] != s[i] {
			return false
		}
	}
	return true
}

// indexQuestion is strings.Index for a pattern whose ? stands for any one character.
func indexQuestion(s, pattern string) int {
	for i := 0; i+len(pattern) <= len(s); i++ {
		if questionMatch(pattern, s[i:i+len(pattern)]) {
			return i
		}
	}
	return -1
}

// TestEvaluatorMatchesAsIAMDoes: the evaluator's wildcards and conditions, on the cases the provider's policy
// relies on.
func TestEvaluatorMatchesAsIAMDoes(t *testing.T) {
	matches := map[[2]string]bool{
		{"arn:aws:iam::*:role/kiso/*", "arn:aws:iam::1:role/kiso/prod/organizations/kiso-a"}:                                       true, // * crosses slashes
		{"arn:aws:iam::*:role/kiso/*", "arn:aws:iam::1:role/kisos/a"}:                                                              false,
		{"arn:aws:iam::*:policy/KarpenterController*Policy-c", "arn:aws:iam::1:policy/KarpenterControllerEKSIntegrationPolicy-c"}:  true,
		{"arn:aws:iam::*:policy/KarpenterController*Policy-c", "arn:aws:iam::1:policy/KarpenterControllerEKSIntegrationPolicy-c2"}: false,
		{"arn:aws:sqs:*:*:c", "arn:aws:sqs:r:1:c"}:                                                                                 true,
		{"arn:aws:sqs:*:*:c", "arn:aws:sqs:r:1:cc"}:                                                                                false,
		{"iam:Get?ole", "iam:GetRole"}:                                                                                             true,
		{"*", ""}:                                                                                                                  true,
	}
	for c, want := range matches {
		if got := wildcardMatch(c[0], c[1]); got != want {
			t.Errorf("wildcardMatch(%q, %q) = %v, want %v", c[0], c[1], got, want)
		}
	}
	p, err := parseIAMPolicy([]byte(`{"Version":"2012-10-17","Statement":[{"Sid":"s","Effect":"Allow","Action":"eks:CreateAccessEntry",
		"Resource":"arn:aws:eks:*:*:cluster/*","Condition":{"StringEquals":{"eks:accessEntryType":"EC2_LINUX"}}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	for context, want := range map[string]bool{"EC2_LINUX": true, "STANDARD": false, "": false} {
		r := request{Action: "EKS:createaccessentry", Resource: "arn:aws:eks:r:1:cluster/c", Context: map[string]string{}}
		if context != "" {
			r.Context["eks:accessEntryType"] = context
		}
		if got, why := allows([]iamPolicy{p}, r); got != want {
			t.Errorf("type %q: allowed %v (%s), want %v", context, got, why, want)
		}
	}
	if _, err := parseIAMPolicy([]byte(`{"Version":"2012-10-17","Statement":[{"Effect":"Deny","NotAction":"iam:GetRole","Resource":"*"}]}`)); err == nil {
		t.Error("a NotAction statement was read as if the evaluator judged it")
	}
	// A Deny wins over an Allow, and a negated condition is met by a request without its key, as in IAM.
	guarded, err := parseIAMPolicy([]byte(`{"Version":"2012-10-17","Statement":[
		{"Sid":"a","Effect":"Allow","Action":"iam:CreateRole","Resource":"*"},
		{"Sid":"d","Effect":"Deny","Action":"iam:CreateRole","Resource":"*","Condition":{"ArnNotLike":{"iam:PermissionsBoundary":"arn:aws:iam::*:policy/b/*"}}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	for boundary, want := range map[string]bool{"arn:aws:iam::1:policy/b/x": true, "arn:aws:iam::1:policy/other": false, "": false} {
		r := request{Action: "iam:CreateRole", Resource: "arn:aws:iam::1:role/r", Context: map[string]string{}}
		if boundary != "" {
			r.Context["iam:PermissionsBoundary"] = boundary
		}
		if got, why := allows([]iamPolicy{guarded}, r); got != want {
			t.Errorf("boundary %q: allowed %v (%s), want %v", boundary, got, why, want)
		}
	}
}
