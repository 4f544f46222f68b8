package aws

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPolicyDocumentJSON(t *testing.T) {
	cases := map[string]struct {
		reason string
		doc    PolicyDocument
		want   string
	}{
		"OneValueIsAString": {
			reason: "IAM writes a single action or resource as a plain string, several as a list.",
			doc: PolicyDocument{Version: PolicyVersion, Statement: []Statement{
				AllowStatement("One", Values{"eks:DescribeCluster"}, Values{"*"}, nil),
				AllowStatement("Two", Values{"sqs:DeleteMessage", "sqs:ReceiveMessage"}, Values{"a", "b"}, nil),
			}},
			want: `{"Version":"2012-10-17","Statement":[` +
				`{"Sid":"One","Effect":"Allow","Action":"eks:DescribeCluster","Resource":"*"},` +
				`{"Sid":"Two","Effect":"Allow","Action":["sqs:DeleteMessage","sqs:ReceiveMessage"],"Resource":["a","b"]}]}`,
		},
		"ConditionKeysSorted": {
			reason: "Operators and keys render sorted, so the same document always renders the same JSON.",
			doc: PolicyDocument{Version: PolicyVersion, Statement: []Statement{
				AllowStatement("", Values{"ec2:CreateTags"}, Values{"*"}, Condition{
					"StringLike":   {"z": {"*"}, "a": {"*"}},
					"StringEquals": {"k": {"v1", "v2"}},
				}),
			}},
			want: `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"ec2:CreateTags","Resource":"*",` +
				`"Condition":{"StringEquals":{"k":["v1","v2"]},"StringLike":{"a":"*","z":"*"}}}]}`,
		},
		"Principals": {
			reason: "Everyone renders as \"*\"; a service or federated principal as an object.",
			doc: PolicyDocument{Version: PolicyVersion, ID: "Q", Statement: []Statement{
				{Effect: Deny, Principal: &Principal{Everyone: true}, Action: Values{"sqs:*"}},
				{Effect: Allow, Principal: &Principal{Service: Values{"events.amazonaws.com", "sqs.amazonaws.com"}}, Action: Values{"sqs:SendMessage"}},
				{Effect: Allow, Principal: &Principal{Federated: "arn:aws:iam::111122223333:oidc-provider/x"}, Action: Values{"sts:AssumeRoleWithWebIdentity"}},
			}},
			want: `{"Version":"2012-10-17","Id":"Q","Statement":[` +
				`{"Effect":"Deny","Principal":"*","Action":"sqs:*"},` +
				`{"Effect":"Allow","Principal":{"Service":["events.amazonaws.com","sqs.amazonaws.com"]},"Action":"sqs:SendMessage"},` +
				`{"Effect":"Allow","Principal":{"Federated":"arn:aws:iam::111122223333:oidc-provider/x"},"Action":"sts:AssumeRoleWithWebIdentity"}]}`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.doc.JSON()); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
