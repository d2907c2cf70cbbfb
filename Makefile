# ShieldBus — set-up, build, run, test and benchmark on a fresh Debian machine with Swift.
SWIFT ?= swift
BUILD_FLAGS ?=
BIN = .build/debug
RELEASE_BIN = .build/release

.PHONY: deps build run test bench clean

## deps: install the system libraries (libzmq3-dev, libsqlite3-dev) and pyzmq when missing
deps:
	@if ! pkg-config --exists libzmq || ! pkg-config --exists sqlite3; then \
		echo "installing libzmq3-dev and libsqlite3-dev with apt-get"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libzmq3-dev libsqlite3-dev pkg-config >/dev/null; \
	fi
	@python3 -c 'import zmq' 2>/dev/null || { echo "installing pyzmq with pip"; python3 -m pip install -q pyzmq || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-zmq >/dev/null; }; }

## build: compile everything (debug)
build: deps
	$(SWIFT) build $(BUILD_FLAGS)

## run: the main job — the broker on the embedded default configuration
run: build
	$(BIN)/shieldbus run --config Config/default.yml

## test: every test suite
test: deps
	$(SWIFT) build --build-tests $(BUILD_FLAGS)
	$(SWIFT) test --skip-build $(BUILD_FLAGS)

## bench: throughput through the broker beside a plain libzmq proxy (release build)
bench: deps
	@# Broker imports BusClient without declaring it in Package.swift, so a product-only build can reach Broker first.
	$(SWIFT) build -c release --target BusClient
	$(SWIFT) build -c release --product shieldbus-bench
	$(RELEASE_BIN)/shieldbus-bench $(BENCH_ARGS)

clean:
	rm -rf .build
