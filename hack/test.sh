#!/usr/bin/env bash
# make test: the end-to-end suite beside everything else CI checks.
#
# The suite mostly waits on its control plane (the machine's load stays under 1 through most scenarios), while lint,
# unit tests, fuzzing, examples and packages (make verify) need the CPU for about four minutes: run one after
# another they added those minutes to CI, side by side they cost it little. The suite's output streams as it runs;
# make verify writes its own to a log printed once both are done, so their lines never interleave, and the last
# lines say which of the two failed.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p _output
verify_log=_output/verify.log
echo "make test: make verify (lint, unit, fuzz, examples, xpkg) beside make e2e; make verify's output follows the suite's ($verify_log)"
start=$(date +%s)
# Job control gives the background job a process group of its own, so whatever ends this script ends make verify
# and everything it started, by that group's ID.
set -m
(
  rc=0
  make --no-print-directory verify >"$verify_log" 2>&1 || rc=$?
  echo "make test: make verify ended with exit $rc after $(( $(date +%s) - start ))s (its output follows the suite's)"
  exit "$rc"
) &
verify_pid=$!
set +m
trap 'kill -- -"$verify_pid" 2>/dev/null || true' EXIT
e2e_rc=0
make --no-print-directory e2e || e2e_rc=$?
e2e_done=$(( $(date +%s) - start ))
verify_rc=0
wait "$verify_pid" || verify_rc=$?
trap - EXIT
echo "=== make verify (ran beside the end-to-end suite) ==="
cat "$verify_log"
echo "=== make test: e2e exit $e2e_rc after ${e2e_done}s; verify exit $verify_rc; all done after $(( $(date +%s) - start ))s ==="
if [ "$verify_rc" -ne 0 ]; then echo "make verify failed: see its output above" >&2; fi
if [ "$e2e_rc" -ne 0 ]; then echo "make e2e failed: see its output above" >&2; fi
[ "$verify_rc" -eq 0 ] && [ "$e2e_rc" -eq 0 ]
