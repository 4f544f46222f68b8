package main

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/kiso-dev/kiso/functions/internal/fntest"
)

// TestBadInputChangesNothing calls the function with inputs nobody should
// write, and a few a platform might: each must end in a Fatal result whose
// message names the field, and nothing may be applied or deleted. The
// organization already has its pools (observed), so a Fatal result is all
// that keeps them: Crossplane stops before it applies or deletes anything.
func TestBadInputChangesNothing(t *testing.T) {
	withRef := func(old, repl string) string { return strings.Replace(orgSpec, old, repl, 1) }
	long := strings.Repeat("x", 300)
	refs := cluster{refNodeClass, refNodePool}
	nodePool := func(old, repl string) cluster {
		if !strings.Contains(refNodePool, old) {
			t.Fatalf("fixture refNodePool has no %s", old)
		}
		return cluster{refNodeClass, strings.Replace(refNodePool, old, repl, 1)}
	}
	nodeClass := func(old, repl string) cluster {
		if !strings.Contains(refNodeClass, old) {
			t.Fatalf("fixture refNodeClass has no %s", old)
		}
		return cluster{strings.Replace(refNodeClass, old, repl, 1), refNodePool}
	}
	clusterRef := withRef(`"nodeClassRef"`, `"clusterRef":{"name":"prod"},"nodeClassRef"`)

	cases := map[string]struct {
		reason string
		xr     string // the whole XR; default xr(spec)
		spec   string
		input  string
		refs   cluster
		want   string
	}{
		// The XR itself.
		"XRWithoutSpec": {
			reason: "render does not apply the XRD's schema; an XR without spec names every required field.",
			xr:     `{"apiVersion":"kiso.dev/v1alpha1","kind":"XKarpenterIsolation","metadata":{"name":"acme-x1","uid":"xr-uid"}}`,
			want:   `[spec.organization: Required value, spec.nodeClassRef.name: Required value, spec.nodePoolRef.name: Required value]`,
		},
		"SpecNotAnObject": {
			reason: "A spec that is a string cannot be read.",
			spec:   `"acme"`,
			want:   `cannot read the XR: spec: Invalid value: "string": must be an object`,
		},
		"StacksNotAList": {
			reason: "The stacks are a list.",
			spec:   withRef(`"stacks":[{"name":"web"},{"name":"jobs"}]`, `"stacks":"web,jobs"`),
			want:   `cannot read the XR: spec.stacks: Invalid value: "string": must be a list`,
		},
		"TagWithANumberValue": {
			reason: "Tags are strings, as AWS's are.",
			spec:   withRef(`"customer":"acme-corp",`, `"customer":"acme-corp","tags":{"cost-center":42},`),
			want:   `cannot read the XR: spec.tags: Invalid value: "number": must be a string`,
		},
		"UnicodeOrganization": {
			reason: "The organization names pools, labels and namespaces: DNS-safe ASCII only.",
			spec:   withRef(`"organization":"acme"`, `"organization":"äcme"`),
			want:   `spec.organization: Invalid value: "äcme": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
		},
		"OversizedOrganization": {
			reason: "A 300-character organization is refused as too long, once.",
			spec:   withRef(`"organization":"acme"`, `"organization":"`+long+`"`),
			want:   `spec.organization: Invalid value: "` + long + `": must be no more than 63 characters`,
		},
		"StackNameWithADot": {
			reason: "A stack name is a DNS label: it becomes a label value and part of a namespace.",
			spec:   withRef(`{"name":"jobs"}`, `{"name":"jobs.batch"}`),
			want:   `spec.stacks[1].name: Invalid value: "jobs.batch": must not contain dots`,
		},
		"OversizedStackName": {
			reason: "A stack name is at most 63 characters.",
			spec:   withRef(`{"name":"jobs"}`, `{"name":"`+long+`"}`),
			want:   `spec.stacks[1].name: Invalid value: "` + long + `": must be no more than 63 characters`,
		},
		"UnicodeNamespace": {
			reason: "A namespace name is a DNS label.",
			spec:   withRef(`{"name":"jobs"}`, `{"name":"jobs","namespaces":["jöbs"]}`),
			want:   `spec.stacks[1].namespaces[0]: Invalid value: "jöbs": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
		},
		"EmptyNamespace": {
			reason: "An empty namespace in the list is a mistake, not the default.",
			spec:   withRef(`{"name":"jobs"}`, `{"name":"jobs","namespaces":[""]}`),
			want:   `spec.stacks[1].namespaces[0]: Required value`,
		},
		"StackServesAnotherStacksDefaultNamespace": {
			reason: "Stacks conflict when one lists the namespace another serves by default.",
			spec:   withRef(`{"name":"jobs"}`, `{"name":"jobs","namespaces":["acme-web"]}`),
			want:   `spec.stacks[1].namespaces[0]: Invalid value: "acme-web": namespace already belongs to stack "web"; a namespace's pods can run in one stack's pool only`,
		},
		"DuplicateStackInStackIsolation": {
			reason: "Two stacks of the same name would render one pool twice.",
			spec:   withRef(`"stacks":[{"name":"web"},{"name":"jobs"}]`, `"isolation":"stack","stacks":[{"name":"web"},{"name":"web","namespaces":["acme-web2"]}]`),
			want:   `spec.stacks[1].name: Duplicate value: "web"`,
		},
		"AWSReservedTagKey": {
			reason: "AWS reserves tag keys starting with aws:, in any case.",
			spec:   withRef(`"customer":"acme-corp",`, `"customer":"acme-corp","tags":{"AWS:createdBy":"me"},`),
			want:   `spec.tags[AWS:createdBy]: Forbidden: tag keys starting with aws: are reserved by AWS`,
		},
		// What the platform allows an organization, where a tenant writes its own claim.
		"ReferenceKeptForOtherOrganizations": {
			reason: "The platform keeps a reference (a GPU pair, say) for the organizations its annotation lists: another's claim may not clone it.",
			spec:   orgSpec,
			refs:   nodeClass(`"labels":{"kiso.dev/reference":"true"}`, `"labels":{"kiso.dev/reference":"true"},"annotations":{"kiso.dev/organizations":"globex, initech"}`),
			want:   `spec.nodeClassRef.name: Forbidden: EC2NodeClass "default" is the platform's for organizations globex, initech only (its annotation kiso.dev/organizations), not for acme`,
		},
		"LimitAboveTheClustersCeiling": {
			reason: "The cluster sets the most an organization bound to it may ask for; a claim asking more is refused, the field named.",
			spec:   withRef(`"nodeClassRef"`, `"clusterRef":{"name":"prod"},"limits":{"cpu":2000,"memory":"1Ti"},"nodeClassRef"`),
			refs:   cluster{refNodeClass, refNodePool, strings.Replace(clusterXR, `"partition":"aws",`, `"partition":"aws","organizationLimits":{"cpu":1000,"memory":"2Ti"},`, 1)},
			want:   `spec.limits[cpu]: Invalid value: "2000": more than the 1000 XKarpenterCluster "prod" allows an organization (its spec.organizationLimits)`,
		},
		"OversizedTagValue": {
			reason: "An AWS tag value is at most 256 characters.",
			spec:   withRef(`"customer":"acme-corp",`, `"customer":"acme-corp","tags":{"team":"`+long+`"},`),
			want:   `spec.tags[team]: Too long: may not be more than 256 bytes`,
		},
		"KisoTagKeyInAnotherDomain": {
			reason: "With keyDomain formance.com, formance.com/stack is kiso's own key.",
			spec:   withRef(`"customer":"acme-corp",`, `"customer":"acme-corp","tags":{"formance.com/stack":"x"},`),
			input:  `{"apiVersion":"isolation.fn.kiso.dev/v1alpha1","kind":"Input","keyDomain":"formance.com"}`,
			want:   `spec.tags[formance.com/stack]: Forbidden: kiso sets this tag from the organization, stack and customer`,
		},
		"NodeClassRefWithoutName": {
			reason: "A missing reference name is Required, not a lookup of \"\".",
			spec:   withRef(`"nodeClassRef":{"name":"default"}`, `"nodeClassRef":{}`),
			want:   `spec.nodeClassRef.name: Required value`,
		},
		"NodePoolRefNotDNSSafe": {
			reason: "A reference name is a Kubernetes object name.",
			spec:   withRef(`"nodePoolRef":{"name":"default"}`, `"nodePoolRef":{"name":"Default Pool"}`),
			want:   `spec.nodePoolRef.name: Invalid value: "Default Pool": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
		},
		"NodeClassRefWithoutGroup": {
			reason: "A NodeClass lives in an API group.",
			spec:   withRef(`"nodeClassRef":{"name":"default"}`, `"nodeClassRef":{"apiVersion":"v1","kind":"EC2NodeClass","name":"default"}`),
			want:   `spec.nodeClassRef.apiVersion: Invalid value: "v1": must be group/version, e.g. karpenter.k8s.aws/v1`,
		},
		"ClusterRefWithoutName": {
			reason: "A cluster reference names the cluster.",
			spec:   withRef(`"nodeClassRef"`, `"clusterRef":{},"nodeClassRef"`),
			want:   `spec.clusterRef.name: Required value`,
		},
		"PoolWeightZero": {
			reason: "Karpenter's weight is 1 to 100.",
			spec:   withRef(`"nodePoolRef":{"name":"default"}`, `"nodePoolRef":{"name":"default"},"pool":{"weight":0}`),
			want:   `spec.pool.weight: Invalid value: 0: must be between 1 and 100`,
		},
		"BudgetDurationInDays": {
			reason: "A budget's duration is hours and minutes.",
			spec:   withRef(`"nodePoolRef":{"name":"default"}`, `"nodePoolRef":{"name":"default"},"pool":{"disruption":{"budgets":[{"nodes":"1","schedule":"0 9 * * *","duration":"1d"}]}}`),
			want:   `spec.pool.disruption.budgets[0].duration: Invalid value: "1d": must be hours and minutes, e.g. 8h or 1h30m`,
		},
		"ConsolidateAfterInWords": {
			reason: "consolidateAfter is a duration or Never.",
			spec:   withRef(`"nodePoolRef":{"name":"default"}`, `"nodePoolRef":{"name":"default"},"pool":{"disruption":{"consolidateAfter":"5 minutes"}}`),
			want:   `spec.pool.disruption.consolidateAfter: Invalid value: "5 minutes": must be a duration like 30s or 5m, or Never`,
		},
		"KeyDomainNotADomain": {
			reason: "The key domain prefixes label and taint keys.",
			spec:   orgSpec,
			input:  `{"apiVersion":"isolation.fn.kiso.dev/v1alpha1","kind":"Input","keyDomain":"Kiso_Dev"}`,
			want:   `invalid function input: input.keyDomain: Invalid value: "Kiso_Dev": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
		},
		"KeyDomainNotAString": {
			reason: "An input of the wrong shape is a Composition mistake.",
			spec:   orgSpec,
			input:  `{"apiVersion":"isolation.fn.kiso.dev/v1alpha1","kind":"Input","keyDomain":7}`,
			want:   `invalid function input: cannot get function input *v1alpha1.Input from *v1.RunFunctionRequest: cannot unmarshal JSON from *structpb.Struct into *v1alpha1.Input: json: cannot unmarshal JSON number into Go value of type string`,
		},

		// The reference objects and the cluster, as the platform left them.
		"NodeClassWithoutSpec": {
			reason: "A reference NodeClass without spec has nothing to clone.",
			spec:   orgSpec,
			refs:   cluster{`{"apiVersion":"karpenter.k8s.aws/v1","kind":"EC2NodeClass","metadata":{"name":"default","labels":{"kiso.dev/reference":"true"}}}`, refNodePool},
			want:   `spec.nodeClassRef: Invalid value: "default": EC2NodeClass "default" has no spec`,
		},
		"NodePoolSpecAList": {
			reason: "A reference NodePool's spec is an object.",
			spec:   orgSpec,
			refs:   cluster{refNodeClass, `{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"default","labels":{"kiso.dev/reference":"true"}},"spec":[]}`},
			want:   `spec.nodePoolRef: Invalid value: "default": NodePool "default" cannot be cloned: its spec is a list, not an object`,
		},
		"TaintsNotAList": {
			reason: "kiso merges its taints into the reference's list.",
			spec:   orgSpec,
			refs:   nodePool(`"taints":[{"key":"arch","value":"arm64","effect":"NoSchedule"}]`, `"taints":"arch=arm64:NoSchedule"`),
			want:   `spec.nodePoolRef: Invalid value: "default": NodePool "default" cannot be cloned: its spec.template.spec.taints is a string, not a list of taints, each an object with a string key`,
		},
		"TaintWithoutKey": {
			reason: "Every taint kiso keeps needs a key.",
			spec:   orgSpec,
			refs:   nodePool(`"taints":[{"key":"arch","value":"arm64","effect":"NoSchedule"}]`, `"taints":[{"value":"arm64","effect":"NoSchedule"}]`),
			want:   `spec.nodePoolRef: Invalid value: "default": NodePool "default" cannot be cloned: its spec.template.spec.taints is a list with an element that is not a taint, not a list of taints, each an object with a string key`,
		},
		"NodeLabelWithANumberValue": {
			reason: "kiso merges its labels into the reference's node labels, which are strings.",
			spec:   orgSpec,
			refs:   nodePool(`"labels":{"tier":"general"}`, `"labels":{"tier":1}`),
			want:   `spec.nodePoolRef: Invalid value: "default": NodePool "default" cannot be cloned: its spec.template.metadata.labels is an object with a value that is not a string, not a map of strings`,
		},
		"NodePoolTemplateAString": {
			reason: "kiso writes the NodeClass reference into the template.",
			spec:   orgSpec,
			refs:   nodePool(`"spec":{"template":{`, `"spec":{"template":"general","x":{`),
			want:   `spec.nodePoolRef: Invalid value: "default": NodePool "default" cannot be cloned: its spec.template is a string, not an object`,
		},
		"NodeClassTagsWithNonStringValues": {
			reason: "kiso merges its tags into the reference's, which are strings.",
			spec:   orgSpec,
			refs:   nodeClass(`"tags":{"team":"platform"}`, `"tags":{"team":7,"owner":null}`),
			want:   `spec.nodeClassRef: Invalid value: "default": EC2NodeClass "default" cannot be cloned: its spec.tags is an object with a value that is not a string, not a map of strings`,
		},
		"ClusterSpecNotAnObject": {
			reason: "The organization's XKarpenterCluster must be readable.",
			spec:   clusterRef,
			refs:   append(cluster{`{"apiVersion":"kiso.dev/v1alpha1","kind":"XKarpenterCluster","metadata":{"name":"prod"},"spec":"prod"}`}, refs...),
			want:   `spec.clusterRef: cannot read XKarpenterCluster "prod" from its view EnvironmentConfig "kiso-cluster.prod": spec: Invalid value: "string": must be an object`,
		},
		"ClusterTagsNotStrings": {
			reason: "A cluster whose tags are not strings cannot be inherited from.",
			spec:   clusterRef,
			refs:   append(cluster{strings.Replace(clusterXR, `"tags":{`, `"tags":{"team":["a"],`, 1)}, refs...),
			want:   `spec.clusterRef: cannot read XKarpenterCluster "prod" from its view EnvironmentConfig "kiso-cluster.prod": spec.tags: Invalid value: "array": must be a string`,
		},
	}
	observed := composedOrg(t, false)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			x := tc.xr
			if x == "" {
				x = xr(tc.spec)
			}
			in := tc.input
			if in == "" {
				in = input
			}
			c := tc.refs
			if c == nil {
				c = refs
			}
			rsp := run(t, newRequest(t, in, x, observed), c)
			fntest.AssertChangesNothing(t, rsp, tc.want, observed)
		})
	}
}

func TestRequiredResourceOfTheWrongKindChangesNothing(t *testing.T) {
	// Crossplane answers a requirement by kind and name; a broken or
	// hostile answer must not be cloned as a NodeClass.
	req := newRequest(t, input, xr(orgSpec), composedOrg(t, false))
	first := run(t, req, cluster{refNodeClass, refNodePool})
	req.RequiredResources = map[string]*fnv1.Resources{}
	configMap := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"default","labels":{"kiso.dev/reference":"true"}},"data":{"spec":"x"}}`
	for name := range first.GetRequirements().GetResources() {
		req.RequiredResources[name] = &fnv1.Resources{}
	}
	req.RequiredResources[requireReferenceNodeClass] = &fnv1.Resources{Items: []*fnv1.Resource{{Resource: resource.MustStructJSON(configMap)}}}
	req.RequiredResources[requireReferenceNodePool] = &fnv1.Resources{Items: []*fnv1.Resource{{Resource: resource.MustStructJSON(refNodePool)}}}
	rsp, err := (&Function{log: logging.NewNopLogger()}).RunFunction(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	fntest.AssertChangesNothing(t, rsp, `spec.nodeClassRef: Invalid value: "default": the required resource returned for it is a v1 ConfigMap, not a karpenter.k8s.aws/v1 EC2NodeClass`, composedOrg(t, false))
}

func TestClusterTagsReachANodeClassWithoutTags(t *testing.T) {
	// A tagged cluster and a reference EC2NodeClass without spec.tags: the
	// clone gets the cluster's tags (this once wrote into a nil map).
	withoutTags := strings.Replace(refNodeClass, `"tags":{"team":"platform"},`, "", 1)
	spec := strings.Replace(orgSpec, `"nodeClassRef"`, `"clusterRef":{"name":"prod"},"nodeClassRef"`, 1)
	rsp := run(t, newRequest(t, input, xr(spec), nil), cluster{withoutTags, refNodePool, clusterXR})
	fntest.AssertNoFatal(t, rsp)
	for name, o := range fntest.Desired(t, rsp) {
		if o["kind"] != "EC2NodeClass" {
			continue
		}
		want := map[string]any{"environment": "prod", "kiso.dev/organization": "acme", "kiso.dev/customer": "acme-corp"}
		if diff := cmp.Diff(want, fntest.Dig(o, "spec", "tags")); diff != "" {
			t.Errorf("%s spec.tags (the cluster's, less Karpenter's reserved keys, and kiso's): -want, +got:\n%s", name, diff)
		}
		return
	}
	t.Errorf("no EC2NodeClass rendered")
}
