package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A pool's NodePool and NodeClass as a release rendered them; the cases below change one part each.
const releasedPool = `---
apiVersion: kiso.dev/v1alpha1
kind: XKarpenterIsolation
metadata:
  name: acme
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: kiso-acme
  annotations:
    crossplane.io/composition-resource-name: nodepool-kiso-acme
    kiso.dev/revision: aaaa
spec:
  limits:
    nodes: 10
  template:
    metadata:
      labels:
        kiso.dev/organization: acme
    spec:
      nodeClassRef:
        name: kiso-acme
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: kiso-acme
  annotations:
    crossplane.io/composition-resource-name: nodeclass-kiso-acme
spec:
  tags:
    team: a
`

func TestAnUpgradeMayChangeNothingANodeIsLaunchedFrom(t *testing.T) {
	cases := map[string]struct {
		upgraded string
		problems []string // what each problem names, in order
	}{
		"the same objects": {upgraded: releasedPool},
		"a new revision and limit replace nothing": {
			upgraded: strings.NewReplacer("kiso.dev/revision: aaaa", "kiso.dev/revision: bbbb", "nodes: 10", "nodes: 20").Replace(releasedPool),
		},
		"a node template label": {
			upgraded: strings.Replace(releasedPool, "kiso.dev/organization: acme", "kiso.dev/organization: acme\n        kiso.dev/new: x", 1),
			problems: []string{"NodePool nodepool-kiso-acme changes"},
		},
		"a NodeClass tag, even with a new revision": {
			upgraded: strings.NewReplacer("team: a", "team: b", "kiso.dev/revision: aaaa", "kiso.dev/revision: bbbb").Replace(releasedPool),
			problems: []string{"EC2NodeClass nodeclass-kiso-acme changes"},
		},
		"a pool no longer composed": {
			upgraded: strings.SplitAfter(releasedPool, "name: acme\n")[0],
			problems: []string{"EC2NodeClass nodeclass-kiso-acme is no longer composed", "NodePool nodepool-kiso-acme is no longer composed"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			stayed := example{Label: "examples/isolation/acme", Out: filepath.Join(dir, "stayed.yaml")}
			upgraded := example{Label: stayed.Label, Out: filepath.Join(dir, "upgraded.yaml")}
			if err := os.WriteFile(stayed.Out, []byte(releasedPool), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(upgraded.Out, []byte(tc.upgraded), 0o600); err != nil {
				t.Fatal(err)
			}
			pools, problems, err := compareUpgrade(stayed, upgraded)
			if err != nil {
				t.Fatal(err)
			}
			if pools != 1 {
				t.Errorf("compared %d pools, want 1", pools)
			}
			if len(problems) != len(tc.problems) {
				t.Fatalf("problems:\n%s\nwant %d naming %q", strings.Join(problems, "\n"), len(tc.problems), tc.problems)
			}
			for i, want := range tc.problems {
				if !strings.Contains(problems[i], stayed.Label+": "+want) {
					t.Errorf("problem %d = %q, want it to say %q", i, problems[i], want)
				}
			}
		})
	}
}
