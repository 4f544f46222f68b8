package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// benchEnv turns the admission benchmark on (make bench-admission): it takes minutes, and its numbers, not
// a pass or fail, are its result.
const benchEnv = "KISO_BENCH_ADMISSION"

// TestAdmissionBenchmark measures what placement costs every pod: p50 and p99 latency of a pod create
// (server dry run, one client, sequential) in a tenant namespace, in a Warn-mode tenant namespace (a pod without
// placement, warned) and in a namespace of nobody's, with 0, 100
// and 1,000 organizations. The cluster's policies are composed by a real XKarpenterCluster; each
// organization is what its claim composes in a namespace it holds (the Role kiso-placement),
// applied directly, since rendering a thousand claims through Crossplane measures Crossplane.
func TestAdmissionBenchmark(t *testing.T) {
	if os.Getenv(benchEnv) != "1" {
		t.Skipf("set %s=1 (make bench-admission) to run the admission benchmark", benchEnv)
	}
	cluster := readTestdataT(t, "admission", "cluster.yaml")
	env.ApplyT(t, cluster)
	t.Cleanup(func() { deleteAtCleanup(t, cluster) })
	waitForTypeCheckedT(t, placementPolicy)
	waitForTypeCheckedT(t, poolsPolicy)
	waitForTypeCheckedT(t, warnPolicy)

	ctx := t.Context()
	outsider := "bench-outsider"
	createNamespaceT(t, outsider)
	const samples, warmup = 400, 50
	type row struct {
		orgs                     int
		tenantP50, tenantP99     time.Duration
		warnedP50, warnedP99     time.Duration
		outsiderP50, outsiderP99 time.Duration
	}
	var rows []row
	created := 0
	for _, orgs := range []int{0, 100, 1000} {
		createOrganizationsT(t, created, orgs)
		created = max(created, orgs)
		tenant, plain := newPod("bench", outsider, nil), newPod("bench", outsider, nil)
		if orgs > 0 {
			// The first organization's namespace: a pod that carries its placement, checked by both policies.
			org := benchOrganization(0)
			tenant = newPod("bench", org, selectStack(org, "web"),
				corev1.Toleration{Key: "kiso.dev/organization", Operator: corev1.TolerationOpEqual, Value: org, Effect: corev1.TaintEffectNoSchedule},
				corev1.Toleration{Key: "kiso.dev/stack", Operator: corev1.TolerationOpEqual, Value: "web", Effect: corev1.TaintEffectNoSchedule})
			// The apiserver's informer holds the last organization's Role once its pods are admitted.
			last := benchOrganization(orgs - 1)
			waitUntilAdmittedT(t, newPod("probe", last, selectStack(last, "web"),
				corev1.Toleration{Key: "kiso.dev/organization", Operator: corev1.TolerationOpEqual, Value: last, Effect: corev1.TaintEffectNoSchedule},
				corev1.Toleration{Key: "kiso.dev/stack", Operator: corev1.TolerationOpEqual, Value: "web", Effect: corev1.TaintEffectNoSchedule}))
		}
		r := row{orgs: orgs}
		r.tenantP50, r.tenantP99 = measurePodCreates(ctx, t, tenant, samples, warmup)
		if orgs > warnedOrganization {
			// The Warn-mode organization's namespace: a pod without its placement, admitted with a warning.
			warned := newPod("bench", benchOrganization(warnedOrganization), nil)
			waitUntilAdmittedT(t, warned)
			r.warnedP50, r.warnedP99 = measurePodCreates(ctx, t, warned, samples, warmup)
		}
		r.outsiderP50, r.outsiderP99 = measurePodCreates(ctx, t, plain, samples, warmup)
		rows = append(rows, r)
	}
	fmt.Printf("\nPod create, server dry run, one client, %d sequential requests after %d warm-up:\n", samples, warmup)
	fmt.Printf("%-14s %12s %12s %12s %12s %14s %14s\n", "organizations", "tenant p50", "tenant p99", "warned p50", "warned p99", "outsider p50", "outsider p99")
	for _, r := range rows {
		fmt.Printf("%-14d %12s %12s %12s %12s %14s %14s\n", r.orgs, ms(r.tenantP50), ms(r.tenantP99), ms(r.warnedP50), ms(r.warnedP99), ms(r.outsiderP50), ms(r.outsiderP99))
	}
	base, most := rows[0], rows[len(rows)-1]
	fmt.Printf("1,000 organizations / 0 at p50: outsider %.2fx, tenant namespace vs outsider at 0 %.2fx (target 1.5x)\n\n",
		float64(most.outsiderP50)/float64(base.outsiderP50), float64(most.tenantP50)/float64(base.outsiderP50))
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 2, 64) + " ms"
}

// measurePodCreates submits the pod with a server dry run, sequentially, and returns p50 and p99.
func measurePodCreates(ctx context.Context, t *testing.T, pod *corev1.Pod, samples, warmup int) (time.Duration, time.Duration) {
	t.Helper()
	client, err := env.Cluster.TypedWithoutWarnings()
	if err != nil {
		t.Fatal(err)
	}
	pods := client.CoreV1().Pods(pod.Namespace)
	latencies := make([]time.Duration, 0, samples)
	for i := range samples + warmup {
		start := time.Now()
		if _, err := pods.Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
			t.Fatalf("pod %s/%s refused: %v", pod.Namespace, pod.Name, err)
		}
		if i >= warmup {
			latencies = append(latencies, time.Since(start))
		}
	}
	slices.Sort(latencies)
	return latencies[len(latencies)/2], latencies[len(latencies)*99/100]
}

func benchOrganization(i int) string { return fmt.Sprintf("bench-%04d", i) }

// warnedOrganization is the index of the organization whose placement is in Warn mode.
const warnedOrganization = 1

// createOrganizationsT creates organizations from..to-1: each a namespace the platform gives the
// organization, holding the Role kiso-placement its claim composes (stack web, stack isolation), with a few
// clients at once.
func createOrganizationsT(t *testing.T, from, to int) {
	t.Helper()
	work := make(chan int)
	errs := make(chan error, to)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				if err := createOrganization(t.Context(), benchOrganization(i), i == warnedOrganization); err != nil {
					errs <- err
				}
			}
		}()
	}
	for i := from; i < to; i++ {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// createOrganization creates an organization's namespace and Role; in Warn mode its Role grants select of any
// pool and warn of its own, as the claim composes it with spec.placement.mode Warn.
func createOrganization(ctx context.Context, org string, warn bool) error {
	c := env.Cluster.Typed
	labels := map[string]string{"app.kubernetes.io/managed-by": "kiso", "kiso.dev/organization": org, "kiso.dev/stack": "web"}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: org, Labels: map[string]string{"kiso.dev/organization": org}}}
	if _, err := c.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("cannot create namespace %s: %w", org, err)
	}
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "kiso-placement", Namespace: org, Labels: labels, Annotations: map[string]string{"kiso.dev/pool": "kiso-" + org + ".web"}},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"placement.kiso.dev"}, Resources: []string{"tolerations"}, Verbs: []string{"use"}, ResourceNames: []string{org, org + ".web"}},
			{APIGroups: []string{"placement.kiso.dev"}, Resources: []string{"pools"}, Verbs: []string{"select"}, ResourceNames: []string{org + ".web"}},
		},
	}
	if warn {
		role.Rules[1].ResourceNames = []string{"*"}
		role.Rules = append(role.Rules, rbacv1.PolicyRule{APIGroups: []string{"placement.kiso.dev"}, Resources: []string{"pools"}, Verbs: []string{"warn"}, ResourceNames: []string{org + ".web"}})
	}
	if _, err := c.RbacV1().Roles(org).Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("cannot create Role %s/kiso-placement: %w", org, err)
	}
	return nil
}

func createNamespaceT(t *testing.T, name string) {
	t.Helper()
	if _, err := env.Cluster.Typed.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	waitForDefaultServiceAccountT(t, name)
}
