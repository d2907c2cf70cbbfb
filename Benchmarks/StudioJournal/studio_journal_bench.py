#!/usr/bin/env python3
"""A large recorded journal in ShieldBus Studio (docs/benchmarks.md, "What each figure means"): make run's day
played once, its journal repeated (seqs and times moved on each copy) to N events (default 500,000); then
`shieldbus studio --journal` on it in headless Chromium (Playwright, Debian's chromium) — the time until the server
listens (it indexes the journal and judges it against the habit lock's promise), until the page has read it all, a
slider move's time until that instant is drawn (random instants, median and worst), the page's JS heap after a
garbage collection (CDP `Runtime.getHeapUsage`; `Performance.getMetrics`' JSHeapTotalSize beside it) and the server's
resident set. Figures, not verdicts: the exit status is 0 whenever it measured.

Usage: studio_journal_bench.py [--events N] [--moves M] [--shieldbus PATH] [--base JOURNAL] [--json]
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "Tests", "StudioTests"))

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--events", type=int, default=500_000)
parser.add_argument("--moves", type=int, default=10)
parser.add_argument("--shieldbus", default=os.path.join(ROOT, ".build", "release", "shieldbus"))
parser.add_argument("--base", help="a journal to repeat instead of make run's day, played by --shieldbus")
parser.add_argument("--json", action="store_true", help="one JSON object instead of the table")
arguments = parser.parse_args()
if not os.access(arguments.shieldbus, os.X_OK):
    sys.exit(f"no shieldbus at {arguments.shieldbus}: build it (make bench-studio does) or give --shieldbus")
# studio_support reads SHIELDBUS when it is imported.
os.environ["SHIELDBUS"] = os.path.abspath(arguments.shieldbus)

from playwright.sync_api import expect, sync_playwright  # noqa: E402

from studio_support import CHROMIUM, CONFIG, repeat_journal, server_memory_kb, start_studio, stop  # noqa: E402

folder = tempfile.mkdtemp(prefix="sb-studio-bench-")
day = arguments.base or os.path.join(folder, "day.jsonl")
played = arguments.base is None and subprocess.run([arguments.shieldbus, "run", "--config", CONFIG, "--quiet", "--journal", day, "--runtime-dir", os.path.join(folder, "run"),
                         "--state-dir", os.path.join(folder, "state")], capture_output=True, text=True, timeout=600)
if played and played.returncode != 0:
    sys.exit(f"make run's day did not play (status {played.returncode}):\n{played.stderr}")
journal = os.path.join(folder, "journal.jsonl")
places = repeat_journal(day, journal, arguments.events)
total = len(places)

began = time.monotonic()
studio, address = start_studio(["--journal", journal])
listening = time.monotonic() - began
try:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        began = time.monotonic()
        page.goto(address)
        expect(page.get_by_test_id("loading")).to_have_attribute("data-loaded", "true", timeout=3_600_000)
        loaded = time.monotonic() - began
        instant = page.get_by_test_id("instant")
        moves = []
        for position in random.Random(total).sample(range(1, total + 1), arguments.moves):
            began = time.monotonic()
            page.get_by_test_id("slider").fill(str(position))
            expect(instant).to_contain_text(f"#{places[position - 1][0]}  ({position}/{total})", timeout=120_000)
            moves.append(time.monotonic() - began)
        cdp = page.context.new_cdp_session(page)
        cdp.send("HeapProfiler.collectGarbage")
        heap = cdp.send("Runtime.getHeapUsage")["usedSize"]
        cdp.send("Performance.enable")
        metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
        server = server_memory_kb(studio)
        browser.close()
finally:
    stop(studio)

figures = {"events": total, "journalMB": round(os.path.getsize(journal) / 2**20, 1), "serverListeningS": round(listening, 2),
           "pageLoadedS": round(loaded, 2), "sliderMoveMedianS": round(statistics.median(moves), 3), "sliderMoveWorstS": round(max(moves), 3),
           "pageHeapMB": round(heap / 2**20, 1), "pageHeapTotalMB": round(metrics["JSHeapTotalSize"] / 2**20, 1),
           "serverRSSMB": round(server / 1024, 1)}
if arguments.json:
    print(json.dumps(figures))
else:
    print(f"the Studio on a {total:,}-event journal ({figures['journalMB']} MB), {arguments.shieldbus}")
    print(f"  server listening (index + check)  {listening:.2f} s")
    print(f"  page loaded (every event read)    {loaded:.2f} s")
    print(f"  slider move drawn, median / worst {statistics.median(moves) * 1000:.0f} / {max(moves) * 1000:.0f} ms ({len(moves)} moves)")
    print(f"  page JS heap after GC             {figures['pageHeapMB']} MB (heap total {figures['pageHeapTotalMB']} MB)")
    print(f"  server resident set               {figures['serverRSSMB']} MB")
