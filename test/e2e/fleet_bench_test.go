package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kiso-dev/kiso/internal/process"
)

// The fleet benchmark's settings: make bench-fleet sets fleetEnv (controlplane.go); the steps are cumulative
// organization counts (default 100,300,600,1000).
const (
	fleetStepsEnv = "KISO_FLEET_STEPS"
	// fleetDirectEnv set to 1 applies each organization as an XKarpenterIsolation, without a claim, to measure
	// what the claim costs.
	fleetDirectEnv = "KISO_FLEET_DIRECT"
	// fleetClusterEnv binds every organization to the placement cluster (clusterRef) when "bound", and also
	// gives that cluster a rollout when "rollout": the topology of a platform whose organizations get their
	// node role and controller permissions from kiso's XKarpenterCluster, and stage reference changes in waves.
	// With "remote" the organizations are bound to a workload cluster's XKarpenterCluster: everything they
	// compose and read there goes through provider-kubernetes (see steps_fleet_remote_test.go).
	fleetClusterEnv = "KISO_FLEET_CLUSTER"
	// fleetIdle is the idle window over which the fleet's cost is measured, one Crossplane poll; a remote fleet's
	// is one provider-kubernetes poll if longer (fleetCluster.idleWindow).
	fleetIdle = time.Minute
	// onboardingProfiled is how long the apiserver is profiled from the first kubectl apply of a step.
	onboardingProfiled = time.Minute
)

// TestFleetBenchmark applies organizations in steps, as a platform onboarding its customers would (organization
// isolation, one stack each, the claim in the stack's namespace, namespaces given by the platform), on the e2e
// control plane with the real Karpenter (KWOK) and Crossplane at its default poll, and prints for each step:
// how long kubectl apply took, how long until every claim's pool was Ready by Karpenter, the objects composed
// per organization, each server's CPU-seconds while onboarding and over an idle minute, its peak memory, and
// how long a pending pod of the newest organization takes to be bound on a new node of its pool. Its numbers
// are its result; it fails only if the fleet does not come up.
func TestFleetBenchmark(t *testing.T) {
	if os.Getenv(fleetEnv) != "1" {
		t.Skipf("set %s=1 (make bench-fleet) to run the fleet benchmark", fleetEnv)
	}
	measured := measuredCommitT(t)
	requireNodesT(t)
	steps, err := fleetSteps(os.Getenv(fleetStepsEnv))
	if err != nil {
		t.Fatal(err)
	}
	references := readTestdataT(t, "karpenter", "references.yaml")
	env.ApplyT(t, references)
	t.Cleanup(func() { deleteAtCleanup(t, references) })
	direct := os.Getenv(fleetDirectEnv) == "1"
	applied := "a claim each"
	if direct {
		applied = "an XR each, no claim"
	}
	bound := fleetBindingT(t, os.Getenv(fleetClusterEnv))
	waitForClusterComposedT(t, bound)
	if bound.name != "" {
		readyClusterAsProviderAWSWouldT(t, bound.name)
	}
	fmt.Printf("\nFleet: organization isolation, one stack each, %s, %s; Crossplane polls every %s; %d cores\n", applied, bound.binding, crossplanePollInterval(), runtime.NumCPU())
	fmt.Printf("%-6s %10s %12s %9s %9s %9s %-40s %-40s %-40s %10s\n", "orgs", "apply", "pools Ready", "settled", "events", "objs/org", "onboarding CPU-s (per new org)", "idle cores over "+bound.idleWindow().String(), "peak RSS MB", "pod bound")
	var requests, onboarding, writes, bindings, remote []string
	summary := fleetSummary{mode: fleetMode(os.Getenv(fleetClusterEnv)), poll: crossplanePollInterval(), cores: runtime.NumCPU(), commit: measured}
	created := 0
	for _, n := range steps {
		// The platform gives each organization its namespace in the workload cluster before it claims it there.
		bound.giveNamespacesT(t, created, n)
		usage := usageNow()
		before := usage.management()
		breakerBefore := breakerT(t)
		onboardingFrom := fleetRequestsT(t)
		remoteFrom := bound.remoteReadingT(t)
		callsFrom := functionCallsT(t)
		start := time.Now()
		// The apiserver is profiled over the first onboardingProfiled of onboarding, while it is busiest.
		// Its profile is kept in the run's directory (KISO_E2E_KEEP=1 keeps it) for go tool pprof.
		onboardingDir := filepath.Join(env.controlPlane.dir, fmt.Sprintf("profile-onboarding-%d", n))
		if err := os.MkdirAll(onboardingDir, 0o750); err != nil {
			t.Fatal(err)
		}
		onboardingProfile := startAPIServerProfileT(t, onboardingProfiled, onboardingDir)
		// In batches of fleetBatch organizations, one kubectl apply each, as a platform's pipeline would.
		for from := created; from < n; from += fleetBatch {
			to := min(from+fleetBatch, n)
			if out := env.TryT(t, fleetManifest(from, to, direct, bound.name), "apply", "--server-side", "-f", "-"); out.ExitCode != 0 {
				t.Fatalf("kubectl apply of organizations %d..%d: %s", from, to-1, out.Stderr)
			}
		}
		applied := time.Since(start)
		waitForFleetReadyT(t, n)
		ready := time.Since(start)
		onboardedUsage := usageNow()
		onboarded := onboardedUsage.management()
		objects := composedPerOrganizationT(t)
		// Idle starts once every organization waits on nothing and Crossplane has no reconcile queued.
		waitForFleetSettledT(t, n, bound)
		settled := time.Since(start)
		onboardingTop := onboardingProfile()
		onboardingEnd := fleetRequestsT(t)
		remoteSettled := bound.remoteReadingT(t)
		onboarding = append(onboarding, onboardingEnd.since(onboardingFrom, fmt.Sprintf("%-6d apiserver", n), perOrganization(n-created))+
			fmt.Sprintf("\n%-6s isolation function calls %.1f/org", "", float64(functionCallsT(t)-callsFrom)/float64(n-created))+
			fmt.Sprintf("\n%-6s kube-apiserver's CPU profile over the first %s of onboarding:\n%s", "", onboardingProfiled, onboardingTop))
		if os.Getenv(auditEnv) == "1" {
			writes = append(writes, fmt.Sprintf("%-6d %s", n, xrWritesT(t, created, n, start).perOrganization(n-created)))
		}
		waitForEventsWrittenT(t)
		eventsWritten := time.Since(start)
		breaker := breakerT(t).since(breakerBefore)

		idleFromUsage := usageNow()
		idleFrom := idleFromUsage.management()
		requestsFrom := fleetRequestsT(t)
		remoteIdleFrom := bound.remoteReadingT(t)
		idleCallsFrom := functionCallsT(t)
		eventsFrom := readEventsT(t)
		idleStart := time.Now()
		// The measurement window itself: nothing changes, and what the servers spend is the result. Karpenter,
		// whose client reports no requests, is profiled over most of its first minute.
		apiserverProfile := startAPIServerProfileT(t, fleetIdle-10*time.Second, t.TempDir())
		karpenterProfile := profileKarpenterT(t, fleetIdle-10*time.Second)
		apiserverTop := apiserverProfile()
		time.Sleep(time.Until(idleStart.Add(bound.idleWindow())))
		idleUsage := usageNow()
		idle := idleUsage.management()
		elapsed := time.Since(idleStart).Seconds()
		events := readEventsT(t).since(eventsFrom)
		idleEnd := fleetRequestsT(t)
		remoteIdleEnd := bound.remoteReadingT(t)
		requests = append(requests, idleEnd.since(requestsFrom, fmt.Sprintf("%-6d apiserver", n), perMinute(elapsed))+
			fmt.Sprintf("\n%-6s isolation function calls %.0f/min", "", float64(functionCallsT(t)-idleCallsFrom)*60/elapsed)+
			fmt.Sprintf("\n%-6s events recorded %.0f/min: %s", "", events.total()*60/elapsed, events.top(6, perMinute(elapsed)))+
			fmt.Sprintf("\n%-6s Crossplane's watch circuit breaker while onboarding: %.0f opened, %.0f events dropped", "", breaker["opened"], breaker["Dropped"])+
			fmt.Sprintf("\n%-6s Karpenter's CPU profile over the idle minute:\n%s", "", karpenterProfile)+
			fmt.Sprintf("\n%-6s kube-apiserver's CPU profile over the idle minute:\n%s", "", apiserverTop))

		row := fleetRow{
			orgs: n, added: n - created, applied: applied, ready: ready, settled: settled, objects: objects,
			onboardingCPU:      cpuSeconds(before, onboarded) / float64(n-created),
			onboardingRequests: onboardingEnd.apiserver.since(onboardingFrom.apiserver).total() / float64(n-created),
			idleRequests:       idleEnd.apiserver.since(requestsFrom.apiserver).total() * 60 / elapsed,
			idleCrossplane:     idleEnd.clients["crossplane"].since(requestsFrom.clients["crossplane"]).total() * 60 / elapsed,
			idleCores:          cpuSeconds(idleFrom, idle) / elapsed,
			idleAPIServer:      (idle["kube-apiserver"].CPUSeconds - idleFrom["kube-apiserver"].CPUSeconds) / elapsed,
			idleKarpenter:      (idle["karpenter"].CPUSeconds - idleFrom["karpenter"].CPUSeconds) / elapsed,
		}
		if bound.workload != nil {
			r := remoteStep{
				orgs: n, added: n - created, ready: ready, idleSeconds: elapsed,
				before: usage, onboarded: onboardedUsage, idleFrom: idleFromUsage, idle: idleUsage,
				requestsFrom: remoteFrom, requestsSettled: remoteSettled, requestsIdleFrom: remoteIdleFrom, requestsIdle: remoteIdleEnd,
				resources: managedResourcesT(t, bound.name),
			}
			row.remote = r.row()
			remote = append(remote, r.String())
		}
		summary.idle = bound.idleWindow()
		summary.add(row)
		binding := bound.pendingPodBoundT(t, fleetOrganization(n-1))
		bindings = append(bindings, fmt.Sprintf("%-6d %s", n, binding))
		fmt.Printf("%-6d %10s %12s %9s %9s %9.1f %-40s %-40s %-40s %10s\n", n, applied.Round(time.Second), ready.Round(time.Second), settled.Round(time.Second), eventsWritten.Round(time.Second), objects,
			perServer(before, onboarded, float64(n-created)), perServer(idleFrom, idle, elapsed), peakRSS(env.servers.Usage()), binding.Bound().Round(100*time.Millisecond))
		if bound.workload != nil {
			fmt.Println(remote[len(remote)-1])
		}
		created = n
	}
	fmt.Println("\nRequests per new organization while onboarding (until settled): the apiserver's by verb and resource, and each client's by method")
	for _, r := range onboarding {
		fmt.Println(r)
	}
	if len(writes) > 0 {
		fmt.Println("\nCrossplane's writes per new organization while onboarding, from the apiserver's audit log")
		for _, w := range writes {
			fmt.Println(w)
		}
	}
	fmt.Println("\nA pending pod bound on a new node of its organization's pool: when each step was seen, from the pod's creation")
	for _, b := range bindings {
		fmt.Println(b)
	}
	fmt.Println("\nRequests per minute over each idle window: the apiserver's by verb and resource (the busiest), and each client's by method")
	for _, r := range requests {
		fmt.Println(r)
	}
	if len(remote) > 0 {
		fmt.Println("\nThe workload cluster and the providers, per step: managed resources, CPU, memory, requests (while onboarding per new organization, idle per minute)")
		for _, r := range remote {
			fmt.Println(r)
		}
	}
	fmt.Println()
	summary.publishT(t)
}

// waitForFleetSettledT waits until n organizations' latest function calls asked for the settled TTL, and so did
// the cluster they are bound to (if any), and Crossplane's XR controllers have nothing queued or running. In a
// workload cluster Crossplane may never be idle: something there may wake the organizations at every provider
// poll (see waitForRemoteIdleT); it is given remoteIdleGrace, and the step goes on without it, saying why.
func waitForFleetSettledT(t *testing.T, n int, bound fleetCluster) {
	t.Helper()
	waitForT(t, fleetReadyTimeout, fmt.Sprintf("%d organizations settled", n), func(ctx context.Context) (bool, string, error) {
		settled, all, err := env.SettledXRs(isolationFunction)
		if err != nil {
			return false, "", err
		}
		if settled < n {
			return false, fmt.Sprintf("%d of %d organizations' latest calls asked for the settled TTL", settled, all), nil
		}
		// The cluster organizations are bound to settles too: after a burst of events (its own creation, or
		// organizations arriving) it asks to be called every 25 seconds while Crossplane's watch circuit breaker may
		// drop its events, re-applying everything it composes each time, which no idle fleet pays.
		if bound.name != "" {
			ttls, err := env.latestTTLs(clusterFunction)
			if err != nil {
				return false, "", err
			}
			if ttl := ttls[bound.name]; ttl != settledTTL {
				return false, fmt.Sprintf("the cluster's latest call asked for a TTL of %q, not the settled one", ttl), nil
			}
		}
		if bound.workload != nil {
			return true, "", nil
		}
		return crossplaneIdle(ctx)
	})
	if bound.workload != nil {
		waitForRemoteIdleT(t)
	}
}

// clusterFunction is the cluster function as Crossplane installs it, and as the harness names its log.
const clusterFunction = "kiso-dev-function-cluster"

// eventsQuiet is how long the apiserver must have written no event for the events recorded while onboarding
// to count as written.
const eventsQuiet = 10 * time.Second

// waitForEventsWrittenT waits until the events recorded while onboarding have reached the apiserver. Crossplane
// records events faster than its client writes them (they carry the time they were recorded, and arrive
// minutes later), so without this the idle minute would count onboarding's events as idle cost. Written means
// the apiserver's count of event writes did not move for eventsQuiet.
func waitForEventsWrittenT(t *testing.T) {
	t.Helper()
	last, lastChange := -1.0, time.Now()
	waitForT(t, fleetReadyTimeout, "events recorded while onboarding written", func(ctx context.Context) (bool, string, error) {
		families, err := env.scrapeMetrics(ctx, "kube-apiserver")
		if err != nil {
			return false, "", err
		}
		written := 0.0
		for key, v := range counters(families, "apiserver_request_total", "verb", "resource") {
			if verb, res, _ := strings.Cut(key, " "); res == "events" && verb != "GET" && verb != "LIST" && verb != "WATCH" {
				written += v
			}
		}
		if written != last {
			last, lastChange = written, time.Now()
		}
		quiet := time.Since(lastChange)
		return quiet >= eventsQuiet, fmt.Sprintf("%.0f events written, the last %s ago", written, quiet.Round(time.Second)), nil
	})
}

func readEventsT(t *testing.T) eventCounts {
	t.Helper()
	events, err := readEvents(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return events
}

// xrWritesT reads from the audit log Crossplane's writes of organizations from..to-1 since start.
func xrWritesT(t *testing.T, from, to int, start time.Time) xrWrites {
	t.Helper()
	orgs := map[string]bool{}
	for i := from; i < to; i++ {
		orgs[fleetOrganization(i)] = true
	}
	w, err := readXRWrites(env.controlPlane.auditLog(), orgs, start, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// profileKarpenterT takes a CPU profile of Karpenter for the duration given, and returns the functions that
// took the most CPU, as go tool pprof prints them.
func profileKarpenterT(t *testing.T, d time.Duration) string {
	t.Helper()
	metricsURL, ok := env.Metrics.get("karpenter")
	if !ok {
		t.Fatal("no metrics URL for karpenter")
	}
	url := strings.TrimSuffix(metricsURL, "/metrics") + fmt.Sprintf("/debug/pprof/profile?seconds=%d", int(d.Seconds()))
	ctx, cancel := context.WithTimeout(t.Context(), d+30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	rsp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("cannot profile Karpenter: %v", err)
	}
	defer func() { _ = rsp.Body.Close() }()
	data, err := io.ReadAll(rsp.Body)
	if err != nil || rsp.StatusCode != http.StatusOK {
		t.Fatalf("cannot profile Karpenter: %s %v", rsp.Status, err)
	}
	top, err := topOfProfile(t.Context(), "karpenter", t.TempDir(), data)
	if err != nil {
		t.Fatal(err)
	}
	return top
}

// startAPIServerProfileT profiles kube-apiserver for d on a goroutine of its own, its profile written to dir,
// while the test goes on; the function it returns waits for the profile's busiest functions.
func startAPIServerProfileT(t *testing.T, d time.Duration, dir string) func() string {
	t.Helper()
	tops, errs := make(chan string, 1), make(chan error, 1)
	go func() {
		top, err := profileAPIServer(t.Context(), d, dir)
		tops <- top
		errs <- err
	}()
	return func() string {
		t.Helper()
		top := <-tops
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
		return top
	}
}

// profileAPIServer takes a CPU profile of kube-apiserver (its /debug/pprof, which it serves to cluster
// admins) for the duration given, and returns the functions that took the most CPU. It runs beside Karpenter's
// profile, on a goroutine of its own, so it reports errors rather than failing the test.
func profileAPIServer(ctx context.Context, d time.Duration, dir string) (string, error) {
	typed, err := env.Cluster.TypedWithoutWarnings()
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, d+30*time.Second)
	defer cancel()
	data, err := typed.CoreV1().RESTClient().Get().AbsPath("/debug/pprof/profile").Param("seconds", strconv.Itoa(int(d.Seconds()))).DoRaw(ctx)
	if err != nil {
		return "", fmt.Errorf("cannot profile kube-apiserver: %w", err)
	}
	return topOfProfile(ctx, "kube-apiserver", dir, data)
}

// topOfProfile prints a CPU profile's busiest functions, cumulatively, as go tool pprof does.
func topOfProfile(ctx context.Context, server, dir string, profile []byte) (string, error) {
	file := filepath.Join(dir, server+".cpu.pprof")
	if err := os.WriteFile(file, profile, 0o600); err != nil {
		return "", err
	}
	out, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-top", "-cum", "-nodecount=30", file).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go tool pprof: %w: %s", err, out)
	}
	return string(out), nil
}

// breakerT reads how often Crossplane's per-XR watch circuit breaker opened and what it did with events.
func breakerT(t *testing.T) counterSet {
	t.Helper()
	families, err := env.scrapeMetrics(t.Context(), "crossplane")
	if err != nil {
		t.Fatal(err)
	}
	out := counters(families, "circuit_breaker_events_total", "result")
	out["opened"] = counters(families, "circuit_breaker_opens_total").total()
	return out
}

// requestReading is one reading of who asks an apiserver for what: the apiserver's requests, by verb, group,
// resource and subresource, and each client's, by method.
type requestReading struct {
	apiserver counterSet
	clients   map[string]counterSet
}

// since prints what was asked between an earlier reading and this one, at the rate given: under label, the
// apiserver's busiest requests, then each client's by method, in the clients' name order.
func (r requestReading) since(earlier requestReading, label string, at rate) string {
	api := r.apiserver.since(earlier.apiserver)
	out := fmt.Sprintf("%s "+at.format+"%s: %s", label, api.total()*at.scale, at.unit, api.top(8, at))
	for _, name := range slices.Sorted(maps.Keys(r.clients)) {
		c := r.clients[name].since(earlier.clients[name])
		out += fmt.Sprintf("\n%-6s %s "+at.format+"%s: %s", "", name, c.total()*at.scale, at.unit, c.top(6, at))
	}
	return out
}

// fleetRequestsT reads who asks the management apiserver for what: Crossplane and Karpenter among its clients.
func fleetRequestsT(t *testing.T) requestReading {
	t.Helper()
	r := requestReading{clients: map[string]counterSet{}}
	families, err := env.scrapeMetrics(t.Context(), "kube-apiserver")
	if err != nil {
		t.Fatal(err)
	}
	r.apiserver = counters(families, "apiserver_request_total", "verb", "group", "resource", "subresource")
	for _, server := range []string{"crossplane", "karpenter"} {
		families, err := env.scrapeMetrics(t.Context(), server)
		if err != nil {
			t.Fatal(err)
		}
		r.clients[server] = counters(families, "rest_client_requests_total", "method")
	}
	return r
}

// fleetSteps reads the cumulative organization counts.
func fleetSteps(v string) ([]int, error) {
	if v == "" {
		v = "100,300,600,1000"
	}
	var out []int
	last := 0
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= last {
			return nil, fmt.Errorf("%s=%q: want increasing organization counts, e.g. 100,300,600,1000", fleetStepsEnv, v)
		}
		out = append(out, n)
		last = n
	}
	return out, nil
}

// How the fleet's organizations are bound to a cluster (fleetClusterEnv).
const (
	unbound         = "no clusterRef"
	boundToCluster  = "clusterRef to the placement cluster"
	boundInWaves    = "clusterRef to the placement cluster, which has a rollout"
	boundInWorkload = "clusterRef to a workload cluster's, served through provider-kubernetes and provider-helm"
)

// fleetBindingT reads fleetClusterEnv and applies the placement cluster, with a rollout for "rollout": two waves
// (half, then everyone) that soak a minute each; for "remote" it starts the workload cluster, applies the
// platform's references there and the XKarpenterCluster that serves it (installing Karpenter's chart there). A
// cluster organizations are bound to stays, and so do the references: it would be deleted only after every
// organization, and the control planes go with the benchmark.
func fleetBindingT(t *testing.T, v string) fleetCluster {
	t.Helper()
	switch v {
	case "":
		usePlacementClusterT(t)
		return fleetCluster{binding: unbound}
	case "bound":
		env.ApplyT(t, readTestdataT(t, "admission", "cluster.yaml"))
		return fleetCluster{binding: boundToCluster, name: placementCluster}
	case "rollout":
		env.ApplyT(t, readTestdataT(t, "admission", "cluster.yaml"))
		patchClusterT(t, `{"spec":{"rollout":{"waves":[{"percent":50},{"percent":100}],"soak":"1m"}}}`)
		return fleetCluster{binding: boundInWaves, name: placementCluster}
	case fleetRemoteMode:
		wl := env.Workload(t)
		if err := wl.Kubectl.Apply(t.Context(), readTestdataT(t, "workload", "references.yaml")); err != nil {
			t.Fatalf("cannot apply the workload cluster's references: %v", err)
		}
		env.ApplyT(t, workloadClusterManifestT(t, wl))
		return fleetCluster{binding: boundInWorkload, name: remoteClusterXR, workload: wl}
	}
	t.Fatalf("%s=%q: want bound, rollout or %s", fleetClusterEnv, v, fleetRemoteMode)
	return fleetCluster{}
}

// readyClusterAsProviderAWSWouldT marks every AWS managed resource the cluster composes Ready and Synced, as
// provider-aws does once AWS holds them, and waits until the cluster is Ready. No provider-aws runs here; without
// this the cluster would wait on AWS for ever and ask to be composed every minute, a cost a cluster deployed with
// provider-aws pays only until AWS has its resources.
func readyClusterAsProviderAWSWouldT(t *testing.T, name string) {
	t.Helper()
	xr := env.Cluster.WaitForT(t, xrSettleTimeout, ClusterKind, "", name, func(xr *unstructured.Unstructured) (bool, string) {
		c, _ := Condition(xr, "Synced")
		return c.Status == "True", "not Synced: " + c.Message
	})
	refs, _, _ := unstructured.NestedSlice(xr.Object, "spec", "crossplane", "resourceRefs")
	marked := 0
	for _, r := range refs {
		ref, _ := r.(map[string]any)
		apiVersion, _ := ref["apiVersion"].(string)
		kind, _ := ref["kind"].(string)
		name, _ := ref["name"].(string)
		gv, err := schema.ParseGroupVersion(apiVersion)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(gv.Group, ".aws.upbound.io") {
			markManagedResourceAvailable(t, gv.WithKind(kind), name)
			marked++
		}
	}
	if marked == 0 {
		t.Fatalf("cluster %s composes no AWS managed resource (resourceRefs %v)", name, refs)
	}
	env.Cluster.WaitForConditionT(t, xrSettleTimeout, ClusterKind, "", name, "Ready")
}

// functionCallsT counts the isolation function's calls so far.
func functionCallsT(t *testing.T) int {
	t.Helper()
	calls, err := env.loggedCalls(isolationFunction)
	if err != nil {
		t.Fatal(err)
	}
	return len(calls)
}

// composedPerOrganizationT is how many objects each organization's XR composes, on average.
func composedPerOrganizationT(t *testing.T) float64 {
	t.Helper()
	xrs := env.Cluster.ListT(t, IsolationKind, "", "")
	total := 0
	for _, xr := range xrs {
		refs, found, _ := unstructured.NestedSlice(xr.Object, "spec", "crossplane", "resourceRefs")
		if !found {
			refs, _, _ = unstructured.NestedSlice(xr.Object, "spec", "resourceRefs")
		}
		total += len(refs)
	}
	if len(xrs) == 0 {
		return 0
	}
	return float64(total) / float64(len(xrs))
}

// pendingPodBoundT creates a pod of an organization where its pods run, placed as its claim says, as that cluster's
// administrator, and returns when each step of its binding on a new node (Karpenter launches one for it) was seen.
func (bound fleetCluster) pendingPodBoundT(t *testing.T, org string) podTimeline {
	t.Helper()
	cluster, kubectl := env.Cluster, env.Kubectl
	if bound.workload != nil {
		cluster, kubectl = bound.workload.Cluster, bound.workload.Kubectl
	}
	ns := org + "-web"
	waitForT(t, 30*time.Second, "service account "+ns+"/default", func(ctx context.Context) (bool, string, error) {
		_, err := cluster.Typed.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, fmt.Sprint(err), nil
	})
	pod := newPod("bound-probe", ns, selectStack(org, ""),
		corev1.Toleration{Key: "kiso.dev/organization", Operator: corev1.TolerationOpEqual, Value: org, Effect: corev1.TaintEffectNoSchedule})
	seen := watchBindingT(t, cluster, ns, pod.Name, "kiso-"+org)
	manifest, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := kubectl.Try(t.Context(), manifest, "create", "-f", "-"); err != nil || out.ExitCode != 0 {
		t.Fatalf("kubectl create pod %s/%s: %v %s", ns, pod.Name, err, strings.TrimSpace(out.Stderr))
	}
	t.Cleanup(func() {
		_ = cluster.Typed.CoreV1().Pods(ns).Delete(context.Background(), pod.Name, metav1.DeleteOptions{})
	})
	waitForT(t, landTimeout, "pod "+ns+"/"+pod.Name+" bound", func(ctx context.Context) (bool, string, error) {
		if _, bound := seen.at(stepBound); bound {
			return true, "", nil
		}
		p, err := cluster.Typed.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		return false, scheduledMessage(*p), nil
	})
	return seen.timeline()
}

// The steps of a pending pod's binding on a new node, in the order they happen: Karpenter creates a NodeClaim
// once its batch window closes and its scheduling simulation places the pod; kwok registers the node; the node is
// Ready; Karpenter marks it initialized; kube-scheduler binds the pod.
const (
	stepNodeClaim   = "NodeClaim"
	stepRegistered  = "node registered"
	stepReady       = "Ready"
	stepInitialized = "initialized"
	stepBound       = "bound"
)

// bindingSteps records when each step was first seen, from when they started to be watched.
type bindingSteps struct {
	start time.Time
	mu    sync.Mutex
	seen  map[string]time.Duration
}

func (b *bindingSteps) mark(step string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.seen[step]; !ok {
		b.seen[step] = time.Since(b.start)
	}
}

func (b *bindingSteps) at(step string) (time.Duration, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	d, ok := b.seen[step]
	return d, ok
}

// A podTimeline is when each step of a pod's binding was seen, from just before the pod was created.
type podTimeline map[string]time.Duration

func (b *bindingSteps) timeline() podTimeline {
	b.mu.Lock()
	defer b.mu.Unlock()
	return maps.Clone(b.seen)
}

// Bound is how long the pod took to be bound.
func (p podTimeline) Bound() time.Duration { return p[stepBound] }

// String says when each step was seen, e.g. "NodeClaim 3.1s, node registered 3.6s, Ready 3.6s, initialized 4.0s,
// bound 5.2s".
func (p podTimeline) String() string {
	var parts []string
	for _, step := range []string{stepNodeClaim, stepRegistered, stepReady, stepInitialized, stepBound} {
		if d, ok := p[step]; ok {
			parts = append(parts, fmt.Sprintf("%s %s", step, d.Round(100*time.Millisecond)))
		}
	}
	return strings.Join(parts, ", ")
}

// watchBindingT watches the pod, and the NodeClaims and nodes of its pool, in the cluster given until the test
// ends, and marks each step as an event shows it: with watches, each step is timed when it reaches the client,
// not at the next poll.
func watchBindingT(t *testing.T, cluster *Cluster, ns, pod, pool string) *bindingSteps {
	t.Helper()
	b := &bindingSteps{start: time.Now(), seen: map[string]time.Duration{}}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	inPool := metav1.ListOptions{LabelSelector: nodePoolLabel + "=" + pool}
	claims, err := cluster.Resource(NodeClaimKind, "")
	if err != nil {
		t.Fatal(err)
	}
	watches := []struct {
		watch func() (watch.Interface, error)
		mark  func(kruntime.Object)
	}{
		{func() (watch.Interface, error) { return claims.Watch(ctx, inPool) }, func(kruntime.Object) { b.mark(stepNodeClaim) }},
		{func() (watch.Interface, error) { return cluster.Typed.CoreV1().Nodes().Watch(ctx, inPool) }, func(o kruntime.Object) {
			node, ok := o.(*corev1.Node)
			if !ok {
				return
			}
			b.mark(stepRegistered)
			for _, c := range node.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
					b.mark(stepReady)
				}
			}
			if node.Labels["karpenter.sh/initialized"] == "true" {
				b.mark(stepInitialized)
			}
		}},
		{func() (watch.Interface, error) {
			return cluster.Typed.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + pod})
		}, func(o kruntime.Object) {
			if p, ok := o.(*corev1.Pod); ok && p.Spec.NodeName != "" {
				b.mark(stepBound)
			}
		}},
	}
	for _, w := range watches {
		events, err := w.watch()
		if err != nil {
			t.Fatalf("cannot watch the steps of a pod's binding: %v", err)
		}
		go func() {
			defer events.Stop()
			for e := range events.ResultChan() {
				if e.Type == watch.Added || e.Type == watch.Modified {
					w.mark(e.Object)
				}
			}
		}()
	}
	return b
}

// perServer prints the CPU-seconds each server used between two readings, divided by per (new organizations,
// or seconds for cores), the busiest first three, and the total.
func perServer(from, to map[string]process.Usage, per float64) string {
	total := 0.0
	var parts []string
	for _, name := range []string{"kube-apiserver", "crossplane", "karpenter", "etcd", "kiso-dev-function-isolation"} {
		d := to[name].CPUSeconds - from[name].CPUSeconds
		parts = append(parts, fmt.Sprintf("%s %.2f", strings.TrimPrefix(name, "kiso-dev-function-"), d/per))
	}
	for name, u := range to {
		total += u.CPUSeconds - from[name].CPUSeconds
	}
	return fmt.Sprintf("all %.2f: %s", total/per, strings.Join(parts, ", "))
}

func peakRSS(us []process.Usage) string {
	var parts []string
	for _, u := range us {
		switch u.Name {
		case "kube-apiserver", "crossplane", "karpenter", "etcd":
			parts = append(parts, fmt.Sprintf("%s %d", u.Name, u.PeakRSSMB))
		}
	}
	return strings.Join(parts, ", ")
}
