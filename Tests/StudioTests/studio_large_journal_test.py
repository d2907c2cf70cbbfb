"""A large journal in the Studio: the live broker's journal repeated (seqs and times moved on each time) to 10,000 and
40,000 events — 500,000 in the slow lane (SHIELDBUS_SLOW_TESTS=1). It opens with progress; a slider move shows that
instant within three seconds on a loaded machine (the phone's model folded from the page's nearest checkpoint, the events asked of the
server); and neither the page's heap nor the server's memory grows with the journal as holding its events would.
"""
import json
import os
import random
import re
import time

import pytest
from playwright.sync_api import expect

from studio_support import SCALE, repeat_journal, server_memory_kb, start_studio, stop

SLOW = os.environ.get("SHIELDBUS_SLOW_TESTS") == "1"
SIZES = [10_000, 40_000] + ([500_000] if SLOW else [])
RECORD_LOADING = """
addEventListener("DOMContentLoaded", () => {
  window.loadingTexts = [];
  const node = document.getElementById("loading");
  new MutationObserver(() => window.loadingTexts.push(node.textContent)).observe(node, { childList: true, characterData: true, subtree: true });
});
"""


def open_and_measure(browser, path, places, width):
    studio, address = start_studio(["--journal", path])
    try:
        page = browser.new_page(viewport={"width": width, "height": 800}, device_scale_factor=SCALE)
        page.add_init_script(RECORD_LOADING)
        started = time.monotonic()
        page.goto(address)
        total = len(places)
        expect(page.get_by_test_id("loading")).to_have_attribute("data-loaded", "true", timeout=600_000)
        opened = time.monotonic() - started
        expect(page.get_by_test_id("loading")).to_have_text(f"{total:,} events")
        texts = page.evaluate("window.loadingTexts")
        assert any(re.fullmatch(rf"loading [\d,]+ of {total:,} events…", t) for t in texts), f"the page showed its progress: {texts[:5]}"
        instant = page.get_by_test_id("instant")
        # At the checker's first violation (the copies do not carry the device's state across) or the end.
        expect(instant).to_have_text(re.compile(rf"  \(\d+/{total}\)$"))

        scrubs = []
        for position in random.Random(total).sample(range(1, total + 1), 6):
            began = time.monotonic()
            page.get_by_test_id("slider").fill(str(position))
            expect(instant).to_contain_text(f"#{places[position - 1][0]}  ({position}/{total})")
            scrubs.append(time.monotonic() - began)
            # The bus's newest line is the event just shown.
            expect(page.locator("#bus li").first).to_have_attribute("data-seq", str(places[position - 1][0]))
        cdp = page.context.new_cdp_session(page)
        cdp.send("HeapProfiler.collectGarbage")
        heap = cdp.send("Runtime.getHeapUsage")["usedSize"]
        memory = server_memory_kb(studio)
        page.close()
        return {"opened": opened, "scrubs": scrubs, "heap": heap, "server": memory}
    finally:
        stop(studio)


def test_a_large_journal_opens_with_progress_scrubs_quickly_in_bounded_memory(browser, live, tmp_path):
    figures = {}
    for size in SIZES:
        path = str(tmp_path / f"journal-{size}.jsonl")
        places = repeat_journal(live["journal"], path, size)
        figures[size] = open_and_measure(browser, path, places, 1280)
        print(f"\n{size:,} events: {json.dumps(figures[size])}")
        assert max(figures[size]["scrubs"]) < 3, f"every slider move shown within 3 s: {figures[size]}"
    small, large = figures[SIZES[0]], figures[SIZES[1]]
    # Holding the 30,000 more events (a kilobyte or more each, parsed) would take the page tens of MB more.
    assert large["heap"] - small["heap"] < 12 << 20, f"the page's heap does not grow with the journal: {figures}"
    # The server keeps a few bytes of index per event, and reads the events back from the file.
    assert large["server"] - small["server"] < 40 << 10, f"the server's memory does not grow with the journal: {figures}"
    if SLOW:
        biggest = figures[SIZES[-1]]
        assert biggest["heap"] - small["heap"] < 40 << 20, f"a 500,000-event journal: {figures}"
