# Cairn — `make help` lists the targets.
SHELL := /usr/bin/env bash
GO ?= go
BIN := bin/cairn
BENCH_BIN := bin/cairn-bench
DATA_DIR ?= ./data
# The podman v5 bindings build without C libraries only with these tags.
BUILD_TAGS := remote,exclude_graphdriver_btrfs,btrfs_noversion,exclude_graphdriver_devicemapper,containers_image_openpgp
export GOFLAGS := -buildvcs=false -tags=$(BUILD_TAGS)
LISTEN ?= 127.0.0.1:8080
# More `cairn dev` flags for `make run`, e.g. DEV_FLAGS="--nats-listen 0.0.0.0:4222".
DEV_FLAGS ?=

.DEFAULT_GOAL := help

.PHONY: help
help: ## list the targets, one line each
	@awk -v listen='$(LISTEN)' -v data='$(DATA_DIR)' 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / { \
	  gsub(/\$$\(LISTEN\)/, listen, $$2); gsub(/\$$\(DATA_DIR\)/, data, $$2); printf "  %-10s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: build
build: ## build bin/cairn and bin/cairn-bench (the benchmarks, a binary of their own)
	$(GO) build -o $(BIN) ./cmd/cairn
	$(GO) build -o $(BENCH_BIN) ./cmd/cairn-bench

.PHONY: run
run: build ## start Cairn for development (cairn dev: API on $(LISTEN), NATS, local Podman agent, SQLite in $(DATA_DIR))
	@if [[ $$(id -u) -eq 0 ]]; then scripts/install-podman.sh; \
	  elif ! scripts/install-podman.sh; then \
	    echo "make run: WARNING: Podman is not ready (run scripts/install-podman.sh as root); the local agent cannot start, use DEV_FLAGS=--no-agent" >&2; \
	  fi
	@scripts/build-images.sh || \
	  echo "make run: WARNING: localhost/cairn/python:latest could not be built (see above); sessions can use localhost/cairn/base:latest" >&2
	$(BIN) dev --listen $(LISTEN) --data-dir $(DATA_DIR) $(DEV_FLAGS)

.PHONY: images
images: ## build the local images: localhost/cairn/base (busybox) and localhost/cairn/python (Jupyter, from Debian with mmdebstrap; needs root)
	scripts/install-podman.sh
	scripts/build-images.sh

.PHONY: test
test: lint ## run every test with -race, starting a throwaway PostgreSQL (CI=true: missing services fail)
	scripts/test.sh

.PHONY: test-long
test-long: ## run the long tests (CAIRN_LONG_TESTS=1), side by side: a 1 GiB upload at 1 MiB/s through cairn dev (about 17 minutes), 200 WebSockets through the app proxy for 14 minutes (memory flat over the last 10)
	CAIRN_LONG_TESTS=1 $(GO) test -race -count=1 -timeout 40m -run '^TestLong' -v ./infra/devserver/ ./e2e/

.PHONY: bench
bench: build ## run bin/cairn-bench against its baselines (store, scheduling, API audit on/off, session requests with a growing queue, session start vs podman run, app proxy vs published port, Web-UI pages in Chromium), write docs/benchmarks.md
	scripts/with-postgres.sh $(BENCH_BIN) store --out docs/benchmarks.md
	scripts/with-postgres.sh $(BENCH_BIN) schedule --append docs/benchmarks.md
	scripts/with-postgres.sh $(BENCH_BIN) api --append docs/benchmarks.md
	$(BENCH_BIN) sessions queue --append docs/benchmarks.md
	@if [[ $$(id -u) -eq 0 ]]; then scripts/install-podman.sh; fi
	$(BENCH_BIN) sessions --append docs/benchmarks.md
	$(BENCH_BIN) apps --append docs/benchmarks.md
	scripts/install-browser.sh
	scripts/with-postgres.sh $(BENCH_BIN) webui --append docs/benchmarks.md

.PHONY: fuzz
fuzz: ## run every fuzz test (each func FuzzX in a _test.go file) for FUZZTIME each (default 30s)
	@set -e; grep -rHo --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*' . | grep -v '^./data/' | \
	  while IFS=: read -r file fn; do \
	    pkg=$$(dirname "$$file"); fn=$${fn#func }; echo "fuzz $$fn in $$pkg"; \
	    $(GO) test -run='^$$' -fuzz="^$$fn$$" -fuzztime=$${FUZZTIME:-30s} "$$pkg/" </dev/null; \
	  done

.PHONY: webui
webui: ## rebuild the Web-UI's embedded assets (web/dist) from web/ui/src with the pinned esbuild (needs Node; commit web/dist)
	scripts/install-browser.sh --node-only
	cd web/ui && node build.mjs

.PHONY: screenshots
screenshots: build ## a PNG of every Web-UI page into docs/screenshots (starts a throwaway cairn dev)
	scripts/screenshots.sh

.PHONY: lint
lint: ## go vet, staticcheck (pinned in go.mod as a tool) and a gofmt check
	$(GO) vet ./...
	$(GO) tool staticcheck ./...
	@out=$$(gofmt -l $$(find . -name '*.go' -not -path './.git/*' -not -path './data/*' -not -path '*/node_modules/*')); \
	  if [[ -n "$$out" ]]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

.PHONY: clean
clean: ## remove build output (not the data directory)
	rm -rf bin
