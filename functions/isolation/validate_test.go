package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/placement"
)

// A specCase is a valid spec (organization acme, stacks web and jobs in stack
// isolation) changed by mutate, and the errors validateSpec finds in it.
type specCase struct {
	reason string
	mutate func(*v1alpha1.XKarpenterIsolationSpec)
	want   []string
}

// testValidateSpec runs validateSpec on every case.
func testValidateSpec(t *testing.T, cases map[string]specCase) {
	t.Helper()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := v1alpha1.XKarpenterIsolationSpec{
				Organization: "acme",
				Isolation:    v1alpha1.IsolationStack,
				Stacks:       []v1alpha1.Stack{{Name: "web"}, {Name: "jobs"}},
				NodeClassRef: v1alpha1.NodeClassReference{Name: "default"},
				NodePoolRef:  v1alpha1.NodePoolReference{Name: "default"},
			}
			tc.mutate(&spec)
			spec.Default()
			var got []string
			for _, e := range validateSpec(spec, placement.NewKeys(DefaultKeyDomain)) {
				got = append(got, e.Error())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nvalidateSpec(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestValidateSpec(t *testing.T) {
	weight := int32(101)
	testValidateSpec(t, map[string]specCase{
		"ValidSpecPasses": {
			reason: "A complete spec has no errors.",
			mutate: func(*v1alpha1.XKarpenterIsolationSpec) {},
		},
		"WarnNeedsEnforce": {
			reason: "Warn mode warns about what Enforce would refuse; with enforce false nothing would be.",
			mutate: func(s *v1alpha1.XKarpenterIsolationSpec) {
				s.Placement = &v1alpha1.Placement{Enforce: new(bool), Mode: v1alpha1.PlacementWarn}
			},
			want: []string{`spec.placement.mode: Invalid value: "Warn": mode Warn needs enforce true: with enforce false no pool is required of the organization's pods, so there is nothing to warn about`},
		},
		"PlacementModeUnknown": {
			reason: "A mode the schema does not list is named.",
			mutate: func(s *v1alpha1.XKarpenterIsolationSpec) { s.Placement = &v1alpha1.Placement{Mode: "Audit"} },
			want:   []string{`spec.placement.mode: Unsupported value: "Audit": supported values: "Enforce", "Warn"`},
		},
		"OrganizationRequired": {
			reason: "The organization names every pool.",
			mutate: func(s *v1alpha1.XKarpenterIsolationSpec) { s.Organization = "" },
			want:   []string{"spec.organization: Required value"},
		},
		"OrganizationTooLong": {
			reason: "An organization is a DNS-1123 label: at most 63 characters.",
			mutate: func(s *v1alpha1.XKarpenterIsolationSpec) { s.Organization = strings.Repeat("a", 64) },
			want:   []string{`spec.organization: Invalid value: "` + strings.Repeat("a", 64) + `": must be no more than 63 characters`},
		},
		"CustomerMustBeALabelValue": {
			reason: "Customer becomes a node label value.",
			mutate: func(s *v1alpha1.XKarpenterIsolationSpec) { s.Customer = "Acme Corp" },
			want:   []string{`spec.customer: Invalid value: "Acme Corp": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`},
		},
		"UnknownIsolation": {
			reason: "Isolation is organization or stack.",
			mutate: func(s *v1alpha1.XKarpenterIsolationSpec) { s.Isolation = "namespace" },
			want:   []string{`spec.isolation: Unsupported value: "namespace": supported values: "organization", "stack"`},
		},
		"TooManyStacks": {
			reason: "In stack isolation (a pool per stack) an organization's desired state must fit Crossplane's gRPC message.",
			mutate: func(s *v1alpha1.XKarpenterIsolationSpec) {
				s.Stacks = nil
				for i := range maxStackedStacks + 1 {
					s.Stacks = append(s.Stacks, v1alpha1.Stack{Name: fmt.Sprintf("s%d", i)})
				}
			},
			want: []string{"spec.stacks: Too many: 201: must have at most 200 items"},
		},
		"ThousandStacksShareOnePool": {
			reason: "Organization isolation renders one pool for up to 1000 stacks.",
			mutate: func(s *v1alpha1.XKarpenterIsolationSpec) {
				s.Isolation = v1alpha1.IsolationOrganization
				s.Stacks = nil
				for i := range maxStacks {
					s.Stacks = append(s.Stacks, v1alpha1.Stack{Name: fmt.Sprintf("s%d", i)})
				}
			},
		},
		"DuplicateStack": {
			reason: "Stack names are unique within an organization.",
			mutate: func(s *v1alpha1.XKarpenterIsolationSpec) { s.Stacks[1].Name = "web" },
			want:   []string{`spec.stacks[1].name: Duplicate value: "web"`},
		},
		"StackPoolNeedsStackIsolation": {
			reason: "A per-stack override in a shared pool would make the last stack win.",
			mutate: func(s *v1alpha1.XKarpenterIsolationSpec) {
				s.Isolation = v1alpha1.IsolationOrganization
				s.Stacks[1].Pool = &v1alpha1.PoolSettings{ExpireAfter: "24h"}
			},
			want: []string{"spec.stacks[1].pool: Forbidden: per-stack pool settings need spec.isolation: stack; in organization isolation every stack shares the pool set by spec.pool"},
		},
		"WrongNodeClassKind": {
			reason: "The NodeClass reference must name a NodeClass kind, not e.g. a NodePool.",
			mutate: func(s *v1alpha1.XKarpenterIsolationSpec) {
				s.NodeClassRef.APIVersion = "karpenter.sh/v1"
				s.NodeClassRef.Kind = "NodePool"
			},
			want: []string{
				`spec.nodeClassRef.apiVersion: Invalid value: "karpenter.sh/v1": karpenter.sh holds NodePools and NodeClaims, not NodeClasses`,
				`spec.nodeClassRef.kind: Invalid value: "NodePool": must be a Karpenter NodeClass kind, e.g. EC2NodeClass`,
			},
		},
		"MissingReferences": {
			reason: "Both references are required.",
			mutate: func(s *v1alpha1.XKarpenterIsolationSpec) {
				s.NodeClassRef.Name = ""
				s.NodePoolRef.Name = ""
			},
			want: []string{"spec.nodeClassRef.name: Required value", "spec.nodePoolRef.name: Required value"},
		},
		"BadPoolSettings": {
			reason: "Pool settings follow the NodePool CRD's patterns and enums.",
			mutate: func(s *v1alpha1.XKarpenterIsolationSpec) {
				s.Pool = &v1alpha1.PoolSettings{
					Limits:                 map[string]intstr.IntOrString{"cpu": intstr.FromString("lots")},
					ExpireAfter:            "30d",
					TerminationGracePeriod: "Never",
					Weight:                 &weight,
					Disruption: &v1alpha1.Disruption{
						ConsolidationPolicy: "Always",
						Budgets:             []v1alpha1.Budget{{Nodes: "120%", Schedule: "0 9 * * *", Reasons: []string{"Bored"}}},
					},
				}
			},
			want: []string{
				`spec.pool.limits[cpu]: Invalid value: "lots": must be a quantity, e.g. 100 or 400Gi`,
				`spec.pool.expireAfter: Invalid value: "30d": must be a duration like 720h or 24h30m, or Never`,
				`spec.pool.terminationGracePeriod: Invalid value: "Never": must be a duration like 48h or 30m`,
				`spec.pool.weight: Invalid value: 101: must be between 1 and 100`,
				`spec.pool.disruption.consolidationPolicy: Unsupported value: "Always": supported values: "WhenEmpty", "WhenEmptyOrUnderutilized", "Balanced"`,
				`spec.pool.disruption.budgets[0].nodes: Invalid value: "120%": must be a node count like 5 or a percentage like 10%`,
				`spec.pool.disruption.budgets[0]: Invalid value: "0 9 * * * ": schedule and duration must be set together`,
				`spec.pool.disruption.budgets[0].reasons[0]: Unsupported value: "Bored": supported values: "Underutilized", "Empty", "Drifted", "Unhealthy"`,
			},
		},
		"ReservedTagKeys": {
			reason: "Tags Karpenter or kiso set themselves are refused, naming the key.",
			mutate: func(s *v1alpha1.XKarpenterIsolationSpec) {
				s.Tags = map[string]string{"kubernetes.io/cluster/prod": "owned", "karpenter.sh/nodepool": "x", "kiso.dev/organization": "other", "team": "a"}
			},
			want: []string{
				"spec.tags[karpenter.sh/nodepool]: Forbidden: Karpenter sets this tag itself and its EC2NodeClass refuses it",
				"spec.tags[kiso.dev/organization]: Forbidden: kiso sets this tag from the organization, stack and customer",
				"spec.tags[kubernetes.io/cluster/prod]: Forbidden: Karpenter sets this tag itself and its EC2NodeClass refuses it",
			},
		},
		"DedicatedNeedsClusterAndEC2": {
			reason: "A dedicated role lives in the cluster's account, and only an EC2NodeClass has an IAM identity.",
			mutate: func(s *v1alpha1.XKarpenterIsolationSpec) {
				s.NodeRole = v1alpha1.NodeRoleDedicated
				s.NodeClassRef = v1alpha1.NodeClassReference{APIVersion: "karpenter.rackspace.com/v1", Kind: "RackspaceSpotNodeClass", Name: "spot"}
			},
			want: []string{
				"spec.clusterRef: Required value: a Dedicated node role is created in the cluster's AWS account, under its node-role path",
				"spec.nodeRole: Forbidden: a Dedicated node role needs an EC2NodeClass; RackspaceSpotNodeClass has no IAM identity",
			},
		},
		"UnknownNodeRole": {
			reason: "nodeRole is Shared or Dedicated.",
			mutate: func(s *v1alpha1.XKarpenterIsolationSpec) { s.NodeRole = "Own" },
			want:   []string{`spec.nodeRole: Unsupported value: "Own": supported values: "Shared", "Dedicated"`},
		},
		"TagsNeedAnEC2NodeClass": {
			reason: "Only EC2NodeClasses carry tags.",
			mutate: func(s *v1alpha1.XKarpenterIsolationSpec) {
				s.NodeClassRef = v1alpha1.NodeClassReference{APIVersion: "karpenter.rackspace.com/v1", Kind: "RackspaceSpotNodeClass", Name: "spot"}
				s.Tags = map[string]string{"team": "a"}
			},
			want: []string{"spec.tags: Forbidden: tags apply only to EC2NodeClass; RackspaceSpotNodeClass has no tags"},
		},
	})
}

func TestValidateClassesAndLimits(t *testing.T) {
	gpu := func(name string) v1alpha1.CapacityClass {
		return v1alpha1.CapacityClass{Name: name, NodeClassRef: v1alpha1.NodeClassReference{Name: "gpu"}, NodePoolRef: v1alpha1.NodePoolReference{Name: "gpu"}}
	}
	limits := func(kv ...string) map[string]intstr.IntOrString {
		out := map[string]intstr.IntOrString{}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i]] = intstr.FromString(kv[i+1])
		}
		return out
	}
	testValidateSpec(t, map[string]specCase{
		"ClassesAndLimitsPass": {
			reason: "Classes, stacks naming them, and pool limits within the organization's have no errors.",
			mutate: func(s *v1alpha1.XKarpenterIsolationSpec) {
				s.Classes = []v1alpha1.CapacityClass{gpu("gpu"), gpu("arm")}
				s.Stacks[0].Classes = []string{"arm"}
				s.Stacks[1].Classes = []string{}
				s.Limits = limits("cpu", "64", "nodes", "10")
				s.Pool = &v1alpha1.PoolSettings{Limits: limits("cpu", "64")}
				s.Classes[0].Pool = &v1alpha1.PoolSettings{Limits: limits("cpu", "16", "memory", "1Ti")}
			},
		},
		"ClassWithoutAReference": {
			reason: "A class is cloned from a reference pair of its own.",
			mutate: func(s *v1alpha1.XKarpenterIsolationSpec) {
				s.Classes = []v1alpha1.CapacityClass{{Name: "gpu", NodePoolRef: v1alpha1.NodePoolReference{Name: "gpu"}}, {Name: "arm"}}
			},
			want: []string{"spec.classes[0].nodeClassRef.name: Required value", "spec.classes[1].nodeClassRef.name: Required value", "spec.classes[1].nodePoolRef.name: Required value"},
		},
		"TwoClassesOfOneName": {
			reason: "A class's name names its pools: two would share them.",
			mutate: func(s *v1alpha1.XKarpenterIsolationSpec) {
				s.Classes = []v1alpha1.CapacityClass{gpu("gpu"), gpu("gpu")}
			},
			want: []string{`spec.classes[1].name: Duplicate value: "gpu"`},
		},
		"ClassNameNotADNSLabel": {
			reason: "A class's name is part of its pools' names and a node label's value.",
			mutate: func(s *v1alpha1.XKarpenterIsolationSpec) { s.Classes = []v1alpha1.CapacityClass{gpu("GPU.large")} },
			want:   []string{`spec.classes[0].name: Invalid value: "GPU.large": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`},
		},
		"ClassNamedDefault": {
			reason: "default names the class spec.nodeClassRef and spec.nodePoolRef give, in status and columns.",
			mutate: func(s *v1alpha1.XKarpenterIsolationSpec) { s.Classes = []v1alpha1.CapacityClass{gpu("default")} },
			want:   []string{`spec.classes[0].name: Invalid value: "default": default names the class spec.nodeClassRef and spec.nodePoolRef give`},
		},
		"StackNamesAClassThatDoesNotExist": {
			reason: "A stack gets pools of the organization's classes only, each once.",
			mutate: func(s *v1alpha1.XKarpenterIsolationSpec) {
				s.Classes = []v1alpha1.CapacityClass{gpu("gpu"), gpu("arm")}
				s.Stacks[0].Classes = []string{"gpu", "fpga", "gpu"}
			},
			want: []string{`spec.stacks[0].classes[1]: Unsupported value: "fpga": supported values: "gpu", "arm"`, `spec.stacks[0].classes[2]: Duplicate value: "gpu"`},
		},
		"StackClassesNeedStackIsolation": {
			reason: "In organization isolation the stacks share the organization's pool of each class.",
			mutate: func(s *v1alpha1.XKarpenterIsolationSpec) {
				s.Isolation = v1alpha1.IsolationOrganization
				s.Classes = []v1alpha1.CapacityClass{gpu("gpu")}
				s.Stacks[0].Classes = []string{"gpu"}
			},
			want: []string{"spec.stacks[0].classes: Forbidden: per-stack classes need spec.isolation: stack; in organization isolation every stack shares the organization's pool of each class"},
		},
		"PoolLimitAboveTheOrganizations": {
			reason: "spec.limits bounds every pool together, so no pool's own limit may be above it.",
			mutate: func(s *v1alpha1.XKarpenterIsolationSpec) {
				s.Classes = []v1alpha1.CapacityClass{gpu("gpu")}
				s.Limits = limits("cpu", "64", "memory", "256Gi")
				s.Pool = &v1alpha1.PoolSettings{Limits: limits("memory", "512Gi")}
				s.Stacks[1].Pool = &v1alpha1.PoolSettings{Limits: limits("cpu", "65")}
				s.Classes[0].Pool = &v1alpha1.PoolSettings{Limits: limits("cpu", "64", "nodes", "100")}
			},
			want: []string{
				`spec.pool.limits[memory]: Invalid value: "512Gi": above the organization's limit (spec.limits.memory: 256Gi), which bounds all its pools together`,
				`spec.stacks[1].pool.limits[cpu]: Invalid value: "65": above the organization's limit (spec.limits.cpu: 64), which bounds all its pools together`,
			},
		},
		"OrganizationLimitNotAQuantity": {
			reason: "spec.limits are quantities, as a NodePool's are.",
			mutate: func(s *v1alpha1.XKarpenterIsolationSpec) { s.Limits = limits("cpu", "lots", "memory", "-1Gi") },
			want: []string{
				`spec.limits[cpu]: Invalid value: "lots": must be a quantity, e.g. 100 or 400Gi`,
				`spec.limits[memory]: Invalid value: "-1Gi": must not be negative`,
			},
		},
		"TooManyPoolsInStackIsolation": {
			reason: "Stack isolation renders a pool per stack and class: the whole must fit one response.",
			mutate: func(s *v1alpha1.XKarpenterIsolationSpec) {
				s.Classes = []v1alpha1.CapacityClass{gpu("gpu"), gpu("arm"), gpu("spot")}
				s.Stacks = nil
				for i := range 60 {
					s.Stacks = append(s.Stacks, v1alpha1.Stack{Name: fmt.Sprintf("s%d", i)})
				}
			},
			want: []string{"spec.stacks: Invalid value: 240: stack isolation renders a pool per stack and per class each stack uses: 240 pools, at most 200 fit one organization's desired state"},
		},
		"DedicatedNeedsEC2ForEveryClass": {
			reason: "An organization's own IAM identity is an EC2NodeClass's; a class of another provider has none.",
			mutate: func(s *v1alpha1.XKarpenterIsolationSpec) {
				s.NodeRole = v1alpha1.NodeRoleDedicated
				s.ClusterRef = &v1alpha1.ClusterReference{Name: "prod"}
				s.Classes = []v1alpha1.CapacityClass{{Name: "sim", NodeClassRef: v1alpha1.NodeClassReference{APIVersion: "karpenter.kwok.sh/v1alpha1", Kind: "KWOKNodeClass", Name: "k"}, NodePoolRef: v1alpha1.NodePoolReference{Name: "k"}}}
			},
			want: []string{"spec.classes[0].nodeClassRef.kind: Forbidden: a Dedicated node role needs an EC2NodeClass for every class; KWOKNodeClass has no IAM identity"},
		},
		"TagsNeedAnEC2NodeClassOfSomeClass": {
			reason: "Tags go on the EC2NodeClasses of an organization's classes: one of them is enough.",
			mutate: func(s *v1alpha1.XKarpenterIsolationSpec) {
				s.NodeClassRef = v1alpha1.NodeClassReference{APIVersion: "karpenter.rackspace.com/v1", Kind: "RackspaceSpotNodeClass", Name: "spot"}
				s.Classes = []v1alpha1.CapacityClass{gpu("gpu")}
				s.Tags = map[string]string{"team": "a"}
			},
		},
	})
}
