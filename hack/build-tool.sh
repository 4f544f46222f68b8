#!/usr/bin/env bash
# Builds one tool from its wrapper module under tools/<name>/ into the cache, once per version,
# and prints the binary's path. Each tools/<name>/build.env sets:
#   VERSION  the tool's version (the cache key)
#   PKG      the main package to build
#   BIN      the binary's file name
#   LDFLAGS  optional linker flags (e.g. to stamp the version)
#   GOTOOLCHAIN  optional Go toolchain for this tool's build alone (e.g. go1.27.3, fetched from the module proxy) when
#            its module needs a newer Go than the installed one; it is exported only to that `go build`
# A module that builds several commands from one dependency set (e.g. kube-apiserver and kubectl) lists them
# instead as PKGS="BIN=PKG BIN=PKG ..."; pass the command's BIN as the second argument to pick one.
# A tool Go does not build here (promtool: Prometheus's module builds slowly and pulls every cloud SDK) is taken
# from a Debian package instead: build.env sets DEB (the package), DEB_VERSION (its version), BIN and DEB_FILE
# (the binary's path in the package), and VERSION the tool's own; apt-get downloads it from the machine's own
# Debian sources. A Node.js package (the IAM data the policy tests check against) is installed from the npm registry
# instead: build.env sets NPM (the package), VERSION (its version) and BIN=node_modules, and the path printed is the
# node_modules folder holding it.
# usage: hack/build-tool.sh NAME [BIN]
set -euo pipefail
name=${1:?usage: hack/build-tool.sh NAME [BIN]}
command=${2:-}
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=cache.sh
. "$root/hack/cache.sh"
dir="$root/tools/$name"
[ -f "$dir/build.env" ] || { echo "no tools/$name/build.env" >&2; exit 1; }
LDFLAGS=""
# build.env's GOTOOLCHAIN is read into $toolchain; the caller's GOTOOLCHAIN is restored untouched.
caller_toolchain_set=${GOTOOLCHAIN+x}
caller_toolchain=${GOTOOLCHAIN-}
unset GOTOOLCHAIN
# shellcheck disable=SC1091
. "$dir/build.env"
toolchain=${GOTOOLCHAIN-}
unset GOTOOLCHAIN
if [ -n "$caller_toolchain_set" ]; then export GOTOOLCHAIN="$caller_toolchain"; fi
if [ -n "$command" ]; then
  PKG=""
  for pair in ${PKGS:-}; do
    if [ "${pair%%=*}" = "$command" ]; then PKG=${pair#*=}; fi
  done
  [ -n "$PKG" ] || { echo "tools/$name/build.env lists no command $command in PKGS" >&2; exit 1; }
  BIN=$command
fi
# The wrapper module's files join the version in the key: a dependency bump, a new linker flag or another toolchain
# yields a fresh folder, never a binary built from what was there before.
files=$(cd "$dir" && cksum -- * | cksum | cut -d' ' -f1)
out="$(hack_cache_dir "$root")/tools/$name-$VERSION-$files/$BIN"
if [ ! -x "$out" ]; then
  mkdir -p "${out%/*}"
  # make test builds tools from two sides at once (make verify and the e2e suite): one builds, the other waits for
  # it rather than compiling the same tool again. The lock is a directory holding its holder's PID; a holder that
  # died (killed mid-build) leaves a lock that the next caller takes over.
  lock="$out.lock"
  # Said once, so a caller waiting on another's build is not silent.
  waiting=""
  until mkdir "$lock" 2>/dev/null; do
    if [ -z "$waiting" ]; then
      echo "build-tool: waiting for another build of $BIN of $name $VERSION" >&2
      waiting=1
    fi
    holder=$(cat "$lock/pid" 2>/dev/null || true)
    if [ -n "$holder" ] && ! kill -0 "$holder" 2>/dev/null; then
      rm -rf "$lock"
      continue
    fi
    sleep 2
  done
  echo $$ >"$lock/pid"
  trap 'rm -rf "$lock"' EXIT
  if [ ! -x "$out" ] && [ -n "${NPM:-}" ]; then
    echo "build-tool: installing $NPM $VERSION from the npm registry (once; cached in ${out%/*})" >&2
    tmp="${out%/*}/install.tmp.$$"
    rm -rf "$tmp" && mkdir -p "$tmp"
    npm install --prefix "$tmp" --no-save --ignore-scripts --no-audit --no-fund --loglevel=error "$NPM@$VERSION" >&2
    mv "$tmp/node_modules" "$out"
    rm -rf "$tmp"
    echo "build-tool: $name $VERSION installed after ${SECONDS}s" >&2
  elif [ ! -x "$out" ] && [ -n "${DEB:-}" ]; then
    echo "build-tool: fetching $name from Debian's $DEB $DEB_VERSION (once; cached in ${out%/*})" >&2
    "$root/hack/deb-tool.sh" "$DEB" "$DEB_VERSION" "$DEB_FILE" "$out.tmp.$$" >&2
    mv "$out.tmp.$$" "$out"
    echo "build-tool: $name $VERSION fetched after ${SECONDS}s" >&2
  elif [ ! -x "$out" ]; then
    echo "build-tool: building $BIN of $name $VERSION (once; cached in ${out%/*})" >&2
    (
      cd "$dir"
      if [ -n "$toolchain" ]; then export GOTOOLCHAIN="$toolchain"; fi
      CGO_ENABLED=0 go build -trimpath -ldflags "$LDFLAGS" -o "$out.tmp.$$" "$PKG"
    ) >&2
    mv "$out.tmp.$$" "$out"
    echo "build-tool: $BIN of $name $VERSION built after ${SECONDS}s" >&2
  fi
  rm -rf "$lock"
  trap - EXIT
fi
echo "$out"
