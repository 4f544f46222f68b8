package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crossplane/function-sdk-go/request"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/fntest"
	"github.com/kiso-dev/kiso/functions/internal/placement"
)

// The ownership check asks about the objects planObjects lists, before
// anything is rendered; it protects only if the plan is exactly what is
// rendered (placement ConfigMaps and Roles only in namespaces the platform gives the organization).
func TestPlanIsExactlyWhatIsRendered(t *testing.T) {
	dedicatedAndInjected := strings.Replace(dedicatedSpec, `"nodeClassRef"`, `"isolation":"stack","placement":{"inject":true},"nodeClassRef"`, 1)
	installed := strings.Replace(clusterXR, `"status":{`, `"status":{"karpenterReleaseResource":"prod-eu-karpenter-release",`, 1)
	specs := map[string]struct {
		spec, cluster string
	}{
		"Organization":         {spec: orgSpec, cluster: clusterXR},
		"Stack":                {spec: stackSpec, cluster: clusterXR},
		"DedicatedAndInjected": {spec: dedicatedAndInjected, cluster: clusterXR},
		"KarpenterInstalled":   {spec: dedicatedAndInjected, cluster: installed},
	}
	for name, tc := range specs {
		t.Run(name, func(t *testing.T) {
			spec := tc.spec
			// Two namespaces are given to acme, one to another organization: the plan holds the first two's objects only.
			c := cluster{refNodeClass, refNodePool, tc.cluster, namespace("acme-web"), namespace("acme-jobs"), namespaceOf("acme-batch", "globex")}
			given := map[string]bool{"acme-web": true, "acme-jobs": true}
			rsp := run(t, newRequest(t, input, xr(spec), nil), c)
			fntest.AssertNoFatal(t, rsp)
			rendered := map[string]string{}
			for resourceName, o := range fntest.Desired(t, rsp) {
				rendered[resourceName] = fntest.Dig(o, "kind").(string) + "/" + fntest.Dig(o, "metadata", "name").(string)
			}

			in, err := getInput(newRequest(t, input, xr(spec), nil))
			if err != nil {
				t.Fatal(err)
			}
			s := decodeForTest(t, spec)
			planned := map[string]string{}
			for _, o := range planObjects(s, planPools(s, placement.NewKeys(in.KeyDomain)), in, servedNamespaces(specNamespaces(s), given)) {
				planned[string(o.Resource)] = o.GVK.Kind + "/" + o.Name
			}
			if diff := cmp.Diff(planned, rendered); diff != "" {
				t.Errorf("planned and rendered objects differ: -planned, +rendered:\n%s", diff)
			}
		})
	}
}

func decodeForTest(t *testing.T, spec string) v1alpha1.XKarpenterIsolationSpec {
	t.Helper()
	oxr, err := request.GetObservedCompositeResource(newRequest(t, input, xr(spec), nil))
	if err != nil {
		t.Fatal(err)
	}
	s, err := decodeSpec(oxr)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
