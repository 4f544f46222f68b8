#!/usr/bin/env bash
# Copies the real CRD schemas kiso's rendered output is validated against into the cache, once per version,
# and prints the schema directory. The CRDs ship inside Go module zips, so the Go module proxy is the only source.
#
# Layout (each folder can be passed to `crossplane resource validate` alone or together with others):
#   <dir>/karpenter/     NodePool, NodeClaim, EC2NodeClass, ... (KARPENTER_CRDS in hack/crds.env)
#   <dir>/aws/           the cluster-scoped provider-aws kinds kiso composes (PROVIDER_AWS_CRDS)
#   <dir>/prometheus/    PrometheusRule (PROMETHEUS_CRDS)
#   <dir>/providers/     provider-kubernetes' Object and provider-helm's Release (PROVIDER_KUBERNETES_CRDS,
#                        PROVIDER_HELM_CRDS)
#   <dir>/rackspace/     RackspaceSpotNodeClass, only when a provider module is served (else a NOTE file)
#   <dir>/validate-cache/xpkg.crossplane.io/crossplane/crossplane@<v>/package.yaml
#                        Crossplane's own CRDs, laid out as `crossplane resource validate --cache-dir` expects,
#                        so validation never pulls the Crossplane image.
# usage: hack/schemas.sh            (prints the schema directory)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=cache.sh
. "$root/hack/cache.sh"

# The modules, versions and CRD files, shared with the end-to-end harness.
# shellcheck source=crds.env
. "$root/hack/crds.env"
CROSSPLANE_MODULE=github.com/crossplane/crossplane/v2
# The CRDs of the Crossplane core that renders and runs kiso; build.env is sourced in a subshell so that its
# other variables stay out of this script.
CROSSPLANE_VERSION=$(. "$root/tools/crossplane-core/build.env" && echo "$VERSION")
RACKSPACE_MODULE=github.com/kanya-approve/karpenter-provider-rackspace-spot
# Exact versions only: the proxy refuses version lists for many modules.
RACKSPACE_VERSIONS="v0.1.6 v0.1.5 v0.1.0"

# The versions and the lists are the cache key: bumping one, or adding a CRD, yields a fresh directory rather than
# a stale mix.
lists=$(cksum <"$root/hack/crds.env" | cut -d' ' -f1)
key="karpenter-$KARPENTER_VERSION.aws-$PROVIDER_AWS_VERSION.prom-$PROMETHEUS_VERSION.k8s-$PROVIDER_KUBERNETES_VERSION.helm-$PROVIDER_HELM_VERSION.xp-$CROSSPLANE_VERSION.$lists"
out="$(hack_cache_dir "$root")/schemas/$key"
if [ -f "$out/.complete" ]; then
  echo "$out"
  exit 0
fi

mkdir -p "${out%/*}"
work=$(mktemp -d)
# Assembled beside its final place and renamed at the end, so a concurrent or interrupted run never leaves a
# half-filled schema directory behind.
tmp=$(mktemp -d "$out.tmp.XXXXXX")
trap 'rm -rf "$work" "$tmp"' EXIT

# module_file MODULE VERSION PATH: prints the file's path inside the extracted module.
# `go mod download` reports an Error and no Dir for a module whose go line is newer than the local toolchain
# (Karpenter v1.15.0 needs go >= 1.26.9), yet it has verified and extracted the zip: fall back to the extracted
# folder, then to the zip itself.
module_file() {
  local mod=$1 ver=$2 path=$3 json dir zip
  # Run outside any module so the download never touches a go.mod or go.sum.
  json=$(cd "$work" && { go mod download -json "$mod@$ver" 2>/dev/null || true; })
  dir=$(field Dir <<<"$json")
  # Module paths here are lower-case, so the module cache path needs no case escaping.
  [ -n "$dir" ] || dir="$(go env GOMODCACHE)/$mod@$ver"
  if [ -f "$dir/$path" ]; then
    echo "$dir/$path"
    return
  fi
  zip=$(field Zip <<<"$json")
  if [ -n "$zip" ] && [ -f "$zip" ] && command -v unzip >/dev/null; then
    mkdir -p "$work/zip"
    unzip -qo "$zip" "$mod@$ver/$path" -d "$work/zip" >&2
    echo "$work/zip/$mod@$ver/$path"
    return
  fi
  echo "cannot read $path from $mod@$ver: $(field Error <<<"$json")" >&2
  return 1
}

# field NAME: a string field of `go mod download -json` output, which prints one field per line.
field() {
  sed -n "s/^[[:space:]]*\"$1\": \"\(.*\)\",\{0,1\}$/\1/p"
}

# copy MODULE VERSION DEST_DIR PATH...: copies files (PATH relative to the module root) into DEST_DIR.
copy() {
  local mod=$1 ver=$2 dest=$3 p f
  shift 3
  mkdir -p "$dest"
  for p in "$@"; do
    f=$(module_file "$mod" "$ver" "$p")
    install -m 0644 "$f" "$dest/${p##*/}"
  done
}

echo "fetching CRD schemas into ${out} (once)" >&2

# The lists hold one path per line, none with spaces: word splitting is what reads them.
# shellcheck disable=SC2086
copy "$KARPENTER_MODULE" "$KARPENTER_VERSION" "$tmp/karpenter" $KARPENTER_CRDS
# shellcheck disable=SC2086
copy "$PROVIDER_AWS_MODULE" "$PROVIDER_AWS_VERSION" "$tmp/aws" $PROVIDER_AWS_CRDS
# shellcheck disable=SC2086
copy "$PROMETHEUS_MODULE" "$PROMETHEUS_VERSION" "$tmp/prometheus" $PROMETHEUS_CRDS
# shellcheck disable=SC2086
copy "$PROVIDER_KUBERNETES_MODULE" "$PROVIDER_KUBERNETES_VERSION" "$tmp/providers" $PROVIDER_KUBERNETES_CRDS
# shellcheck disable=SC2086
copy "$PROVIDER_HELM_MODULE" "$PROVIDER_HELM_VERSION" "$tmp/providers" $PROVIDER_HELM_CRDS

# Crossplane's CRDs as the validate cache's one multi-document file per image.
xp_dir=$(dirname "$(module_file "$CROSSPLANE_MODULE" "$CROSSPLANE_VERSION" cluster/crds/pkg.crossplane.io_functions.yaml)")
pkg="$tmp/validate-cache/xpkg.crossplane.io/crossplane/crossplane@$CROSSPLANE_VERSION/package.yaml"
mkdir -p "${pkg%/*}"
for f in "$xp_dir"/*.yaml; do
  # Each CRD file may or may not start with '---'; separate them explicitly.
  echo "---"
  sed '/^---[[:space:]]*$/d' "$f"
done >"$pkg"

# Rackspace Spot's Karpenter provider: optional, served by the proxy only if it was ever fetched through it.
mkdir -p "$tmp/rackspace"
found=""
for v in $RACKSPACE_VERSIONS; do
  if f=$(module_file "$RACKSPACE_MODULE" "$v" charts/karpenter/crds/karpenter.rackspace.com_rackspacespotnodeclasses.yaml 2>/dev/null) ||
    f=$(module_file "$RACKSPACE_MODULE" "$v" config/crd/karpenter.rackspace.com_rackspacespotnodeclasses.yaml 2>/dev/null); then
    install -m 0644 "$f" "$tmp/rackspace/"
    found=$v
    break
  fi
done
if [ -z "$found" ]; then
  # Recorded so later runs stay offline; delete the schema directory to probe again.
  echo "$RACKSPACE_MODULE is not served by the module proxy (tried $RACKSPACE_VERSIONS); no RackspaceSpotNodeClass schema." \
    >"$tmp/rackspace/NOTE"
  echo "note: no RackspaceSpotNodeClass schema ($RACKSPACE_MODULE not served at $RACKSPACE_VERSIONS)" >&2
fi

touch "$tmp/.complete"
# Fails harmlessly when a concurrent run got there first; the trap then removes this copy.
mv -T "$tmp" "$out" 2>/dev/null || true
echo "$out"
