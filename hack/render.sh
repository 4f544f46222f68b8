#!/usr/bin/env bash
# Renders kiso's examples with `crossplane render` against locally built functions, validates the output
# against the real CRD schemas, and compares it with the checked-in goldens.
#
# usage:
#   hack/render.sh render [DIR...]            print the rendered output of examples (default: all)
#   hack/render.sh check                      render and validate every example, diff with its expected.yaml
#   hack/render.sh golden                     rewrite every examples/<fn>/<scenario>/expected.yaml
#   hack/render.sh one XR [REQUIRED] [OBSERVED]  render and validate your own XR
#
# An example is a folder examples/<fn>/<scenario>/ holding xr.yaml, optional required.yaml (required resources),
# optional observed.yaml (observed composed resources) and expected.yaml (the golden). The XR's kind picks the
# function: XKarpenter<Fn> -> functions/<fn>, compositions/karpenter<fn>.yaml, apis/karpenter<fn>/definition.yaml.
#
# environment:
#   KISO_SRC=DIR    source tree holding functions/ compositions/ apis/ examples/ (default: this repository);
#                   lets the driver be exercised against a throwaway tree
#   KISO_NETNS=0    do not isolate the function servers in a loopback-only network namespace
#   KISO_DEBUG=1    start the functions with --debug and show their logs
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
src=$(cd "${KISO_SRC:-$root}" && pwd)
cache="${KISO_CACHE:-$root/.cache}"
functions_file="$root/test/render/functions.yaml"

usage() {
  sed -n '5,9p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

# fn_of XR_FILE: the function (isolation, cluster) an XR belongs to, from its kind.
fn_of() {
  local kind
  kind=$(sed -n 's/^kind:[[:space:]]*\([A-Za-z0-9]*\).*/\1/p' "$1" | head -n1)
  case "$kind" in
  XKarpenter?*) tr '[:upper:]' '[:lower:]' <<<"${kind#XKarpenter}" ;;
  *)
    echo "$1: kind ${kind:-<none>} is not an XKarpenter* XR" >&2
    return 1
    ;;
  esac
}

# port_of NAME: the loopback port the Function NAME is dialled at, from the functions file.
port_of() {
  awk -v want="$1" '
    /^---/ { name = ""; target = "" }
    /^  name:/ { name = $2 }
    /runtime-development-target:/ { target = $2 }
    name == want && target != "" { sub(/.*:/, "", target); print target; exit }
  ' "$functions_file"
}

# strip_results: drops the documents validation must not see: the `kind: Result` (and Context) objects that
# `render -r` appends, which have no schema, plus kinds whose schema is known to be unobtainable here.
strip_results() {
  awk -v drop="$1" '
    function flush() { if (doc != "" && !skip) printf "%s", doc; doc = ""; skip = 0 }
    /^---[[:space:]]*$/ { flush(); doc = $0 "\n"; next }
    /^apiVersion:/ { if ($2 ~ "^(render\\.crossplane\\.io" drop ")/") skip = 1 }
    { doc = doc $0 "\n" }
    END { flush() }
  '
}

# normalize: sorts the `Composed resource "X" is not yet ready|valid` Results among themselves. Crossplane emits
# them while ranging over a map, so their order changes from run to run; every other document keeps its place.
normalize() {
  awk '
    function flush() {
      if (doc == "") return
      sub(/\n$/, "", doc)
      gsub(/\n/, "\036", doc)
      # An event sorts by its whole document: long messages are folded over several lines.
      key = ev ? first " " doc : sprintf("%06d", n)
      print key "\t" doc
      n++; doc = ""; ev = 0
    }
    /^---[[:space:]]*$/ { flush(); doc = $0 "\n"; next }
    /^message: .?Composed resource "/ {
      if (first == "") first = sprintf("%06d", n)
      ev = 1
    }
    { doc = doc $0 "\n" }
    END { flush() }
  ' | LC_ALL=C sort -s -t "$(printf '\t')" -k1,1 | cut -f2- | tr '\036' '\n'
}

# ---------------------------------------------------------------------------------------------------------
# Phase 2: start the functions and render. Runs in the network namespace when one is available.
# ---------------------------------------------------------------------------------------------------------
serve_and_render() {
  local mode=$1
  shift
  local tmp=$KISO_RENDER_TMP failed=0

  if [ "${KISO_RENDER_NETNS:-0}" = 1 ]; then
    ip link set lo up
  fi

  # pids is global: the EXIT trap also runs after an error has unwound this function.
  pids=()
  stop_servers() {
    local pid
    for pid in "${pids[@]}"; do
      kill "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
    done
    pids=()
  }
  trap stop_servers EXIT
  trap 'exit 130' INT TERM

  local fn port pid i
  for fn in $KISO_RENDER_FNS; do
    port=$(port_of "kiso-dev-function-$fn")
    [ -n "$port" ] || {
      echo "test/render/functions.yaml declares no development target for kiso-dev-function-$fn" >&2
      return 1
    }
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "port $port (kiso-dev-function-$fn) is already in use; stop whatever listens there or use the network namespace" >&2
      return 1
    fi
    local debug=()
    [ "${KISO_DEBUG:-0}" = 1 ] && debug=(--debug)
    "$KISO_RENDER_BIN/$fn" --insecure --address="127.0.0.1:$port" "${debug[@]}" >"$tmp/$fn.log" 2>&1 &
    pids+=($!)
    pid=$!
    # A function needs a moment to listen; render fails outright if it dials too early.
    for ((i = 0; ; i++)); do
      if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
      if ! kill -0 "$pid" 2>/dev/null || [ "$i" -ge 300 ]; then
        echo "function kiso-dev-function-$fn did not start listening on 127.0.0.1:$port:" >&2
        cat "$tmp/$fn.log" >&2
        return 1
      fi
      sleep 0.1
    done
  done

  local dir xr req obs out
  while IFS='|' read -r fn dir xr req obs out; do
    local args=(render "$xr" "$src/compositions/karpenter$fn.yaml" "$functions_file"
      --include-function-results --include-full-xr --crossplane-binary="$KISO_RENDER_CORE")
    [ -f "$src/apis/karpenter$fn/definition.yaml" ] && args+=(--xrd="$src/apis/karpenter$fn/definition.yaml")
    [ -n "$req" ] && args+=(--required-resources="$req")
    [ -n "$obs" ] && args+=(--observed-resources="$obs")
    local rc=0
    "$KISO_RENDER_CLI" "${args[@]}" 2>"$out.err" | normalize >"$out" || rc=$?
    if [ "$rc" -ne 0 ]; then
      # A failed render (for example a Fatal result) prints nothing on stdout; the golden records the
      # error instead, so a scenario that must fail is checked as precisely as one that must succeed.
      {
        echo "# crossplane render failed (exit code $rc):"
        sed 's/^/# /' "$out.err"
      } >"$out"
    elif [ "$mode" = check ]; then
      # The same request must render byte-identical output; a second run catches map-order effects.
      "$KISO_RENDER_CLI" "${args[@]}" 2>/dev/null | normalize >"$out.again" || true
      if ! cmp -s "$out" "$out.again"; then
        echo "NONDETERMINISTIC ${dir#"$src"/}: two renders differ" >&2
        diff -u --label first --label second "$out" "$out.again" >&2 || true
        failed=1
      fi
    fi
    if [ "${KISO_DEBUG:-0}" = 1 ] && [ -s "$out.err" ]; then cat "$out.err" >&2; fi
  done <"$tmp/examples.list"

  if [ "${KISO_DEBUG:-0}" = 1 ]; then
    for fn in $KISO_RENDER_FNS; do cat "$tmp/$fn.log" >&2; done
  fi
  stop_servers
  trap - EXIT
  return "$failed"
}

if [ "${1:-}" = __serve ]; then
  # Re-entered inside the network namespace by phase 1 below.
  shift
  serve_and_render "$@"
  exit $?
fi

# ---------------------------------------------------------------------------------------------------------
# Phase 1: pick the examples, build tools and functions (this needs the network), then render and check.
# ---------------------------------------------------------------------------------------------------------
mode=${1:-}
[ -n "$mode" ] || usage
shift

dirs=()
one_xr="" one_req="" one_obs=""
case "$mode" in
render)
  if [ "$#" -gt 0 ]; then
    for d in "$@"; do dirs+=("$(cd "$d" && pwd)"); done
  fi
  ;;
check | golden) [ "$#" -eq 0 ] || usage ;;
one)
  if [ "$#" -lt 1 ] || [ "$#" -gt 3 ]; then usage; fi
  abs() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
  one_xr=$(abs "$1")
  [ -n "${2:-}" ] && one_req=$(abs "$2")
  [ -n "${3:-}" ] && one_obs=$(abs "$3")
  ;;
*) usage ;;
esac
if [ "$mode" != one ] && [ "${#dirs[@]}" -eq 0 ]; then
  while IFS= read -r x; do dirs+=("${x%/xr.yaml}"); done < <(
    find "$src/examples" -mindepth 3 -maxdepth 3 -name xr.yaml 2>/dev/null | LC_ALL=C sort
  )
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Turn signals into a normal exit so the EXIT traps (cleanup, stopping the servers) always run.
trap 'exit 130' INT TERM
mkdir -p "$tmp/out"

# One line per render, '|'-separated (tabs would merge empty fields): fn, example dir, xr, required, observed, output.
fns=" "
skipped=" "
: >"$tmp/examples.list"
add() {
  local fn=$1 dir=$2 xr=$3 req=$4 obs=$5
  if ! compgen -G "$src/functions/$fn/*.go" >/dev/null; then
    if [ "$mode" = one ]; then
      echo "functions/$fn has no Go files yet; cannot render $xr" >&2
      exit 1
    fi
    case "$skipped" in *" $fn "*) ;; *)
      echo "skipping examples/$fn/*: functions/$fn has no Go files yet" >&2
      skipped="$skipped$fn "
      ;;
    esac
    return
  fi
  [ -f "$src/compositions/karpenter$fn.yaml" ] || {
    echo "no compositions/karpenter$fn.yaml for ${xr#"$src"/}" >&2
    exit 1
  }
  case "$fns" in *" $fn "*) ;; *) fns="$fns$fn " ;; esac
  local out
  out="$tmp/out/$(printf '%03d' "$(wc -l <"$tmp/examples.list")").yaml"
  printf '%s|%s|%s|%s|%s|%s\n' "$fn" "$dir" "$xr" "$req" "$obs" "$out" >>"$tmp/examples.list"
}
# fn_of runs in an assignment, not inside add's arguments, so that its failure stops the script.
if [ "$mode" = one ]; then
  fn=$(fn_of "$one_xr")
  add "$fn" "$(dirname "$one_xr")" "$one_xr" "$one_req" "$one_obs"
else
  for d in "${dirs[@]}"; do
    [ -f "$d/xr.yaml" ] || {
      echo "$d: no xr.yaml" >&2
      exit 1
    }
    req="" obs=""
    [ -f "$d/required.yaml" ] && req="$d/required.yaml"
    [ -f "$d/observed.yaml" ] && obs="$d/observed.yaml"
    fn=$(fn_of "$d/xr.yaml")
    add "$fn" "$d" "$d/xr.yaml" "$req" "$obs"
  done
fi
if [ ! -s "$tmp/examples.list" ]; then
  echo "no examples to render" >&2
  exit 0
fi

KISO_RENDER_CLI=$("$root/hack/build-tool.sh" crossplane-cli)
KISO_RENDER_CORE=$("$root/hack/build-tool.sh" crossplane-core)
schemas=""
if [ "$mode" != render ]; then schemas=$("$root/hack/schemas.sh"); fi

# go build relinks only when a function's sources or dependencies changed.
bindir="$cache/render/bin"
if [ "$src" != "$root" ]; then bindir="$bindir-$(cksum <<<"$src" | cut -d' ' -f1)"; fi
mkdir -p "$bindir"
for fn in $fns; do
  (cd "$src" && CGO_ENABLED=0 go build -o "$bindir/$fn" "./functions/$fn")
done

export KISO_RENDER_CLI KISO_RENDER_CORE KISO_RENDER_BIN="$bindir" KISO_RENDER_TMP="$tmp" KISO_RENDER_FNS="$fns" KISO_SRC="$src"
# Inside a fresh network namespace only loopback exists: the insecure function servers (and the SDK's metrics
# listener on :8080) are unreachable from outside, and fixed ports cannot collide with anything else running.
# The PID namespace makes the kernel end the servers with phase 2's shell however it ends, even by SIGKILL.
rc=0
ns=(unshare --net --pid --fork --kill-child)
if [ "${KISO_NETNS:-1}" != 0 ] && command -v unshare >/dev/null && command -v ip >/dev/null &&
  "${ns[@]}" true 2>/dev/null; then
  KISO_RENDER_NETNS=1 "${ns[@]}" -- "$BASH" "$0" __serve "$mode" || rc=$?
else
  KISO_RENDER_NETNS=0 "$BASH" "$0" __serve "$mode" || rc=$?
fi

# Kinds with no schema obtainable here are not validated (reported); every other kind must have one.
drop=""
if [ -n "$schemas" ] && ! compgen -G "$schemas/rackspace/*.yaml" >/dev/null; then
  drop='|karpenter\\.rackspace\\.com'
fi

# validate FILE...: validates rendered files in one run (loading every schema takes about a second).
validate() {
  local exts
  exts=$(
    IFS=,
    x=("$schemas/karpenter" "$schemas/aws" "$schemas/prometheus")
    if compgen -G "$schemas/rackspace/*.yaml" >/dev/null; then x+=("$schemas/rackspace"); fi
    for d in "$src"/apis/*/definition.yaml; do if [ -f "$d" ]; then x+=("$d"); fi; done
    echo "${x[*]}"
  )
  "$KISO_RENDER_CLI" resource validate "$exts" "$(IFS=,; echo "$*")" \
    --cache-dir="$schemas/validate-cache" --crossplane-image=xpkg.crossplane.io/crossplane/crossplane:v2.4.0 \
    --error-on-missing-schemas --skip-success-results
}

tovalidate=()
while IFS='|' read -r fn dir xr req obs out; do
  label=${dir#"$src"/}
  [ "$mode" = one ] && label=$xr
  if [ ! -f "$out" ]; then
    echo "NOT RENDERED $label (the render run stopped early)" >&2
    rc=1
    continue
  fi
  case "$mode" in
  render | one) cat "$out" ;;
  golden)
    cp "$out" "$dir/expected.yaml"
    echo "wrote $label/expected.yaml" >&2
    ;;
  check)
    if [ ! -f "$dir/expected.yaml" ]; then
      echo "MISSING $label/expected.yaml (run: hack/render.sh golden)" >&2
      rc=1
    elif ! diff -u --label "$label/expected.yaml" --label "rendered" "$dir/expected.yaml" "$out" >&2; then
      echo "DIFF $label: rendered output differs from expected.yaml (run: hack/render.sh golden, then review the diff)" >&2
      rc=1
    fi
    ;;
  esac
  if grep -q '^# crossplane render failed' "$out"; then
    [ "$mode" = one ] && rc=1
    continue
  fi
  if [ "$mode" != render ]; then
    strip_results "$drop" <"$out" >"$out.validate.yaml"
    printf '%s\n' "$label" >"$out.label"
    tovalidate+=("$out.validate.yaml")
    if [ -n "$drop" ] && grep -q '^apiVersion: karpenter\.rackspace\.com/' "$out"; then
      echo "note: $label: RackspaceSpotNodeClass not validated (no schema available here)" >&2
    fi
  fi
done <"$tmp/examples.list"

if [ "${#tovalidate[@]}" -gt 0 ] && ! validate "${tovalidate[@]}" >"$tmp/validation" 2>&1; then
  # One run cannot tell which example an object came from; re-run each file to name the failing examples.
  named=0
  for f in "${tovalidate[@]}"; do
    if ! validate "$f" >"$f.validation" 2>&1; then
      echo "INVALID $(cat "${f%.validate.yaml}.label"):" >&2
      cat "$f.validation" >&2
      named=1
    fi
  done
  [ "$named" = 1 ] || cat "$tmp/validation" >&2
  rc=1
fi

if [ "$mode" = check ]; then
  n=$(wc -l <"$tmp/examples.list")
  if [ "$rc" -eq 0 ]; then echo "ok: $n example(s) render as expected and pass schema validation" >&2; fi
fi
exit "$rc"
