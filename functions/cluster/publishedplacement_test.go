package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kiso-dev/kiso/functions/internal/fntest"
)

// TestTheClusterPublishesItsPlacementOnceThePolicyIsThere: the cluster says in its status, and so in the view its
// organizations read, what its placement policy enforces, as observed where the policy is composed: nothing
// before the policy is there; locally once Crossplane observes it; in a workload cluster once provider-kubernetes
// reports its Object Ready and has observed the policy there, not while it is only created, and what it observed
// there: an update it could not apply leaves the old policy in force, and that is what is published.
// localClusterSpec is a cluster served where Crossplane runs.
const localClusterSpec = `{"clusterName":"prod","region":"eu-west-3","accountId":"111122223333"}`

func TestTheClusterPublishesItsPlacementOnceThePolicyIsThere(t *testing.T) {
	want := map[string]any{"cluster": "prod", "keyDomain": "kiso.dev", "platformNamespaces": []any{"kube-system"}}
	cases := map[string]struct {
		spec       string
		conditions []any // the observed policy's, as its provider reports them
		// inForce is the key domain of the policy provider-kubernetes last observed in the workload cluster, ""
		// for none observed yet.
		inForce string
		want    map[string]any
	}{
		"LocalNotThereYet":                   {spec: localClusterSpec, want: nil},
		"LocalObserved":                      {spec: localClusterSpec, conditions: []any{}, want: want},
		"WorkloadCreated":                    {spec: workloadClusterSpec, conditions: []any{map[string]any{"type": "Ready", "status": "False"}}, want: nil},
		"WorkloadReadyNotObservedYet":        {spec: workloadClusterSpec, conditions: []any{map[string]any{"type": "Ready", "status": "True"}, map[string]any{"type": "Synced", "status": "True"}}, want: nil},
		"WorkloadObjectReady":                {spec: workloadClusterSpec, conditions: []any{map[string]any{"type": "Ready", "status": "True"}, map[string]any{"type": "Synced", "status": "True"}}, inForce: "kiso.dev", want: want},
		"WorkloadUpdateFailedOldPolicyThere": {spec: workloadClusterSpec, conditions: []any{map[string]any{"type": "Ready", "status": "True"}, map[string]any{"type": "Synced", "status": "False"}}, inForce: "old.example", want: map[string]any{"cluster": "prod", "keyDomain": "old.example", "platformNamespaces": []any{"kube-system"}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			first := run(t, newRequest(t, xr(tc.spec), nil))
			fntest.AssertNoFatal(t, first)
			observed := map[string]string{}
			if tc.conditions != nil {
				policy := fntest.Desired(t, first)[string(crPlacementPolicy)]
				if policy == nil {
					t.Fatalf("no %s composed", crPlacementPolicy)
				}
				policy["status"] = map[string]any{"conditions": tc.conditions}
				if tc.inForce != "" {
					there := runtime.DeepCopyJSON(fntest.Dig(policy, "spec", "forProvider", "manifest").(map[string]any))
					fntest.Dig(there, "metadata", "annotations").(map[string]any)["kiso.dev/key-domain"] = tc.inForce
					policy["status"].(map[string]any)["atProvider"] = map[string]any{"manifest": there}
				}
				observed[string(crPlacementPolicy)] = fntest.ToJSON(t, policy)
			}
			rsp := run(t, newRequest(t, xr(tc.spec), observed))
			fntest.AssertNoFatal(t, rsp)
			status, _ := fntest.Dig(fntest.AsMap(t, rsp.GetDesired().GetComposite().GetResource()), "status", "placement").(map[string]any)
			if diff := cmp.Diff(tc.want, status); diff != "" {
				t.Errorf("status.placement (-want +got):\n%s", diff)
			}
			view, _ := fntest.Dig(fntest.Desired(t, rsp)[string(crClusterView)], "data", "status", "placement").(map[string]any)
			if diff := cmp.Diff(tc.want, view); diff != "" {
				t.Errorf("the view's status.placement (-want +got):\n%s", diff)
			}
		})
	}
}
