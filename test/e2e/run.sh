#!/usr/bin/env bash
# Runs kiso's end-to-end suite: a real control plane in a network namespace with only loopback, kiso's
# packages built and pushed to a loopback registry, installed by Crossplane, and claims applied with kubectl.
# The first run builds the tools (15 to 23 minutes on 2 cores, cached by version in the machine's cache:
# make cache-dir); a later run of the whole suite takes about 16 minutes (935 s in CI on 2 cores on 2026-12-05), the
# scenarios side by side (-parallel: steps_lanes_test.go says which take turns). Extra arguments go to `go test`, e.g. test/e2e/run.sh -run TestSmoke.
# Environment: KISO_E2E_KEEP=1 keeps the run's directory; KISO_E2E_NETNS=off runs on the host's 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")"
# The timeout includes building the tools on a cold cache: on a fresh machine (empty Go caches) they took 23 minutes
# beside make verify and the whole suite 40 (2026-12-05); 75 keeps the CI run within its 90.
# The suite's output is long and a CI log may keep only its end: once it has ended, each failed test's own lines are
# said again, last.
out=$(mktemp)
trap 'rm -f "$out"' EXIT
set +e
# go test says nothing while it compiles the suite, which on a cold Go build cache takes minutes (318 s beside make
# verify on a fresh machine, 2026-12-08): say so first.
echo "e2e: compiling the suite (minutes on a cold Go build cache), then building or finding the tools"
KISO_E2E=1 go test -count=1 -timeout=75m -parallel=32 -v "$@" . 2>&1 | tee "$out"
code=${PIPESTATUS[0]}
set -e
if [ "$code" -ne 0 ]; then
  echo "e2e: what the failed tests said (go test -v streams each test's lines under its === RUN/NAME/CONT; at most 150):"
  awk 'NR == FNR { if (match($0, /--- FAIL: [^ ]+/)) failed[substr($0, RSTART + 10, RLENGTH - 10)] = 1; next }
       /^=== (RUN|NAME|CONT|PAUSE) / { current = $3; next }
       /^ *--- (FAIL|PASS|SKIP)/ { if ($0 ~ /--- FAIL/) print; current = ""; next }
       /^[^ ]/ { current = ""; next }
       current in failed' "$out" "$out" | head -n 150
fi
exit "$code"
