package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// auditEnv turns on the management cluster apiserver's audit log of writes, in the run's directory
// (audit.log), and makes the fleet benchmark say from it why Crossplane reconciles each organization as often
// as it does. It costs the apiserver CPU, so the benchmark's CPU figures are not comparable with it on.
const auditEnv = "KISO_E2E_AUDIT"

// auditPolicy logs each write once, when its response is sent: kiso's XRs and claims with their bodies (to tell
// a write that changed something from one that did not, and what it changed), every other write without. Reads
// and Events are the bulk of the traffic and say nothing about what woke a controller.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  resources: [{group: "", resources: [events]}, {group: events.k8s.io, resources: [events]}, {group: coordination.k8s.io, resources: [leases]}]
- level: RequestResponse
  verbs: [create, update, patch]
  resources: [{group: kiso.dev}]
- level: Metadata
  verbs: [create, update, patch, delete, deletecollection]
- level: None
`

// auditFlags turn on the audit log when auditEnv is set, for the management cluster only. Blocking mode writes
// each event before the response is sent, so the log is complete whenever it is read.
func (cp *controlPlane) auditFlags() ([]string, error) {
	if os.Getenv(auditEnv) != "1" || cp.name != "" {
		return nil, nil
	}
	policy := filepath.Join(cp.dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return nil, err
	}
	return []string{"--audit-policy-file=" + policy, "--audit-log-path=" + cp.auditLog(), "--audit-log-format=json", "--audit-log-mode=blocking",
		// One file, however large: the log library rotates at 100 MB by default, and the summary reads one file.
		"--audit-log-maxsize=100000"}, nil
}

func (cp *controlPlane) auditLog() string { return filepath.Join(cp.dir, "audit.log") }

// auditEvent is the part of an audit.k8s.io/v1 Event read here.
type auditEvent struct {
	Verb      string `json:"verb"`
	UserAgent string `json:"userAgent"`
	ObjectRef struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		Name        string `json:"name"`
	} `json:"objectRef"`
	ResponseStatus struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	// ResponseObject is decoded only for kiso's kinds (xrObject): of other writes it may be a Status.
	ResponseObject json.RawMessage `json:"responseObject"`
	StageTimestamp time.Time       `json:"stageTimestamp"`
}

// xrObject is the part of an XR read here.
type xrObject struct {
	Metadata struct {
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
	Status struct {
		Conditions []struct {
			Type    string `json:"type"`
			Status  string `json:"status"`
			Reason  string `json:"reason"`
			Message string `json:"message"`
		} `json:"conditions"`
	} `json:"status"`
}

// xrWrites counts Crossplane's writes of some organizations' XRs and claims.
type xrWrites struct {
	// composes counts the XR status applies: Crossplane makes one each time it runs the function pipeline.
	composes int
	// reverts counts the status applies that set one of the XR's conditions back: Crossplane v2.4 applies the
	// conditions of the XR it read from its cache with the function's status, and when that copy is older than
	// the condition it wrote last (crossplane/crossplane#7062) the apply undoes it, its own status update
	// redoes it, and each write wakes the XR again.
	reverts int
	// changed counts the XR writes that changed it (a new resourceVersion): each one is an event that makes
	// Crossplane reconcile the XR and its claim again.
	changed int
	// claimWrites counts the claim controller's updates of the claims and their status.
	claimWrites int
}

// readXRWrites reads Crossplane's writes, between from and to, of the XRs and claims of organizations whose
// names are in orgs, from the audit log.
func readXRWrites(path string, orgs map[string]bool, from, to time.Time) (xrWrites, error) {
	f, err := os.Open(path)
	if err != nil {
		return xrWrites{}, err
	}
	defer func() { _ = f.Close() }()
	var w xrWrites
	type condition struct{ status, reason, message string }
	lastVersion := map[string]string{}
	lastConditions := map[string]map[string]condition{}
	scanner := bufio.NewScanner(f)
	scanner.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for scanner.Scan() {
		var e auditEvent
		if err := json.Unmarshal(scanner.Bytes(), &e); err != nil {
			return xrWrites{}, fmt.Errorf("%s: %w", path, err)
		}
		if !strings.HasPrefix(e.UserAgent, "crossplane/") || len(e.ResponseObject) == 0 || e.ResponseStatus.Code != 200 {
			continue
		}
		name := e.ObjectRef.Name
		inTime := !e.StageTimestamp.Before(from) && !e.StageTimestamp.After(to)
		switch e.ObjectRef.Resource {
		case "karpenterisolations":
			if orgs[name] && inTime {
				w.claimWrites++
			}
			continue
		case "xkarpenterisolations":
		default:
			continue
		}
		var xr xrObject
		if err := json.Unmarshal(e.ResponseObject, &xr); err != nil {
			return xrWrites{}, fmt.Errorf("%s: XR %s: %w", path, name, err)
		}
		// An XR is named after its claim, with a generated suffix, or is the organization's own without a claim.
		org := name
		if !orgs[org] {
			org = name[:max(strings.LastIndex(name, "-"), 0)]
		}
		conditions := map[string]condition{}
		for _, c := range xr.Status.Conditions {
			conditions[c.Type] = condition{c.Status, c.Reason, c.Message}
		}
		inWindow := orgs[org] && inTime
		if inWindow && xr.Metadata.ResourceVersion != lastVersion[name] {
			w.changed++
		}
		if inWindow && e.Verb == "patch" && e.ObjectRef.Subresource == "status" {
			w.composes++
			for typ, was := range lastConditions[name] {
				// Responsive is the one condition Crossplane marks before it applies: a change there is news.
				if now, ok := conditions[typ]; ok && now != was && typ != "Responsive" {
					w.reverts++
					break
				}
			}
		}
		lastVersion[name] = xr.Metadata.ResourceVersion
		lastConditions[name] = conditions
	}
	return w, scanner.Err()
}

// perOrganization says what the writes were per organization.
func (w xrWrites) perOrganization(orgs int) string {
	n := float64(orgs)
	return fmt.Sprintf("%.1f compositions (function pipeline runs), %.1f of them setting a condition back to Crossplane's cached copy (crossplane/crossplane#7062); %.1f XR writes that changed it; %.1f claim writes",
		float64(w.composes)/n, float64(w.reverts)/n, float64(w.changed)/n, float64(w.claimWrites)/n)
}
