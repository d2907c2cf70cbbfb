# ShieldBus — set-up, build, run, test and benchmark on a fresh Debian machine with Swift.
SWIFT ?= swift
BUILD_FLAGS ?=
BIN = .build/debug
RELEASE_BIN = .build/release

.PHONY: deps build run test bench soak report-png studio studio-screenshots clean

## deps: install the system libraries (libzmq3-dev, libsqlite3-dev), pyzmq, chromium, pytest and Playwright when missing
deps:
	@if ! pkg-config --exists libzmq || ! pkg-config --exists sqlite3; then \
		echo "installing libzmq3-dev and libsqlite3-dev with apt-get"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libzmq3-dev libsqlite3-dev pkg-config >/dev/null; \
	fi
	@python3 -c 'import zmq' 2>/dev/null || { echo "installing pyzmq with pip"; python3 -m pip install -q pyzmq || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-zmq >/dev/null; }; }
	@command -v chromium >/dev/null || { echo "installing chromium with apt-get (the HTML report's rendering test)"; apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }
	@# The Studio's browser test: Playwright drives Debian's chromium (it never downloads a browser of its own).
	@python3 -c 'import pytest, playwright.sync_api' 2>/dev/null || { echo "installing pytest and playwright with pip"; python3 -m pip install -q pytest playwright; }

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

## soak: many random days of a heavy user under ios-realistic, the lock invariant checked (SEEDS=1,2,3 DAYS=7)
SEEDS ?= 1,2,3,4,5,6,7,8
DAYS ?= 7
soak: deps
	$(SWIFT) build --build-tests $(BUILD_FLAGS)
	SHIELDBUS_SOAK_SEEDS=$(SEEDS) SHIELDBUS_SOAK_DAYS=$(DAYS) $(SWIFT) test --skip-build --filter SoakTests $(BUILD_FLAGS)

## bench: throughput through the broker beside a plain libzmq proxy (release build)
bench: deps
	$(SWIFT) build -c release --product shieldbus-bench
	$(RELEASE_BIN)/shieldbus-bench $(BENCH_ARGS)

## report-png: the report of a demo week (Config/report-demo.yml) as HTML, then as a PNG in headless Chromium
REPORT_DIR = .build/report-demo
REPORT_PNG ?= $(REPORT_DIR)/report.png
report-png: build
	rm -rf $(REPORT_DIR) && mkdir -p $(REPORT_DIR)
	$(BIN)/shieldbus run --config Config/report-demo.yml --state-dir $(REPORT_DIR)/state --runtime-dir $(REPORT_DIR)/play --quiet
	@# A broker on the week's state serves the report builder's numbers to `shieldbus report`.
	$(BIN)/shieldbus run --config Config/report-demo.yml --no-scenario --state-dir $(REPORT_DIR)/state --runtime-dir $(REPORT_DIR)/serve --quiet & \
	broker=$$!; \
	for attempt in 1 2 3 4 5; do \
		$(BIN)/shieldbus report weekly --date 2026-11-29 --html $(REPORT_DIR)/report.html --runtime-dir $(REPORT_DIR)/serve && break; sleep 1; \
	done; \
	kill $$broker; wait $$broker; test -s $(REPORT_DIR)/report.html
	chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir=$(REPORT_DIR)/chromium \
		--window-size=1200,2200 --screenshot=$(abspath $(REPORT_PNG)) file://$(abspath $(REPORT_DIR)/report.html) \
		2>$(REPORT_DIR)/chromium.log || { cat $(REPORT_DIR)/chromium.log; exit 1; }
	@echo "wrote $(REPORT_DIR)/report.html and $(REPORT_PNG)"

## studio: ShieldBus Studio (http://127.0.0.1:8080), following the broker running on the default runtime directory
studio: build
	$(BIN)/shieldbus studio

## studio-screenshots: the Studio's browser test, writing a PNG of each step to $(STUDIO_SHOTS) (STUDIO_SCALE=0.75: smaller)
STUDIO_SHOTS ?= .build/studio-screenshots
STUDIO_SCALE ?= 1
studio-screenshots: deps
	$(SWIFT) build $(BUILD_FLAGS)
	rm -rf $(STUDIO_SHOTS)
	SHIELDBUS=$(abspath $(BIN)/shieldbus) STUDIO_SCREENSHOTS=$(abspath $(STUDIO_SHOTS)) STUDIO_SCALE=$(STUDIO_SCALE) PYTHONDONTWRITEBYTECODE=1 \
		python3 -m pytest -q -p no:cacheprovider Tests/StudioTests/studio_browser_test.py
	@echo "wrote the screenshots to $(STUDIO_SHOTS)"

clean:
	rm -rf .build
