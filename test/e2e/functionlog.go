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

// settledTTL is the TTL the functions ask for once an XR waits on nothing (fncall.TTLSettled), as they log it.
const settledTTL = "1h0m0s"

// The fields of a call line: {"xr": "acme-x7k2p", "xrVersion": "4711", ..., "ttl": "1h0m0s"}.
var (
	callXR      = regexp.MustCompile(`"xr": "([^"]+)"`)
	callVersion = regexp.MustCompile(`"xrVersion": "([0-9]+)"`)
	callTTL     = regexp.MustCompile(`"ttl": "([^"]+)"`)
)

// A loggedCall is one RunFunction call as the function logged it.
type loggedCall struct {
	XR string
	// Version is the resourceVersion of the XR the call read; the e2e's etcd numbers them in the order it
	// writes them.
	Version int64
	TTL     string
}

// loggedCalls reads every call function logged, in order.
func (e *Environment) loggedCalls(function string) ([]loggedCall, error) {
	b, err := os.ReadFile(e.servers.LogPath(function))
	if err != nil {
		return nil, fmt.Errorf("cannot read the log of function %s: %w", function, err)
	}
	var calls []loggedCall
	for line := range bytes.Lines(b) {
		if !bytes.Contains(line, []byte(functionCallMarker)) {
			continue
		}
		var c loggedCall
		if m := callXR.FindSubmatch(line); m != nil {
			c.XR = string(m[1])
		}
		if m := callVersion.FindSubmatch(line); m != nil {
			c.Version, _ = strconv.ParseInt(string(m[1]), 10, 64)
		}
		if m := callTTL.FindSubmatch(line); m != nil {
			c.TTL = string(m[1])
		}
		calls = append(calls, c)
	}
	return calls, nil
}

// CallsAfter counts the calls function made for the XR named xr in reconciles that read it at resourceVersion
// since or later: the reconciles that started once that version of the XR was written.
func (e *Environment) CallsAfter(function, xr string, since int64) (int, error) {
	calls, err := e.loggedCalls(function)
	n := 0
	for _, c := range calls {
		if c.XR == xr && c.Version >= since {
			n++
		}
	}
	return n, err
}

// latestTTLs maps each XR to the TTL its latest call to function asked for.
func (e *Environment) latestTTLs(function string) (map[string]string, error) {
	calls, err := e.loggedCalls(function)
	latest := map[string]string{}
	for _, c := range calls {
		if c.XR != "" && c.TTL != "" {
			latest[c.XR] = c.TTL
		}
	}
	return latest, err
}

// SettledXRs counts the XRs whose latest call to function asked for the settled TTL: they wait on nothing,
// and Crossplane reconciles them again only when something they compose or require changes.
func (e *Environment) SettledXRs(function string) (settled, all int, err error) {
	latest, err := e.latestTTLs(function)
	for _, ttl := range latest {
		if ttl == settledTTL {
			settled++
		}
	}
	return settled, len(latest), err
}
