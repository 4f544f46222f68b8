#!/usr/bin/env bash
# Extracts one file from a Debian package, fetched with apt-get from the machine's own Debian sources: what
# hack/build-tool.sh does for a tool whose build.env names a DEB. Without root nothing is installed: apt-get
# download needs only the package lists, which it reads (as root it updates them once if they lack the package).
# A machine whose sources no longer offer VERSION (a Debian point release, another distribution) gets the version
# they offer, and says so.
# usage: hack/deb-tool.sh PACKAGE VERSION PATH-IN-PACKAGE OUT
set -euo pipefail
package=${1:?usage: hack/deb-tool.sh PACKAGE VERSION PATH OUT}
version=${2:?}
path=${3:?}
out=${4:?}
command -v apt-get >/dev/null || { echo "hack/deb-tool.sh: $package: no apt-get on this machine (a Debian or Ubuntu one has it)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

offered() { apt-cache policy "$package" 2>/dev/null | sed -n 's/^  Candidate: //p' | grep -v '(none)' || true; }
if [ -z "$(offered)" ] && [ "$(id -u)" = 0 ]; then
  apt-get update -qq >&2
fi
candidate=$(offered)
[ -n "$candidate" ] || { echo "hack/deb-tool.sh: apt offers no $package: run apt-get update (as root) first" >&2; exit 1; }
if ! (cd "$work" && apt-get download -qq "$package=$version") >&2; then
  echo "hack/deb-tool.sh: this machine's Debian sources do not offer $package $version; using $candidate" >&2
  (cd "$work" && apt-get download -qq "$package=$candidate") >&2
fi
deb=$(ls "$work"/*.deb)
if command -v dpkg-deb >/dev/null; then
  dpkg-deb --fsys-tarfile "$deb" | tar -xf - -C "$work" "./$path"
else
  (cd "$work" && ar x "$deb" && tar -xf data.tar.* "./$path")
fi
install -m 0755 "$work/$path" "$out"
