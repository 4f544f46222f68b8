package main

import (
	"strings"
	"testing"

	"github.com/kiso-dev/kiso/functions/internal/fntest"
)

// TestBadInputChangesNothing calls the function with inputs nobody should
// write: each must end in a Fatal result whose message names the field, and
// nothing may be applied or deleted. The cluster's roles and queue already
// exist (observed), so a Fatal result is all that keeps them: Crossplane
// stops before it applies or deletes anything.
func TestBadInputChangesNothing(t *testing.T) {
	with := func(old, repl string) string {
		if !strings.Contains(podIdentitySpec, old) {
			t.Fatalf("podIdentitySpec has no %s", old)
		}
		return strings.Replace(podIdentitySpec, old, repl, 1)
	}
	long := strings.Repeat("x", 300)
	cases := map[string]struct {
		reason string
		xr     string // the whole XR; default xr(spec)
		spec   string
		want   string
	}{
		"XRWithoutSpec": {
			reason: "render does not apply the XRD's schema; an XR without spec names every required field.",
			xr:     `{"apiVersion":"kiso.dev/v1alpha1","kind":"XKarpenterCluster","metadata":{"name":"prod"}}`,
			want:   `[spec.clusterName: Required value, spec.region: Required value, spec.accountId: Required value]`,
		},
		"SpecNotAnObject": {
			reason: "A spec that is a list cannot be read.",
			spec:   `["prod"]`,
			want:   `cannot read the XR: spec: Invalid value: "array": must be an object`,
		},
		"TagWithANumberValue": {
			reason: "Tags are strings, as AWS's are.",
			spec:   with(`"tags":{"team":"platform"}`, `"tags":{"team":1}`),
			want:   `cannot read the XR: spec.tags: Invalid value: "number": must be a string`,
		},
		"MonitoringLabelsNotAnObject": {
			reason: "Monitoring labels are a map of strings.",
			spec:   with(`"tags"`, `"monitoring":{"labels":["release"]},"tags"`),
			want:   `cannot read the XR: spec.monitoring.labels: Invalid value: "array": must be an object`,
		},
		"UnicodeClusterName": {
			reason: "An EKS cluster name is ASCII letters, digits, '-' and '_'.",
			spec:   with(`"clusterName":"prod"`, `"clusterName":"prød"`),
			want:   `spec.clusterName: Invalid value: "prød": must start with a letter or digit and hold only letters, digits, '-' and '_', as an EKS cluster name does`,
		},
		"OversizedClusterName": {
			reason: "A 300-character cluster name is refused as too long, once.",
			spec:   with(`"clusterName":"prod"`, `"clusterName":"`+long+`"`),
			want:   `spec.clusterName: Too long: may not be more than 100 bytes`,
		},
		"UnicodeRegion": {
			reason: "A region is e.g. eu-west-3.",
			spec:   with(`"region":"eu-west-3"`, `"region":"eu-wést-3"`),
			want:   `spec.region: Invalid value: "eu-wést-3": must be an AWS region, e.g. eu-west-3`,
		},
		"AccountIDWithALetter": {
			reason: "An AWS account ID is digits only.",
			spec:   with(`"accountId":"111122223333"`, `"accountId":"11112222333a"`),
			want:   `spec.accountId: Invalid value: "11112222333a": must be 12 digits`,
		},
		"AccountIDANumber": {
			reason: "A 12-digit account ID written as a YAML number is not a string.",
			spec:   with(`"accountId":"111122223333"`, `"accountId":111122223333`),
			want:   `cannot read the XR: spec.accountId: Invalid value: "number": must be a string`,
		},
		"UnicodeTagValue": {
			reason: "AWS allows letters in any script in tags, but not symbols.",
			spec:   with(`"tags":{"team":"platform"}`, `"tags":{"team":"plätform 🚀"}`),
			want:   `spec.tags[team]: Invalid value: "plätform 🚀": a tag value may hold only letters, digits, spaces and _ . : / = + - @`,
		},
		"OversizedTagKey": {
			reason: "An AWS tag key is at most 128 characters.",
			spec:   with(`"tags":{"team":"platform"}`, `"tags":{"`+long+`":"platform"}`),
			want:   `spec.tags[` + long + `]: Too long: may not be more than 128 bytes`,
		},
		"EmptyTagKey": {
			reason: "An AWS tag key is never empty.",
			spec:   with(`"tags":{"team":"platform"}`, `"tags":{"":"platform"}`),
			want:   `spec.tags[]: Invalid value: "": a tag key must not be empty`,
		},
		"ProviderConfigNameTooLong": {
			reason: "A ProviderConfig name is a Kubernetes name, at most 253 characters.",
			spec:   with(`"tags"`, `"providerConfigName":"`+long+`","tags"`),
			want:   `spec.providerConfigName: Invalid value: "` + long + `": must be no more than 253 characters`,
		},
		"KarpenterNamespaceTooLong": {
			reason: "A namespace is a DNS label, at most 63 characters.",
			spec:   with(`"tags"`, `"karpenter":{"namespace":"`+strings.Repeat("k", 64)+`"},"tags"`),
			want:   `spec.karpenter.namespace: Invalid value: "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk": must be no more than 63 characters`,
		},
		"PermissionsBoundaryOfAnotherAccount": {
			reason: "A role's boundary is a policy of its own account, or AWS's.",
			spec:   with(`"tags"`, `"permissionsBoundary":"arn:aws:iam::999999999999:policy/boundary","tags"`),
			want:   `spec.permissionsBoundary: Invalid value: "arn:aws:iam::999999999999:policy/boundary": must be in the cluster's partition aws and account 111122223333`,
		},
		"ExistingInstanceProfileNameTooLong": {
			reason: "An instance profile name is at most 128 characters.",
			spec:   with(`"tags"`, `"nodeRole":{"existingInstanceProfile":{"name":"`+long+`","roleArn":"arn:aws:iam::111122223333:role/nodes"}},"tags"`),
			want:   `spec.nodeRole.existingInstanceProfile.name: Too long: may not be more than 128 bytes`,
		},
		"MonitoringLabelKeyNotALabel": {
			reason: "A monitoring label is a Kubernetes label.",
			spec:   with(`"tags"`, `"monitoring":{"labels":{"release name":"x"}},"tags"`),
			want:   `spec.monitoring.labels[release name]: Invalid value: "release name": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
		},
	}
	observed := map[string]string{}
	for name, o := range fntest.Desired(t, run(t, newRequest(t, xr(podIdentitySpec), nil))) {
		observed[name] = fntest.ToJSON(t, o)
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			x := tc.xr
			if x == "" {
				x = xr(tc.spec)
			}
			req := newRequest(t, x, observed)
			rsp := run(t, req)
			fntest.AssertChangesNothing(t, rsp, tc.want, observed)
		})
	}
}
