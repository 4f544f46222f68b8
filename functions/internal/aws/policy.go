package aws

import (
	"encoding/json"
)

// PolicyVersion is the IAM policy language version every document uses.
const PolicyVersion = "2012-10-17"

// A PolicyDocument is an IAM or SQS policy. Field order is the order AWS
// documents them in, and Condition maps marshal with sorted keys, so a
// document always renders to the same JSON.
type PolicyDocument struct {
	Version   string      `json:"Version"`
	ID        string      `json:"Id,omitempty"`
	Statement []Statement `json:"Statement"`
}

// A Statement is one statement of a policy document.
type Statement struct {
	Sid       string     `json:"Sid,omitempty"`
	Effect    string     `json:"Effect"`
	Principal *Principal `json:"Principal,omitempty"`
	Action    Values     `json:"Action"`
	Resource  Values     `json:"Resource,omitempty"`
	Condition Condition  `json:"Condition,omitempty"`
}

// Statement effects.
const (
	Allow = "Allow"
	Deny  = "Deny"
)

// Condition maps an operator (StringEquals, ...) to condition keys and the
// values they must match.
type Condition map[string]map[string]Values

// A Principal is who a resource or trust policy applies to.
type Principal struct {
	// Everyone renders as "*".
	Everyone  bool
	Service   Values
	Federated string
}

// MarshalJSON renders "*" for everyone, else {"Service": ...} or
// {"Federated": ...}.
func (p Principal) MarshalJSON() ([]byte, error) {
	if p.Everyone {
		return json.Marshal("*")
	}
	return json.Marshal(struct {
		Service   Values `json:"Service,omitempty"`
		Federated string `json:"Federated,omitempty"`
	}{p.Service, p.Federated})
}

// Values are one or more strings: a single value renders as a plain string,
// several as a list, as IAM itself writes them.
type Values []string

// MarshalJSON renders one value as a string and several as a list.
func (v Values) MarshalJSON() ([]byte, error) {
	if len(v) == 1 {
		return json.Marshal(v[0])
	}
	return json.Marshal([]string(v))
}

// JSON renders the document. It cannot fail: every field is a string, a
// list of strings or a map of them.
func (d PolicyDocument) JSON() string {
	b, err := json.Marshal(d)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// AllowStatement is shorthand for an Allow statement.
func AllowStatement(sid string, actions, resources Values, cond Condition) Statement {
	return Statement{Sid: sid, Effect: Allow, Action: actions, Resource: resources, Condition: cond}
}
