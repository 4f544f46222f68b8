#!/usr/bin/env bash
# Builds kiso's Crossplane packages without Docker, and pushes them.
#
#   hack/xpkg.sh build           writes _output/xpkg/configuration-kiso.xpkg and function-<name>.xpkg,
#                                and each function's binary as _output/xpkg/bin/function-<name>
#   hack/xpkg.sh push REGISTRY   pushes them as REGISTRY/<package>:$VERSION (e.g. REGISTRY=ghcr.io/kiso-dev)
#
# A function's runtime image is its static binary at /function on an empty base: crane appends the layer and
# sets the entrypoint, which needs a registry to mutate in, so build serves a throwaway one on loopback.
# Environment: VERSION (package tag, default v0.0.0-dev), XPKG_OUTPUT (default _output/xpkg).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=${XPKG_OUTPUT:-$root/_output/xpkg}
version=${VERSION:-v0.0.0-dev}
functions=(isolation cluster)

usage() {
  echo "usage: hack/xpkg.sh build | push REGISTRY" >&2
  exit 2
}

work=""
registry_pid=""
cleanup() {
  if [ -n "$registry_pid" ]; then kill "$registry_pid" 2>/dev/null || true; wait "$registry_pid" 2>/dev/null || true; fi
  if [ -n "$work" ]; then rm -rf "$work"; fi
}
trap cleanup EXIT

# start_registry serves an in-memory registry on a free loopback port and sets registry to its host:port.
start_registry() {
  "$crane" registry serve --address 127.0.0.1:0 >"$work/registry.log" 2>&1 &
  registry_pid=$!
  local port=""
  for _ in $(seq 100); do
    port=$(sed -n 's/.*serving on port \([0-9]*\).*/\1/p' "$work/registry.log")
    [ -n "$port" ] && break
    kill -0 "$registry_pid" 2>/dev/null || { cat "$work/registry.log" >&2; exit 1; }
    sleep 0.1
  done
  [ -n "$port" ] || { echo "registry did not start:" >&2; cat "$work/registry.log" >&2; exit 1; }
  registry="127.0.0.1:$port"
}

# quietly runs a command, showing its output only if it fails: crane logs every blob it pushes.
quietly() {
  local log
  log=$(mktemp -p "$work")
  "$@" >"$log" 2>&1 || { local rc=$?; cat "$log" >&2; return "$rc"; }
}

# has_go_files says whether a function's directory has a main package to build yet.
has_go_files() {
  compgen -G "$root/functions/$1/*.go" >/dev/null
}

build_function() {
  local name=$1 dir="$work/function-$1"
  local binary="$out/bin/function-$name"
  mkdir -p "$dir/layer" "$dir/package" "$out/bin"
  (cd "$root" && CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -trimpath -ldflags "-s -w" \
    -o "$binary" "./functions/$name")
  cp "$binary" "$dir/layer/function"
  # Fixed owner and mtime keep the layer's digest a function of the binary alone.
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf "$dir/layer.tar" -C "$dir/layer" function
  [ -n "$registry" ] || start_registry
  local base="$registry/function-$name:base"
  quietly "$crane" append --oci-empty-base -f "$dir/layer.tar" -t "$base"
  quietly "$crane" mutate "$base" --entrypoint=/function --set-platform=linux/amd64 \
    -t "kiso-dev/function-$name:$version" -o "$dir/runtime.tar"
  cp "$root/package/functions/$name/"*.yaml "$dir/package/"
  "$crossplane" xpkg build --package-root="$dir/package" --examples-root="$dir/package/examples" \
    --embed-runtime-image-tarball="$dir/runtime.tar" -o "$out/function-$name.xpkg"
}

build_configuration() {
  local dir="$work/configuration"
  mkdir -p "$dir/apis" "$dir/compositions"
  cp "$root/package/configuration/crossplane.yaml" "$dir/"
  local definition
  for definition in "$root"/apis/*/definition.yaml; do
    [ -e "$definition" ] || continue
    local api=${definition%/definition.yaml}
    mkdir -p "$dir/apis/${api##*/}"
    cp "$definition" "$dir/apis/${api##*/}/"
  done
  if compgen -G "$root/compositions/*.yaml" >/dev/null; then cp "$root"/compositions/*.yaml "$dir/compositions/"; fi
  "$crossplane" xpkg build --package-root="$dir" --examples-root="$dir/examples" -o "$out/configuration-kiso.xpkg"
}

build() {
  crane=$("$root/hack/build-tool.sh" crane)
  crossplane=$("$root/hack/build-tool.sh" crossplane-cli)
  work=$(mktemp -d)
  registry=""
  rm -rf "$out"
  mkdir -p "$out"
  local name
  for name in "${functions[@]}"; do
    if has_go_files "$name"; then
      build_function "$name"
    else
      echo "skipping function $name: functions/$name has no Go files yet" >&2
    fi
  done
  build_configuration
  ls -l "$out"
}

push() {
  local target=${1:?usage: hack/xpkg.sh push REGISTRY}
  crossplane=$("$root/hack/build-tool.sh" crossplane-cli)
  local package
  for package in "$out"/*.xpkg; do
    [ -e "$package" ] || { echo "no packages in $out: run hack/xpkg.sh build first" >&2; exit 1; }
    local name=${package##*/}
    "$crossplane" xpkg push -f "$package" "$target/${name%.xpkg}:$version"
  done
}

case "${1:-}" in
  build) build ;;
  push) shift; push "$@" ;;
  *) usage ;;
esac
