package main

import (
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/kiso-dev/kiso/functions/internal/fntest"
	"github.com/kiso-dev/kiso/functions/internal/server"
)

// The bounded-read promise for a rollout: a wave judged on 2,000 NodeClaims
// of 400 organizations' pools.
const (
	nodeClaimsAtScale    = 2000
	organizationsAtScale = 400
)

// TestRolloutReadsFitTheServerAtScale: a cluster judging a rollout wave reads
// every kiso NodePool and every NodeClaim, whole as Crossplane passes them;
// with 2,000 NodeClaims of 400 organizations that is one request the function
// server accepts, and the wave is judged on them (the canary's drifted node
// holds it).
func TestRolloutReadsFitTheServerAtScale(t *testing.T) {
	req, rsp := rolloutAtScale(t)
	size := proto.Size(req)
	t.Logf("request with %d NodePools and %d NodeClaims: %d bytes (%.0f%% of the server's %d MiB)", organizationsAtScale, nodeClaimsAtScale, size, 100*float64(size)/float64(server.MaxRecvBytes), server.MaxRecvBytes>>20)
	if size > server.MaxRecvBytes {
		t.Errorf("request of %d bytes exceeds the %d bytes the function server accepts", size, server.MaxRecvBytes)
	}
	if got := len(req.GetRequiredResources()[requireNodeClaims].GetItems()); got != nodeClaimsAtScale {
		t.Errorf("%d NodeClaims read, want %d", got, nodeClaimsAtScale)
	}
	st := fntest.AsMap(t, rsp.GetDesired().GetComposite().GetResource())["status"].(map[string]any)
	rollouts, _ := st["rollouts"].([]any)
	if len(rollouts) != 1 {
		t.Fatalf("status.rollouts %v, want one", st["rollouts"])
	}
	if held := rollouts[0].(map[string]any)["heldBy"]; held != "organization o000: 1 of NodePool kiso-o000's nodes are drifted and not yet replaced" {
		t.Errorf("the canary's wave held by %q, want its drifted node", held)
	}
}

// rolloutAtScale is the last request of a reconcile of a cluster judging its
// canary's wave, with organizationsAtScale pools and nodeClaimsAtScale
// NodeClaims, and the function's response to it.
func rolloutAtScale(t testing.TB) (*fnv1.RunFunctionRequest, *fnv1.RunFunctionResponse) {
	t.Helper()
	cur := currentOfReferenceT(t)
	world := fntest.Cluster{refNodeClass, refNodePool}
	org := func(i int) string { return fmt.Sprintf("o%03d", i) }
	world = append(world, fntest.Copies(t, "nodepool", organizationsAtScale, func(i int, u *unstructured.Unstructured) {
		u.SetName("kiso-" + org(i))
		labels := u.GetLabels()
		labels["kiso.dev/organization"] = org(i)
		u.SetLabels(labels)
		an := u.GetAnnotations()
		an["kiso.dev/cloned-from"], an["kiso.dev/revision"] = testRef, "old"
		if i == 0 {
			an["kiso.dev/revision"] = cur.ID // the canary has moved
		}
		u.SetAnnotations(an)
	})...)
	world = append(world, fntest.Copies(t, "nodeclaim", nodeClaimsAtScale, func(i int, u *unstructured.Unstructured) {
		labels := u.GetLabels()
		labels["karpenter.sh/nodepool"] = "kiso-" + org(i%organizationsAtScale)
		u.SetLabels(labels)
		if i == 0 {
			_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"type": "Drifted", "status": "True"}}, "status", "conditions")
		}
	})...)
	spec := `{"clusterName":"prod","region":"eu-west-3","accountId":"111122223333","rollout":{"waves":[{"organizations":["o000"]},{"percent":100}]}}`
	observedXR := fntest.JSONMap(t, xr(spec))
	// The canary is on the current revision; its wave is open and judged.
	req, rsp := fntest.Settle(t, &Function{log: logging.NewNopLogger()}, newRequest(t, fntest.ToJSON(t, observedXR), nil), withPrometheusOperator(world))
	fntest.AssertNoFatal(t, rsp)
	return req, rsp
}

// BenchmarkRolloutReadsAtScale measures the call of TestRolloutReadsFitTheServerAtScale as Crossplane pays for
// it (see fntest.BenchOverFloor): its bytes allocated per call are the function's memory at that size.
func BenchmarkRolloutReadsAtScale(b *testing.B) {
	req, _ := rolloutAtScale(b)
	fntest.BenchOverFloor(b, &Function{log: logging.NewNopLogger()}, req)
}
