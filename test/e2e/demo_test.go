package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Environment variables of `make demo`.
const (
	// demoEnv set to 1 prints the demo's story to the terminal instead of the test log.
	demoEnv = "KISO_DEMO"
	// demoStayEnv set to 1 keeps the control plane up after the story, until interrupted.
	demoStayEnv = "KISO_DEMO_STAY"
)

// The demo's organizations: each has one stack, served by a namespace of that name.
var demoOrganizations = []struct{ name, stack, namespace string }{
	{"tyrell", "web", "tyrell-web"},
	{"cyberdyne", "api", "cyberdyne-api"},
}

// TestDemo is what `make demo` shows, and `make test` runs it too, so the demo cannot rot: the platform's
// reference pool, two organizations' claims, a Deployment each, the pods on their organization's own nodes through
// the real Karpenter, and a pod of one organization that asks for the other's nodes, refused with kiso's message.
func TestDemo(t *testing.T) {
	sharingPlacementClusterT(t)
	requireNodesT(t)
	show := newDemoPrinter(t)
	platform := readTestdataT(t, "demo", "platform.yaml")
	organizations := readTestdataT(t, "demo", "organizations.yaml")

	show.say("The platform's reference NodeClass and NodePool, which every organization's pool is cloned from:")
	show.kubectl(t, "apply", "-f", "test/e2e/testdata/demo/platform.yaml")
	env.ApplyT(t, platform)
	t.Cleanup(func() { deleteAtCleanup(t, platform) })

	show.say("Two organizations, tyrell and cyberdyne: their namespaces labelled, one claim each:")
	show.kubectl(t, "apply", "-f", "test/e2e/testdata/demo/organizations.yaml")
	applied := time.Now()
	env.ApplyT(t, organizations)
	t.Cleanup(func() { deleteAtCleanup(t, organizations) })

	orgs := map[string]organization{}
	step(t, "EachOrganizationGetsAPoolKarpenterMakesReady", func(t *testing.T) {
		for _, o := range demoOrganizations {
			orgs[o.name] = waitForOrganizationT(t, o.name, o.name, o.name)
			for _, pool := range orgs[o.name].Pools {
				assertReadyByKarpenterT(t, pool)
			}
			env.Cluster.WaitForConditionT(t, policyInForceTimeout, IsolationClaimKind, o.name, o.name, "PlacementInjected")
			// The apiserver loads admission policies a moment after they are written: the namespace's placement is
			// in force once a pod that carries none is admitted with its pool's.
			waitForDefaultServiceAccountT(t, o.namespace)
			waitForAdmittedPlacementT(t, newPod("placement-probe", o.namespace, nil), orgs[o.name].Stacks[o.stack].NodeSelector)
		}
		show.say(fmt.Sprintf("Their pools are Ready (%s after the claims were applied):", time.Since(applied).Round(time.Second)))
		show.kubectl(t, "get", "nodepools", "-l", "app.kubernetes.io/managed-by=kiso")
	})

	step(t, "EachDeploymentRunsOnItsOrganizationsNodes", func(t *testing.T) {
		for _, o := range demoOrganizations {
			// Admission injects the placement of the namespace's pool: the Deployment carries none.
			createDeploymentT(t, o.namespace, "app", 3, "500m", nil, nil)
		}
		show.say("A Deployment of 3 pods in each organization's namespace, with no node selector or toleration of its own.")
		for _, o := range demoOrganizations {
			org := orgs[o.name]
			sp := org.Stacks[o.stack]
			for _, pod := range waitForPodsOnPoolT(t, o.namespace, sp.Pool) {
				assertTenantNodeT(t, pod, org, o.stack, sp)
			}
			assertUsageReportedT(t, org)
		}
		show.say("Karpenter launched nodes for each organization's pool, and each pod runs on its organization's nodes:")
		show.kubectl(t, "get", "pods", "-n", "tyrell-web", "-o", "wide")
		show.kubectl(t, "get", "pods", "-n", "cyberdyne-api", "-o", "wide")
		show.kubectl(t, "get", "nodes", "-L", "kiso.dev/organization", "-L", nodePoolLabel)
		show.say("The claims report their pools, nodes and CPU against the organization's limit:")
		show.kubectl(t, "get", "karpenterisolations", "-A")
	})

	step(t, "APodAskingForAnotherOrganizationsNodesIsRefused", func(t *testing.T) {
		cyberdyne := orgs["cyberdyne"].Stacks["api"]
		intruder := newPod("intruder", "tyrell-web", cyberdyne.NodeSelector, cyberdyne.Tolerations...)
		out := submitPod(t, intruder, false)
		if out.ExitCode == 0 || !strings.Contains(out.Stderr, "ValidatingAdmissionPolicy 'kiso-") {
			t.Fatalf("a tyrell pod selecting cyberdyne's nodes: exit %d %s; want it refused by one of kiso's policies", out.ExitCode, strings.TrimSpace(out.Stderr))
		}
		show.say("A tyrell pod that asks for cyberdyne's nodes (their node selector and tolerations) is refused:")
		fmt.Fprintf(show.out, "$ kubectl create -f intruder.yaml   # in tyrell-web, selecting and tolerating cyberdyne's pool\n%s\n", strings.TrimSpace(out.Stderr))
	})

	step(t, "TheInstallsVerifyCommandsAnswer", func(t *testing.T) {
		show.say("What docs/install.md tells a platform engineer to check after installing (its Verify section):")
		for _, args := range verifyCommandsT(t) {
			if out := show.kubectl(t, args...); strings.TrimSpace(out) == "" {
				t.Errorf("docs/install.md's `kubectl %s` lists nothing here", strings.Join(args, " "))
			}
		}
	})

	step(t, "TheRunbooksCommandListsAnOrganizationsConditions", func(t *testing.T) {
		xr, _, _ := unstructured.NestedString(env.Cluster.GetT(t, IsolationClaimKind, "tyrell", "tyrell").Object, "spec", "resourceRef", "name")
		if xr == "" {
			t.Fatal("claim tyrell/tyrell names no XR in spec.resourceRef")
		}
		out := runDocBlockT(t, "docs/runbooks.md", "kubectl get xkarpenterisolation <xr>", map[string]string{"<xr>": xr})
		for _, want := range []string{"Ready=True", "Synced=True", "ReferencesResolved=True", "PlacementInjected=True"} {
			if !strings.Contains(out, want) {
				t.Errorf("docs/runbooks.md's command for XR %s prints %q; want it to hold %s", xr, out, want)
			}
		}
	})

	step(t, "TheDashboardLoadsAsTheMonitoringPageSays", func(t *testing.T) {
		monitoring := []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: monitoring\n")
		env.ApplyT(t, monitoring)
		t.Cleanup(func() { deleteAtCleanup(t, monitoring) })
		runDocBlockT(t, "docs/monitoring.md", "kubectl create configmap kiso-organizations", nil)
		dashboard := string(readRepoFileT(t, "monitoring/dashboards/kiso-organizations.json"))
		// What a dashboard sidecar lists: the namespace's ConfigMaps of the label (kubectl takes no name beside a
		// selector).
		out, err := env.Kubectl.Run(t.Context(), nil, "get", "configmaps", "-n", "monitoring", "-l", "grafana_dashboard=1", "-o", "json")
		if err != nil {
			t.Fatal(err)
		}
		var labelled struct {
			Items []struct {
				Metadata struct{ Name string } `json:"metadata"`
				Data     map[string]string     `json:"data"`
			} `json:"items"`
		}
		if err := json.Unmarshal(out, &labelled); err != nil {
			t.Fatal(err)
		}
		got, found := "", false
		for _, cm := range labelled.Items {
			if cm.Metadata.Name == "kiso-organizations" {
				got, found = cm.Data["kiso-organizations.json"], true
			}
		}
		if !found {
			t.Fatal("no ConfigMap kiso-organizations labelled grafana_dashboard=1 in namespace monitoring")
		}
		if got != dashboard {
			t.Errorf("ConfigMap monitoring/kiso-organizations, labelled grafana_dashboard=1, holds %d bytes under kiso-organizations.json; want the dashboard's %d", len(got), len(dashboard))
		}
	})

	if os.Getenv(demoStayEnv) == "1" {
		stayUntilInterruptedT(t, show)
	}
}

// demoPrinter tells the demo's story: to the terminal under `make demo`, else to the test's log.
type demoPrinter struct {
	out io.Writer
}

func newDemoPrinter(t *testing.T) *demoPrinter {
	if os.Getenv(demoEnv) == "1" {
		return &demoPrinter{out: os.Stdout}
	}
	return &demoPrinter{out: testLogWriter{t}}
}

func (p *demoPrinter) say(s string) { fmt.Fprintf(p.out, "\n%s\n", s) }

// kubectl prints a command as a user would type it and, unless it is an apply (the scenario applies through the
// harness), runs it and prints and returns its output.
func (p *demoPrinter) kubectl(t *testing.T, args ...string) string {
	t.Helper()
	line := "$ kubectl " + strings.Join(args, " ")
	if args[0] == "apply" {
		fmt.Fprintln(p.out, line)
		return ""
	}
	out, err := env.Kubectl.Run(t.Context(), nil, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v", strings.Join(args, " "), err)
	}
	fmt.Fprintf(p.out, "%s\n%s", line, out)
	return string(out)
}

// verifyCommandsT reads the commands of docs/install.md's Verify section, each a kubectl command with its
// arguments, so the demo runs exactly what the docs print.
func verifyCommandsT(t *testing.T) [][]string {
	t.Helper()
	doc := string(readRepoFileT(t, "docs/install.md"))
	_, section, found := strings.Cut(doc, "\n## Verify\n")
	_, block, fenced := strings.Cut(section, "```sh\n")
	block, _, closed := strings.Cut(block, "```")
	if !found || !fenced || !closed {
		t.Fatal("docs/install.md has no ## Verify section with a sh block")
	}
	var commands [][]string
	for line := range strings.Lines(block) {
		command, _, _ := strings.Cut(line, " #")
		args := strings.Fields(command)
		if len(args) == 0 {
			continue
		}
		if args[0] != "kubectl" || strings.ContainsAny(command, `'"$|<>;&`) {
			t.Fatalf("docs/install.md's Verify runs %q; the demo runs only plain kubectl commands", strings.TrimSpace(command))
		}
		commands = append(commands, args[1:])
	}
	if len(commands) == 0 {
		t.Fatal("docs/install.md's Verify section lists no command")
	}
	return commands
}

// testLogWriter writes to a test's log.
type testLogWriter struct{ t *testing.T }

func (w testLogWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

// stayUntilInterruptedT keeps the control plane up for the user to explore, with a kubectl that reaches it
// (the servers listen only inside this run's network namespace), until Ctrl-C or SIGTERM; the scenario's and the
// harness's cleanups then stop every server the run started.
func stayUntilInterruptedT(t *testing.T, show *demoPrinter) {
	t.Helper()
	kubectl := writeNamespaceKubectlT(t)
	show.say(fmt.Sprintf(`The control plane stays up until you press Ctrl-C. In another terminal, try:

  %[1]s get karpenterisolations -A
  %[1]s get karpenterisolation tyrell -n tyrell -o yaml     # conditions, pools, usage
  %[1]s scale deployment app -n tyrell-web --replicas=12   # past tyrell's 4 CPUs: the rest stay Pending
  %[1]s get nodeclaims,nodes -L kiso.dev/organization
  %[1]s delete karpenterisolation cyberdyne -n cyberdyne   # its nodes drain and go, tyrell's stay

(%[1]s is kubectl with this run's kubeconfig, inside the run's network namespace.)`, kubectl))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	show.say("Stopping: deleting the claims, then every server this run started.")
}

// writeNamespaceKubectlT writes a kubectl wrapper that enters this process's network namespace (and its user
// namespace, where the run made one) and uses the run's kubeconfig, and returns its path.
func writeNamespaceKubectlT(t *testing.T) string {
	t.Helper()
	enter := "-n"
	if inUserNamespaceT(t) {
		enter = "-U -n --preserve-credentials"
	}
	script := fmt.Sprintf("#!/bin/sh\n# kubectl for the demo's control plane, which listens only inside its network namespace.\nexec nsenter -t %d %s %s --kubeconfig %s \"$@\"\n",
		os.Getpid(), enter, env.Kubectl.binary, env.Kubeconfig)
	path := filepath.Join(filepath.Dir(env.Kubeconfig), "kubectl")
	if err := os.WriteFile(path, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	return path
}

// inUserNamespaceT reports whether this process runs in a user namespace of its own, as the harness makes one
// to hold the network namespace when it is not root: the initial namespace maps every uid onto itself.
func inUserNamespaceT(t *testing.T) bool {
	t.Helper()
	uidMap, err := os.ReadFile("/proc/self/uid_map")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(strings.Fields(string(uidMap)), " ") != "0 0 4294967295"
}
