# ShieldBus — set-up, build, run, test and benchmark on a fresh Debian machine with Swift.
SWIFT ?= swift
BUILD_FLAGS ?=
BIN = .build/debug
RELEASE_BIN = .build/release

.PHONY: deps build run test test-fast test-slow zones bench bench-quick bench-build bench-launches bench-reports bench-studio soak faults explore explore-releases explore-cluster fuzz report-png studio studio-screenshots clean

## deps: install the system libraries (libzmq3-dev, libsqlite3-dev), pyzmq, chromium, pytest and Playwright when missing
deps:
	@if ! pkg-config --exists libzmq || ! pkg-config --exists sqlite3; then \
		echo "installing libzmq3-dev and libsqlite3-dev with apt-get"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libzmq3-dev libsqlite3-dev pkg-config >/dev/null; \
	fi
	@# Plugins run sandboxed by bubblewrap, as iOS sandboxes extensions.
	@command -v bwrap >/dev/null || { echo "installing bubblewrap with apt-get (the plugins' sandbox)"; apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null; }
	@# make faults steps the host's clock under the broker with Debian's libfaketime (the broker's process only).
	@test -e /usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1 || { echo "installing libfaketime with apt-get (make faults' clock steps)"; apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libfaketime >/dev/null; }
	@# make faults turns the state folder read-only under a running device through a FUSE mirror (Debian's python3-fusepy).
	@test -e /usr/lib/python3/dist-packages/fusepy.py || { echo "installing python3-fusepy with apt-get (make faults' read-only disk)"; apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-fusepy >/dev/null; }
	@python3 -c 'import zmq' 2>/dev/null || { echo "installing pyzmq with pip"; python3 -m pip install -q pyzmq || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-zmq >/dev/null; }; }
	@command -v chromium >/dev/null || { echo "installing chromium with apt-get (the HTML report's rendering test)"; apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }
	@# The Studio's browser test: Playwright drives Debian's chromium (it never downloads a browser of its own).
	@# (A Debian system Python refuses pip installs (PEP 668) unless told; a virtualenv or pyenv Python takes them as is.)
	@python3 -c 'import pytest, playwright.sync_api' 2>/dev/null || { echo "installing pytest and playwright with pip"; \
		python3 -m pip install -q pytest playwright 2>/dev/null || python3 -m pip install -q --break-system-packages pytest playwright; }

## build: compile everything (debug)
build: deps
	$(SWIFT) build $(BUILD_FLAGS)

## run: the main job — the broker on the embedded default configuration
run: build
	$(BIN)/shieldbus run --config Config/default.yml

## test-fast: the in-process lane — formats, configuration, the checker, the SDK's Apple-shaped types, SQLite and libzmq
## in-process, explore's shards and their merge, the device OS and each of its parts on a bus the test holds, the bench's
## floor arithmetic; no broker or plugin process is started (about a minute on 2 cores)
FAST_TESTS = ^(BusProtocolTests|ConfigurationTests|SortedJSONTests|SQLiteTests|AppGroupStoreTests|UsageReportsTests|LockInvariantTests|ZeroMQTests|ScreenTimeTests|ShieldBusBenchTests)\.(?!BrowserRenderingTests)|^ExploreTests\.(ExploreShardsTests|DayFoldersTests)/|^DeviceOSTests\.(InProcessDayTests|DevicePartsTests)/
test-fast: deps
	$(SWIFT) build --build-tests $(BUILD_FLAGS)
	$(SWIFT) test --skip-build $(BUILD_FLAGS) --filter '$(FAST_TESTS)'

## test: the fast lane first, then every other suite — brokers, plugins, explore, the browser — TEST_WORKERS tests at
## a time, each in a process of its own (stopped after TEST_TIME_LIMIT, so a hang fails fast)
TEST_TIME_LIMIT ?= 40m
# A test that plays real processes waits on them as much as it computes: two at a time keep 2 cores busy.
TEST_WORKERS ?= $(shell n=$$(nproc); [ $$n -lt 2 ] && n=2; echo $$n)
test: test-fast
	@# The whole log scrolls past in CI; on a failure, repeat the failing assertions and tests at the end.
	@{ timeout -k 30 $(TEST_TIME_LIMIT) $(SWIFT) test --skip-build $(BUILD_FLAGS) --parallel --num-workers $(TEST_WORKERS) --xunit-output .build/test-results.xml --skip '$(FAST_TESTS)'; \
		echo $$? > .build/test-status; } 2>&1 | tee .build/test.log; \
		status=$$(cat .build/test-status); \
		if [ "$$status" = 124 ]; then echo "=== make test: the tests did not end within $(TEST_TIME_LIMIT); the last tests it reported (one of them, or the next, hangs):"; \
			grep -E "^\[[0-9]+/[0-9]+\] Testing " .build/test.log | tail -$(TEST_WORKERS); fi; \
		if [ "$$status" != 0 ]; then echo "=== make test failed (status $$status); the failures:"; \
			grep -E ": error: |' failed \(|Fatal error|Test .* failed after" .build/test.log | head -60; fi; exit $$status

## test-slow: every suite with every variation of the regression days, and the tests that build a copy of the package
## and its generated plugins and product (SHIELDBUS_SLOW_TESTS=1; an hour or more on 2 cores)
test-slow: deps
	$(SWIFT) build --build-tests $(BUILD_FLAGS)
	SHIELDBUS_SLOW_TESTS=1 $(SWIFT) test --skip-build $(BUILD_FLAGS)

## zones: the date arithmetic on every transition of every zone in the tz database (/usr/share/zoneinfo and the zones
## Foundation knows) from 1970 to 2037, against an oracle that knows only each zone's offset, and the generated days
## around every unusual transition and every fall-back across midnight (SHIELDBUS_ZONES_FULL=1; `make test` checks a
## slice; figures: docs/fidelity.md § 5)
ZONE_TESTS = ^ScreenTimeTests\.EveryZoneTransitionTests|^LockInvariantTests\.ZoneTimelineTests|^LessonTests\.DaylightSavingTests/(testFocusWindowsInRepeatedHoursAndAtOddJumps|testDaysWhereAFallBackTakesTheClockBackAcrossMidnight)|^LessonTests\.DeviceDayAndClockTests/testGeneratedSpeedBumpDaysAcrossZoneChanges
zones: deps
	$(SWIFT) build --build-tests $(BUILD_FLAGS)
	@# A full test case runs for many minutes: the hang watchdog (300 s a test case) is given an hour.
	SHIELDBUS_ZONES_FULL=1 SHIELDBUS_TEST_CASE_LIMIT_SECONDS=3600 $(SWIFT) test --skip-build $(BUILD_FLAGS) --filter '$(ZONE_TESTS)'

## soak: many random days of a heavy user under ios-realistic, the lock invariant checked (SEEDS=1,2,3 DAYS=7)
SEEDS ?= 1,2,3,4,5,6,7,8
DAYS ?= 7
soak: deps
	$(SWIFT) build --build-tests $(BUILD_FLAGS)
	SHIELDBUS_SOAK_SEEDS=$(SEEDS) SHIELDBUS_SOAK_DAYS=$(DAYS) $(SWIFT) test --skip-build --filter SoakTests $(BUILD_FLAGS)

## explore: generated days of each shipped product (EXPLORE_PRODUCTS), and of two products on one device, under both
## profiles, for a bounded budget each (EXPLORE_DAYS=1000 EXPLORE_BUDGET=20m EXPLORE_SEED=1 EXPLORE_JOBS=cores); failures
## are shrunk into explore-failures/. Release build: a day costs half the CPU of the debug build's (docs/explore.md).
EXPLORE_DAYS ?= 1000
EXPLORE_PRODUCTS ?= habit-lock focus-window speed-bump bedtime profiles two-products
EXPLORE_BUDGET ?= 20m
EXPLORE_SEED ?= 1
EXPLORE_JOBS ?= $(shell nproc)
explore: deps
	@for product in $(RELEASE_PRODUCTS); do $(SWIFT) build -c release $(RELEASE_FLAGS) --product $$product || exit 1; done
	@$(call check_release_archives,$(RELEASE_PRODUCTS))
	@status=0; for product in $(EXPLORE_PRODUCTS); do \
		$(RELEASE_BIN)/shieldbus explore --config Config/$$product.yml --days $(EXPLORE_DAYS) --seed $(EXPLORE_SEED) --profile both \
			--jobs $(EXPLORE_JOBS) --time-budget $(EXPLORE_BUDGET) || status=$$?; \
	done; exit $$status

## explore-releases: each shipped product (EXPLORE_PRODUCTS) against every iOS release profile (docs/fidelity.md § 6):
## RELEASE_DAYS seeds from EXPLORE_SEED, each day played on no release and on each release under both profiles (100: 200
## days a release); a release's defeats are not shrunk. Release build, as explore's.
RELEASE_DAYS ?= 100
explore-releases: deps
	@for product in $(RELEASE_PRODUCTS); do $(SWIFT) build -c release $(RELEASE_FLAGS) --product $$product || exit 1; done
	@$(call check_release_archives,$(RELEASE_PRODUCTS))
	@status=0; for product in $(EXPLORE_PRODUCTS); do \
		$(RELEASE_BIN)/shieldbus explore --config Config/$$product.yml --days $(RELEASE_DAYS) --seed $(EXPLORE_SEED) --profile both \
			--ios all --jobs $(EXPLORE_JOBS) --shrink-runs 0 || status=$$?; \
	done; exit $$status

## explore-cluster: explore across machines on a real batch engine, on this machine: a one-node Slurm (slurm-wlm's
## slurmctld and slurmd, and munge, started in a temporary folder and stopped after) runs Config/cluster/explore-array.sbatch
## as an array of CLUSTER_SHARDS tasks; their merged report must equal one machine's for the same seeds, text and --json,
## byte for byte (CLUSTER_CONFIG=Config/habit-lock.yml CLUSTER_DAYS=8 CLUSTER_SEED=1 CLUSTER_SHARDS=4; debug build)
CLUSTER_CONFIG ?= Config/habit-lock.yml
CLUSTER_DAYS ?= 8
CLUSTER_SEED ?= 1
CLUSTER_SHARDS ?= 4
explore-cluster: deps
	@command -v slurmctld >/dev/null && command -v munged >/dev/null || { echo "installing slurm-wlm with apt-get"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm >/dev/null; }
	$(SWIFT) build $(BUILD_FLAGS)
	Config/cluster/explore-on-slurm.sh $(BIN)/shieldbus $(CLUSTER_CONFIG) $(CLUSTER_DAYS) $(CLUSTER_SEED) $(CLUSTER_SHARDS)

## faults: every fault class, seeded, on the soak's random days and the person's actions: plugin processes SIGKILLed, the
## broker SIGKILLed and resumed (at steps and at wall-clock moments), the broker stalled (SIGSTOP/SIGCONT), outside
## clients churning beside the plugins, the state disk filling up or going read-only (a FUSE mirror), each store's
## write-ahead log damaged, the host's clock stepped (libfaketime); the lock invariant holds and nothing is lost in
## each (FAULT_SEEDS=1,2 FAULT_DAYS=3; make test runs seed 5, one day)
FAULT_SEEDS ?= 1,2,3,4
FAULT_DAYS ?= 3
faults: deps
	$(SWIFT) build --build-tests $(BUILD_FLAGS)
	@# Each test plays every seed and day: past the watchdog's 300 s a test case is not hung.
	SHIELDBUS_TEST_CASE_LIMIT_SECONDS=3600 SHIELDBUS_FAULT_SEEDS=$(FAULT_SEEDS) SHIELDBUS_FAULT_DAYS=$(FAULT_DAYS) $(SWIFT) test --skip-build --filter FaultTests $(BUILD_FLAGS)

## bench: every speed figure beside its baseline and target (release build; docs/benchmarks.md). bench-quick: the same, small
# Release builds link the Swift runtime and Foundation statically: a command starts in a third of the time
# (no symbol relocations across 20 shared libraries) and each plugin process is smaller (docs/benchmarks.md).
RELEASE_FLAGS ?= --static-swift-stdlib
# `shieldbus` and the reference plugins it starts.
RELEASE_PRODUCTS = shieldbus activity-monitor shield-renderer action-delegate companion-app report-builder notifier bedtime profiles
BENCH_PRODUCTS = shieldbus-bench $(RELEASE_PRODUCTS)
# Release programs link libzmq, SQLite and libstdc++ from their archives (Package.swift, `zeroMQLinkerSettings`). An
# object compiled before that change still asks for the shared libraries (the module maps' old `link`, kept in each
# object), and an incremental build does not recompile it: refuse such a program rather than measure the shared ones.
check_release_archives = for product in $(1); do \
	if readelf -d $(RELEASE_BIN)/$$product | grep -qE 'NEEDED.*\[lib(zmq|sqlite3|stdc\+\+)\.so'; then \
		echo "$$product loads a shared libzmq, SQLite or libstdc++: objects compiled before release builds linked their archives; rm -rf .build/*/release and build again" >&2; \
		exit 1; fi; \
	if readelf -d $(RELEASE_BIN)/$$product | grep -qE 'NEEDED.*\[libgssapi_krb5\.so'; then \
		echo "$$product loads the Kerberos libraries: its libzmq.a should link to CZeroMQWithoutGSSAPI (Package.swift)" >&2; \
		exit 1; fi; done
bench: bench-build
	$(RELEASE_BIN)/shieldbus-bench $(BENCH_ARGS)
	$(RELEASE_BIN)/shieldbus-bench --abuse --runs 5
	nice -n 10 python3 Benchmarks/LaunchCost/launch_cost.py 50

bench-quick: bench-build
	$(RELEASE_BIN)/shieldbus-bench --quick $(BENCH_ARGS)
	nice -n 10 python3 Benchmarks/LaunchCost/launch_cost.py 20

## bench-launches: the CPU of one plugin launch — executed in a new sandbox, forked from its template, unsandboxed
bench-launches: bench-build
	nice -n 10 python3 Benchmarks/LaunchCost/launch_cost.py 50

bench-build: deps
	@command -v hyperfine >/dev/null || { echo "installing hyperfine with apt-get (command start-up times)"; apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq hyperfine >/dev/null; }
	@for product in $(BENCH_PRODUCTS); do $(SWIFT) build -c release $(RELEASE_FLAGS) --product $$product || exit 1; done
	@$(call check_release_archives,$(BENCH_PRODUCTS))

## bench-studio: ShieldBus Studio on a recorded journal of 500,000 events (release build): the time until it opens, a slider
## move's time until drawn, the page's JS heap and the server's memory (STUDIO_BENCH_ARGS="--events N"; docs/benchmarks.md)
STUDIO_BENCH_PRODUCTS = shieldbus activity-monitor shield-renderer action-delegate companion-app report-builder notifier
bench-studio: deps
	@for product in $(STUDIO_BENCH_PRODUCTS); do $(SWIFT) build -c release $(RELEASE_FLAGS) --product $$product || exit 1; done
	@$(call check_release_archives,$(STUDIO_BENCH_PRODUCTS))
	python3 Benchmarks/StudioJournal/studio_journal_bench.py $(STUDIO_BENCH_ARGS)

## bench-reports: `shieldbus report` end to end over a generated year of stored days, from the store and through a
## running broker (release build, linked statically as bench-build's; aim < 50 ms)
bench-reports: deps
	@for product in shieldbus report-builder shieldbus-report-bench; do $(SWIFT) build -c release $(RELEASE_FLAGS) --product $$product || exit 1; done
	@$(call check_release_archives,shieldbus report-builder shieldbus-report-bench)
	$(RELEASE_BIN)/shieldbus-report-bench

## fuzz: libFuzzer on the wire decoder, the configuration loader and the scenario parser (FUZZ_SECONDS each, niced)
FUZZ_SECONDS ?= 120
FUZZ_TARGETS = fuzz-wire fuzz-configuration fuzz-scenario
FUZZ_DIR = .build-fuzz
FUZZ_FLAGS = -c release --scratch-path $(FUZZ_DIR) -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld
fuzz: deps
	@for target in $(FUZZ_TARGETS); do SHIELDBUS_FUZZ=1 $(SWIFT) build $(FUZZ_FLAGS) --product $$target || exit 1; done
	@for target in $(FUZZ_TARGETS); do \
		case $$target in fuzz-wire) seeds=Tests/Fuzz/Seeds/wire;; fuzz-configuration) seeds=Config;; fuzz-scenario) seeds=Config/scenarios;; esac; \
		mkdir -p $(FUZZ_DIR)/corpus/$$target $(FUZZ_DIR)/findings; \
		echo "fuzzing $$target for $(FUZZ_SECONDS) s (findings in $(FUZZ_DIR)/findings/)"; \
		nice -n 19 $(FUZZ_DIR)/release/$$target -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
			-print_final_stats=1 -artifact_prefix=$(FUZZ_DIR)/findings/$$target- $(FUZZ_DIR)/corpus/$$target $$seeds \
			2>$(FUZZ_DIR)/$$target.log || { tail -40 $(FUZZ_DIR)/$$target.log; exit 1; }; \
		grep -E "stat::number_of_executed_runs|cov:" $(FUZZ_DIR)/$$target.log | tail -2; \
	done

## report-png: the demo week (Config/report-demo.yml) as HTML pages (the week, the month), then as PNGs in headless
## Chromium at a phone's 390 px and a desktop's 1280 px, light and dark (Tests/Browser/report-layout.py)
REPORT_DIR = .build/report-demo
report-png: build
	rm -rf $(REPORT_DIR) && mkdir -p $(REPORT_DIR)
	$(BIN)/shieldbus run --config Config/report-demo.yml --state-dir $(REPORT_DIR)/state --runtime-dir $(REPORT_DIR)/play --quiet
	@# No broker needed: `shieldbus report` reads the report builder's store.
	$(BIN)/shieldbus report weekly --date 2026-11-29 --state-dir $(REPORT_DIR)/state --html $(REPORT_DIR)/report.html
	$(BIN)/shieldbus report monthly --month 2026-11 --state-dir $(REPORT_DIR)/state --html $(REPORT_DIR)/month.html
	for page in report month; do for width in 390 1280; do \
		python3 Tests/Browser/report-layout.py screenshot $(REPORT_DIR)/$$page.html --width $$width --out $(REPORT_DIR)/$$page-$$width-light.png && \
		python3 Tests/Browser/report-layout.py screenshot $(REPORT_DIR)/$$page.html --width $$width --dark --out $(REPORT_DIR)/$$page-$$width-dark.png || exit 1; \
	done; done
	@echo "wrote $(REPORT_DIR)/report.html, $(REPORT_DIR)/month.html and their PNGs:" && ls $(REPORT_DIR)/*.png

## studio: ShieldBus Studio (http://127.0.0.1:8080), following the broker running on the default runtime directory
studio: build
	$(BIN)/shieldbus studio

## studio-screenshots: the Studio's browser test, writing a PNG of each step to $(STUDIO_SHOTS), then copying the ones
## docs/studio.md shows into docs/images (STUDIO_DOC_IMAGES: step:image). STUDIO_SCALE: pixels per CSS pixel (the docs' 0.75)
STUDIO_SHOTS ?= .build/studio-screenshots
STUDIO_SCALE ?= 0.75
STUDIO_DOC_IMAGES = 2-shield:studio-shield 3-pressed:studio-pressed 11-state-values:studio-state 10-clock-jumped-1280:studio-clock \
	12-person-actions:studio-person 14-journal-zoomed-1280:studio-zoomed 15-explore-failure-1280:studio-explore-failure \
	5-journal:studio-journal 13-journal-timeline-1280:studio-timeline
studio-screenshots: deps
	$(SWIFT) build $(BUILD_FLAGS)
	rm -rf $(STUDIO_SHOTS)
	SHIELDBUS=$(abspath $(BIN)/shieldbus) STUDIO_SCREENSHOTS=$(abspath $(STUDIO_SHOTS)) STUDIO_SCALE=$(STUDIO_SCALE) PYTHONDONTWRITEBYTECODE=1 \
		python3 -m pytest -q -p no:cacheprovider Tests/StudioTests/studio_browser_test.py Tests/StudioTests/studio_page_test.py Tests/StudioTests/studio_clock_test.py Tests/StudioTests/studio_person_test.py Tests/StudioTests/studio_journal_test.py Tests/StudioTests/studio_explore_test.py Tests/StudioTests/studio_products_test.py
	@echo "wrote the screenshots to $(STUDIO_SHOTS)"
	@for pair in $(STUDIO_DOC_IMAGES); do step=$${pair%%:*}; image=$${pair#*:}; \
		test -f $(STUDIO_SHOTS)/$$step.png || { echo "no screenshot $$step.png for docs/images/$$image.png: a test no longer takes it" >&2; exit 1; }; \
		cp $(STUDIO_SHOTS)/$$step.png docs/images/$$image.png; done
	@# Every image docs/studio.md shows is one of them.
	@for image in $$(grep -o 'images/[a-z-]*\.png' docs/studio.md | sed 's|images/||; s|\.png||' | sort -u); do \
		echo " $(STUDIO_DOC_IMAGES) " | grep -q ":$$image " || { echo "docs/studio.md shows images/$$image.png, which STUDIO_DOC_IMAGES does not make" >&2; exit 1; }; done
	@echo "copied $(words $(STUDIO_DOC_IMAGES)) of them into docs/images"

clean:
	rm -rf .build
