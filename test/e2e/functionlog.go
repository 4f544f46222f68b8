package e2e

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strconv"
)

// functionCallMarker is what each kiso function logs, at debug level, once per RunFunction call
// (functions/internal/server); the harness starts the functions with --debug.
const functionCallMarker = "\tRunFunction\t"

// callVersion reads the resourceVersion of the XR a logged call was made for ("xrVersion": "4711").
var callVersion = regexp.MustCompile(`"xrVersion": "([0-9]+)"`)

// CallsAfter counts the calls function made for the XR named xr in reconciles that read it at resourceVersion
// since or later: the reconciles that started once that version of the XR was written.
func (e *Environment) CallsAfter(function, xr string, since int64) (int, error) {
	b, err := os.ReadFile(e.servers.LogPath(function))
	if err != nil {
		return 0, fmt.Errorf("cannot read the log of function %s: %w", function, err)
	}
	xrField := []byte(fmt.Sprintf(`"xr": %q,`, xr))
	n := 0
	for line := range bytes.Lines(b) {
		if !bytes.Contains(line, []byte(functionCallMarker)) || !bytes.Contains(line, xrField) {
			continue
		}
		m := callVersion.FindSubmatch(line)
		if m == nil {
			continue
		}
		// The e2e's etcd numbers resourceVersions in the order it writes them.
		if v, err := strconv.ParseInt(string(m[1]), 10, 64); err == nil && v >= since {
			n++
		}
	}
	return n, nil
}

// settledTTL is the TTL the functions ask for once an XR waits on nothing (requeue.Settled), as they log it.
const settledTTL = "1h0m0s"

// callTTL reads the TTL a logged call asked for ("ttl": "1h0m0s").
var callTTL = regexp.MustCompile(`"ttl": "([^"]+)"`)

// callXR reads the XR a logged call was made for.
var callXR = regexp.MustCompile(`"xr": "([^"]+)"`)

// SettledXRs counts the XRs whose latest call to function asked for the settled TTL: they wait on nothing,
// and Crossplane reconciles them again only when something they compose or require changes.
func (e *Environment) SettledXRs(function string) (settled, all int, err error) {
	b, err := os.ReadFile(e.servers.LogPath(function))
	if err != nil {
		return 0, 0, fmt.Errorf("cannot read the log of function %s: %w", function, err)
	}
	latest := map[string]string{}
	for line := range bytes.Lines(b) {
		if !bytes.Contains(line, []byte(functionCallMarker)) {
			continue
		}
		xr, ttl := callXR.FindSubmatch(line), callTTL.FindSubmatch(line)
		if xr != nil && ttl != nil {
			latest[string(xr[1])] = string(ttl[1])
		}
	}
	for _, ttl := range latest {
		if ttl == settledTTL {
			settled++
		}
	}
	return settled, len(latest), nil
}
