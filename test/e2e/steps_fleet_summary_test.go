package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kiso-dev/kiso/internal/process"
)

// Steps of the fleet benchmark's summary: one row per step of organizations, and the table it prints.

// fleetRow is one step of the fleet benchmark, as the summary table shows it.
type fleetRow struct {
	orgs, added                  int
	applied, ready, settled      time.Duration
	objects                      float64
	onboardingCPU                float64 // apiserver and every other server, CPU-seconds per new organization
	onboardingRequests           float64 // the apiserver's, per new organization
	idleRequests, idleCrossplane float64 // a minute
	idleCores                    float64 // every server
	idleAPIServer, idleKarpenter float64
	// remote is what a step in a workload cluster adds; nil in the other modes.
	remote *remoteRow
}

// remoteRow is a remote step's own columns: the management cluster's servers above include the providers, which
// run there.
type remoteRow struct {
	resources                               managedResources
	onboardingProviders, onboardingWorkload float64 // CPU-seconds per new organization
	idleProviders, idleWorkload             float64 // cores
	// idleProvidersManagement is the providers' requests to the management apiserver a minute, idle; the workload
	// apiserver's, and the providers' part of them, follow.
	idleProvidersManagement, idleWorkloadRequests, idleProvidersWorkload float64
}

// fleetSummary is the benchmark's result as docs/scale.md shows it: one table per mode, dated,
// with the commit measured, written by the benchmark so that no figure is copied by hand.
type fleetSummary struct {
	mode  string
	poll  string
	cores int
	// idle is the window each step's idle cost is measured over (fleetCluster.idleWindow).
	idle time.Duration
	// commit is what was measured (measuredCommitT).
	commit string
	rows   []fleetRow
}

// measuredCommitT is the commit the benchmark measures, read as it starts, right after the suite built kiso's
// packages from the working tree: a commit made while it runs (an hour at 300 remote organizations) is not what
// it measured.
func measuredCommitT(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	commit := "unknown commit"
	if out, err := exec.CommandContext(t.Context(), "git", "-C", root, "rev-parse", "--short", "HEAD").Output(); err == nil {
		commit = strings.TrimSpace(string(out))
		if status, err := exec.CommandContext(t.Context(), "git", "-C", root, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(status) > 0 {
			commit += " with uncommitted changes"
		}
	}
	return commit
}

func (s *fleetSummary) add(r fleetRow) { s.rows = append(s.rows, r) }

// fleetMode names the benchmark's mode, as docs/scale.md's markers do.
func fleetMode(cluster string) string {
	if cluster == "" {
		return "unbound"
	}
	return cluster
}

// cpuSeconds is what every server spent between two readings.
func cpuSeconds(from, to map[string]process.Usage) float64 {
	total := 0.0
	for name, u := range to {
		total += u.CPUSeconds - from[name].CPUSeconds
	}
	return total
}

// markdown renders the summary table.
func (s fleetSummary) markdown(commit string, day time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "`make bench-fleet FLEET_CLUSTER=%s`, %s at %s, %d cores, Crossplane polling every %s, idle measured over %s (written by the benchmark):\n\n",
		strings.TrimPrefix(s.mode, "unbound"), day.Format("2006-01-02"), commit, s.cores, s.poll, s.idle)
	if s.mode == fleetRemoteMode {
		s.remoteTable(&b)
		return b.String()
	}
	b.WriteString("| organizations | kubectl apply | → every pool Ready | → settled | objects per organization | apiserver requests per new organization | CPU-s per new organization, all servers | idle requests a minute (Crossplane's) | idle cores, all servers (apiserver, Karpenter) |\n")
	b.WriteString("|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range s.rows {
		orgs := fmt.Sprintf("%d", r.orgs)
		if r.added != r.orgs {
			orgs += fmt.Sprintf(" (+%d)", r.added)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %.1f | %.1f | %.2f | %.0f (%.0f) | %.2f (%.2f, %.2f) |\n", orgs,
			r.applied.Round(time.Second), r.ready.Round(time.Second), r.settled.Round(time.Second), r.objects,
			r.onboardingRequests, r.onboardingCPU, r.idleRequests, r.idleCrossplane, r.idleCores, r.idleAPIServer, r.idleKarpenter)
	}
	return b.String()
}

// remoteTable renders a remote run's table: the management cluster's columns with the providers counted in it,
// the providers' share in parentheses, and the workload cluster's.
func (s fleetSummary) remoteTable(b *strings.Builder) {
	b.WriteString("| organizations | kubectl apply | first claim → every pool Ready | → settled | managed resources per organization (written, observe-only, collections, members) | management apiserver requests per new organization | CPU-s per new organization: management cluster and providers (providers; workload cluster) | idle requests a minute: management apiserver (Crossplane's, providers') | idle requests a minute: workload apiserver (providers') | idle cores: management cluster and providers (providers; workload cluster) |\n")
	b.WriteString("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range s.rows {
		orgs := fmt.Sprintf("%d", r.orgs)
		if r.added != r.orgs {
			orgs += fmt.Sprintf(" (+%d)", r.added)
		}
		rr, m := r.remote, r.remote.resources
		fmt.Fprintf(b, "| %s | %s | %s | %s | %.1f (%.1f, %.1f, %.1f, %.1f) | %.1f | %.2f (%.2f; %.2f) | %.0f (%.0f, %.0f) | %.0f (%.0f) | %.2f (%.2f; %.2f) |\n", orgs,
			r.applied.Round(time.Second), r.ready.Round(time.Second), r.settled.Round(time.Second),
			m.per(m.total()), m.per(m.written), m.per(m.observed), m.per(m.collections), m.per(m.members),
			r.onboardingRequests, r.onboardingCPU, rr.onboardingProviders, rr.onboardingWorkload,
			r.idleRequests, r.idleCrossplane, rr.idleProvidersManagement, rr.idleWorkloadRequests, rr.idleProvidersWorkload,
			r.idleCores, rr.idleProviders, rr.idleWorkload)
	}
}

// publishT prints the summary, writes it to _output, and puts it in docs/scale.md between the mode's markers
// (<!-- bench-fleet:MODE --> and <!-- /bench-fleet:MODE -->), if the page has them.
func (s fleetSummary) publishT(t *testing.T) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	table := s.markdown(s.commit, time.Now())
	fmt.Println(table)
	if err := os.MkdirAll(filepath.Join(root, "_output"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "_output", "bench-fleet-"+s.mode+".md"), []byte(table), 0o600); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(root, "docs", "scale.md")
	text, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	open, end := "<!-- bench-fleet:"+s.mode+" -->\n", "<!-- /bench-fleet:"+s.mode+" -->"
	from, to := strings.Index(string(text), open), strings.Index(string(text), end)
	if from < 0 || to < from {
		return
	}
	updated := string(text[:from+len(open)]) + table + string(text[to:])
	if err := os.WriteFile(page, []byte(updated), 0o600); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("docs/scale.md: table for %s updated\n", s.mode)
}
