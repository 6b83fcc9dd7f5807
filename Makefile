# Developer entry points for opgen. `make help` lists them.
#
# The two that matter on a fresh machine, with only Go installed:
#   make demo   runs hello-operator on a local control plane and shows its work
#   make test   runs every test, unit and integration

SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

GO ?= go
OPGEN := $(GO) run ./cmd/opgen
STATICCHECK_VERSION := v0.8.2

.PHONY: help
help: ## List the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {printf "  %-14s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

# The race detector runs over the runtime's packages as well: a data race
# there (the informer's object changed under its event handlers) crashed an
# operator only after 15 minutes of churn.
.PHONY: test
test: controlplane ## Run every test, unit and integration (builds the control plane first when missing)
	$(GO) test -timeout 30m ./...
	$(GO) test -race -timeout 15m ./pkg/runtime/... ./pkg/plug/ ./pkg/webhook/...
	cd hack/helmcheck && $(GO) test ./...
	cd hack/apicheck && $(GO) test ./...
	cd hack/promcheck && $(GO) test ./...
	cd bench && $(GO) test ./harness/ ./internal/probe/

# The fault-injection tests (docs/reliability.md). `make test` runs them
# too, the election one in its short form under -short.
CHAOS_TESTS = TestNoResurrection|TestDescendantsConverge|TestRecoversAtOnceAfterAnOutage|TestShutdownWithStuckHandler|TestReadyzFollowsTheAPIServer|TestNeverReadyWhenNeverSynced|TestPanicIsRecorded|TestPeriodicRequeuesAreNotRetries|TestElectionNeverOverlaps|TestChangesWhileStoppedAreNotLost|TestMissingOwnedKindWaitsForItsCRD|TestFinalizerFirst|TestEndlessErrors|TestForeignWriter|TestRecorderCutsLongNotes|TestStartsWithConventionalPortsTaken|TestThrottlingIsCounted

# The webhooks' and the examples' fault tests: a deletion with the
# operator down, stale webhook configurations (local and cluster mode),
# the undeletable Todo and the Greeting name no Service can take refused.
WEBHOOK_CHAOS_TESTS = TestDeleteNeedsNoOperatorWithoutADeleteCheck|TestStaleRegistrations|TestLocalRunsKeepEachOthersWebhooks|TestReadyAtOnceAfterAnOutage|TestRegistrationCheckSurvivesAForbiddenStart
EXAMPLE_CHAOS_TESTS = TestDeleteWhileOperatorIsDown|TestStartedWithoutWebhooks|TestHugeDescriptionIsRefused|TestArchiveStaysUnderBudget|TestRefusedArchiveIsACondition|TestNamespaceBeingDeleted|TestNameThatCannotNameAServiceIsRefused

.PHONY: chaos
chaos: controlplane ## Run the fault-injection tests in full, in three parallel lanes, logged with their figures (docs/reliability.md)
	CHAOS_TESTS='$(CHAOS_TESTS)' WEBHOOK_CHAOS_TESTS='$(WEBHOOK_CHAOS_TESTS)' EXAMPLE_CHAOS_TESTS='$(EXAMPLE_CHAOS_TESTS)' GO='$(GO)' hack/chaos.sh $(CHAOS_LOG)

.PHONY: mutants
mutants: controlplane ## Break what each fault test protects, one mutant at a time, and check that the test fails (docs/reliability.md)
	$(GO) run ./hack/mutants

.PHONY: controlplane
controlplane: ## Build etcd, kube-apiserver, kube-controller-manager and kubectl when missing
	$(OPGEN) controlplane

.PHONY: dev
dev: ## Run a local control plane in the foreground (Ctrl-C stops it)
	$(GO) run ./cmd/opgen/dev

.PHONY: generate
generate: ## Regenerate all generated code and manifests (the root module and the bench module)
	$(GO) generate ./...
	cd bench && $(GO) generate ./...

.PHONY: verify
verify: generate apicheck ## Regenerate and fail when anything committed differs; check the Go API against the last release
	@if ! git diff --quiet; then git --no-pager diff --stat; echo "generated code is stale: run 'make generate' and commit the result"; exit 1; fi
	@untracked=$$(git ls-files --others --exclude-standard); \
	if [ -n "$$untracked" ]; then echo "$$untracked"; echo "generation wrote files that are not committed: commit them"; exit 1; fi

# The SDK's Go API is a contract (CHANGELOG.md): an incompatible change
# of pkg/... since the last release fails unless the changelog lists it.
.PHONY: apicheck
apicheck: ## Compare the Go API of pkg/... with the last release's (hack/apicheck/release.txt)
	cd hack/apicheck && $(GO) run . -changelog CHANGELOG.md

.PHONY: lint
lint: ## go vet, a gofmt check and staticcheck, of the root and the bench module
	$(GO) vet ./...
	cd bench && $(GO) vet ./...
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$unformatted" ]; then echo "not gofmt'd:"; echo "$$unformatted"; exit 1; fi
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...
	cd bench && $(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

.PHONY: manifests
manifests: ## Write the examples' whole operator manifests (examples/*/deploy/*.yaml) with opgen manifests
	$(GO) generate -run 'cmd/opgen manifests' ./examples/...

# The examples' images, built as opgen image builds a user's: no Docker,
# linux/amd64 and linux/arm64, the same digest for the same sources.
.PHONY: image
image: ## Build hello-operator's image without Docker into bin/hello-operator-image (an OCI layout) and print its digest
	cd examples/hello-operator && $(GO) run ../../cmd/opgen image --out ../../bin/hello-operator-image

.PHONY: demo
demo: ## Run hello-operator on a local control plane and show what it does
	$(GO) run ./examples/hello-operator/demo

.PHONY: conformance-realworld
conformance-realworld: ## Run opgen on public operators downloaded from the module proxy, against controller-gen and code-generator with each project's options (about an hour; not part of make test)
	$(GO) run ./hack/realworld $(if $(ONLY),-only $(ONLY))

.PHONY: bench-codegen
bench-codegen: ## Time opgen generate against controller-gen + code-generator on the fixture types
	cd bench && $(GO) run ./codegen

.PHONY: bench
bench: controlplane ## Run the benchmark suite against controller-runtime (about 80 min on 2 cores; writes bench/results/<date>-<commit>.{md,json,png})
	cd bench && $(GO) run ./harness

.PHONY: bench-quick
bench-quick: controlplane ## A few-minute run of the benchmark suite with small N (results/<date>-<commit>-quick.*; not for quoting)
	cd bench && $(GO) run ./harness -quick

# The regression guard: the opgen benchmark operator built at two git refs,
# run interleaved round by round in one run. B defaults to the working tree;
# BENCH to every benchmark that can compare (bench/README.md).
.PHONY: bench-compare
bench-compare: controlplane ## Compare opgen at git refs A and B in one run: A=<ref> [B=<ref>] [BENCH=throughput,coldstart] [ROUNDS=n] [BENCH_FLAGS=-quick]
	@if [ -z "$(A)" ]; then echo "usage: make bench-compare A=<ref> [B=<ref>, default the working tree] [BENCH=throughput,coldstart,...] [ROUNDS=n] [BENCH_FLAGS=-quick]"; exit 2; fi
	cd bench && $(GO) run ./harness -compare '$(A),$(B)' $(if $(BENCH),-only '$(BENCH)') $(if $(ROUNDS),-rounds $(ROUNDS)) $(BENCH_FLAGS)
