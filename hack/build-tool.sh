#!/usr/bin/env bash
# Builds one tool from its wrapper module under tools/<name>/ into the cache, once per version,
# and prints the binary's path. Each tools/<name>/build.env sets:
#   VERSION  the tool's version (the cache key)
#   PKG      the main package to build
#   BIN      the binary's file name
#   LDFLAGS  optional linker flags (e.g. to stamp the version)
# A module that builds several commands from one dependency set (e.g. kube-apiserver and kubectl) lists them
# instead as PKGS="BIN=PKG BIN=PKG ..."; pass the command's BIN as the second argument to pick one.
# usage: hack/build-tool.sh NAME [BIN]
set -euo pipefail
name=${1:?usage: hack/build-tool.sh NAME [BIN]}
command=${2:-}
root=$(cd "$(dirname "$0")/.." && pwd)
dir="$root/tools/$name"
[ -f "$dir/build.env" ] || { echo "no tools/$name/build.env" >&2; exit 1; }
LDFLAGS=""
# shellcheck disable=SC1091
. "$dir/build.env"
if [ -n "$command" ]; then
  PKG=""
  for pair in ${PKGS:-}; do
    if [ "${pair%%=*}" = "$command" ]; then PKG=${pair#*=}; fi
  done
  [ -n "$PKG" ] || { echo "tools/$name/build.env lists no command $command in PKGS" >&2; exit 1; }
  BIN=$command
fi
out="${KISO_CACHE:-$root/.cache}/tools/$name-$VERSION/$BIN"
if [ ! -x "$out" ]; then
  echo "building $name $VERSION (once; cached in ${out%/*})" >&2
  mkdir -p "${out%/*}"
  (cd "$dir" && CGO_ENABLED=0 go build -trimpath -ldflags "$LDFLAGS" -o "$out.tmp.$$" "$PKG") >&2
  mv "$out.tmp.$$" "$out"
fi
echo "$out"
