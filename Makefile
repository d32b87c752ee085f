# retrycore — one entry point for people and CI.
#
#   make demo    run the main job: the retry-storm simulation on its default scenario
#   make test    install what is missing, build every crate and binding, run every suite
#   make help    list every target
#
# `make test` is what .ci/run calls. It installs its own dependencies
# (Debian packages, PyPI and npm packages, crates) idempotently, so it works
# on a fresh machine.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

CARGO ?= cargo
PYTHON ?= python3
JOBS ?= 2
export CARGO_TERM_COLOR ?= never
export CARGO_BUILD_JOBS ?= $(JOBS)

.PHONY: help
help: ## list the targets
	@grep -hE '^[a-zA-Z0-9_.-]+:.*?## ' $(MAKEFILE_LIST) | sort | awk 'BEGIN {FS = ":.*?## "}; {printf "  %-18s %s\n", $$1, $$2}'

# ---------------------------------------------------------------- main job

.PHONY: demo
demo: ## run `retrycore simulate` on the default scenario and write storm.svg
	$(CARGO) run --release -q -p retrycore-cli -- simulate --out storm.svg

# ---------------------------------------------------------------- tests

.PHONY: test
test: ## build every crate and binding and run every suite (installs what it needs)
	# PostgreSQL, MariaDB and Redis start once, on loopback, for every suite that needs them
	# (the idempotency stores' Python and Node suites read RETRYCORE_TEST_*), and stop afterwards.
	scripts/test-servers.sh run -- $(MAKE) test-suites

.PHONY: test-suites
test-suites: # what `make test` runs, with the test servers' URLs exported
	$(MAKE) lint-rust
	$(MAKE) test-rust
	$(MAKE) test-vectors-drift
	$(MAKE) check-wasm-core
	$(MAKE) test-cli
	$(MAKE) test-python
	$(MAKE) test-http
	RETRYCORE_DRILL_REQUIRE=1 RETRYCORE_CROSS_REQUIRE=1 $(MAKE) test-node
	RETRYCORE_DRILL_REQUIRE=1 RETRYCORE_SIZE_REQUIRE=1 $(MAKE) test-wasm
	$(MAKE) parity
	$(MAKE) host-lines
	@echo "make test: all suites passed"

.PHONY: lint-rust
lint-rust: ## cargo fmt --check and clippy -D warnings on the whole workspace
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -q -- -D warnings

.PHONY: test-rust
test-rust: ## core unit tests, properties, shared vectors and doc tests (the CLI's alert tests run promtool)
	scripts/ensure-debian.sh prometheus
	$(CARGO) test --workspace -q

.PHONY: test-vectors-drift
test-vectors-drift: ## fail when generated vectors drift from their generator
	scripts/check-vector-drift.sh

.PHONY: check-wasm-core
check-wasm-core: ## build the core for wasm32-unknown-unknown (installs the toolchain if missing)
	scripts/install-wasm-toolchain.sh
	scripts/check-wasm-core.sh

.PHONY: test-cli
test-cli: ## the CLI's golden, simulation and error tests; its alert rules checked by promtool
	scripts/ensure-debian.sh prometheus
	$(CARGO) test -q -p retrycore-cli

.PHONY: test-python
test-python: ## build the Python wheel, install it into a venv, run tests/python and stubtest
	$(MAKE) -C bindings-python test

.PHONY: test-http
test-http: ## the real-client matrix: requests, urllib3, httpx, aiohttp, urllib.request and grpcio against local fault servers
	$(MAKE) -C bindings-python test-http

.PHONY: test-node
test-node: ## build the Node addon, run tests/js against it, pack and install the tarball
	$(MAKE) -C bindings-node test

.PHONY: test-wasm
test-wasm: ## build the wasm package (web, bundler, nodejs) and test it in Node, Chromium (page and worker), Deno and workerd
	$(MAKE) -C bindings-wasm test

PARITY_CASES ?= 10000
PARITY_RUNTIMES ?= python,node,wasm

.PHONY: parity
parity: ## differential test: PARITY_CASES random cases (default 10 000) in Rust, Python, Node (napi) and wasm must agree
	$(PYTHON) scripts/parity.py --cases $(PARITY_CASES) --runtimes $(PARITY_RUNTIMES)

# The parts whose bound `make test` holds (comma-separated, or `all`):
# docs/hosts.md, "How large the hosts are".
HOST_LINES_CHECK ?= all

.PHONY: host-lines
host-lines: ## print the bindings' lines next to the core's; fail above the bound of each part in HOST_LINES_CHECK (default all)
	$(PYTHON) scripts/host-lines.py $(if $(filter all,$(HOST_LINES_CHECK)),--check,--check=$(HOST_LINES_CHECK))

.PHONY: drill
drill: ## fault drill and concurrency tests: Python, Node (napi), Node (wasm)
	bindings-python/.venv/test/bin/python -m pytest -q -p no:cacheprovider tests/python/test_drill.py tests/python/test_concurrency.py
	RETRYCORE_DRILL_REQUIRE=1 RETRYCORE_IMPL=node node --test --test-reporter=spec tests/js/drill.test.cjs tests/js/concurrency.test.cjs
	RETRYCORE_DRILL_REQUIRE=1 RETRYCORE_IMPL=wasm node --test --test-reporter=spec tests/js/drill.test.cjs tests/js/concurrency.test.cjs

.PHONY: node-pack
node-pack: ## write the npm pack tarball of the Node package into bindings-node/
	$(MAKE) -C bindings-node pack

.PHONY: dist
dist: ## write the Python wheel and the npm tarballs of retrycore and retrycore-wasm into dist/ (what the README installs)
	$(MAKE) -C bindings-python wheel
	$(MAKE) -C bindings-node pack
	$(MAKE) -C bindings-wasm pack
	rm -rf dist
	mkdir -p dist
	cp bindings-python/.venv/wheels/retrycore-*.whl bindings-node/retrycore-*.tgz bindings-wasm/retrycore-wasm-*.tgz dist/
	ls -l dist

# ---------------------------------------------------------------- benchmarks and fuzzing

.PHONY: bench
bench: ## run the criterion benchmarks of the core
	$(CARGO) bench -p retrycore --bench core -- --noplot

.PHONY: bench-python
bench-python: ## Python binding vs tenacity, stamina, backoff and pybreaker
	$(MAKE) -C bindings-python bench

.PHONY: bench-node
bench-node: ## Node binding vs the raw Node-API floor, cockatiel, opossum, p-retry, exponential-backoff
	$(MAKE) -C bindings-node bench

.PHONY: bench-stores
bench-stores: ## idempotency stores (SQLite, PostgreSQL, MariaDB, Redis) vs a naive select-then-insert (BENCH_ARGS=--quick: a smoke run)
	$(MAKE) -C bindings-node compile
	scripts/test-servers.sh run -- node bindings-node/bench/stores.mjs $(BENCH_ARGS)

.PHONY: bench-wasm
bench-wasm: ## per-call costs of the wasm package vs the wasm-bindgen floor, the napi binding and the peers
	$(MAKE) -C bindings-wasm bench

.PHONY: fuzz
fuzz: ## run every cargo-fuzz target for FUZZ_SECONDS (default 20) each
	scripts/fuzz.sh $${FUZZ_SECONDS:-20}

.PHONY: clean
clean: ## remove build outputs
	$(CARGO) clean
	rm -rf bindings-wasm/dist dist storm.svg
