#!/usr/bin/env bash
# Builds kiso's Crossplane packages and pushes them; the Go command hack/xpkg does the work
# (go run ./hack/xpkg --help), and this runs it from the repository root for callers elsewhere.
#
#   hack/xpkg.sh build           writes _output/xpkg/configuration-kiso.xpkg and, per function and platform,
#                                function-<name>-linux-<arch>.xpkg and bin/function-<name>-linux-<arch>
#   hack/xpkg.sh push REGISTRY   pushes them as REGISTRY/<package>:$VERSION, each function as one multi-platform
#                                package (e.g. REGISTRY=ghcr.io/kiso-dev)
# Environment: VERSION (package tag, default v0.0.0-dev), XPKG_OUTPUT (default _output/xpkg), PLATFORMS
# (default linux/amd64,linux/arm64).
set -euo pipefail
cd "$(dirname "$0")/.."
exec go run ./hack/xpkg "$@"
