"""A large journal in the Studio: the live broker's journal repeated (seqs and times moved on each time) to 5,000 and
20,000 events (10,000, 40,000 and 500,000 in the slow lane, SHIELDBUS_SLOW_TESTS=1). It opens with progress; a slider
move shows that instant within three seconds on a loaded machine (the phone's model folded from the page's nearest checkpoint, the events asked of the
server); and neither the page's heap nor the server's memory grows with the journal as holding its events would —
nor with the days a journal spans, as keeping each day's App-Group keys once for each kept model would.
"""
import json
import os
import random
import re
import time

import pytest

from studio_support import expect, SCALE, dated_journal, repeat_journal, server_memory_kb, start_studio, stop

SLOW = os.environ.get("SHIELDBUS_SLOW_TESTS") == "1"
SIZES = [10_000, 40_000, 500_000] if SLOW else [5_000, 20_000]
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
    more = SIZES[1] - SIZES[0]
    # Holding the more events (a kilobyte or more each, parsed) would take the page tens of MB more: 400 bytes each
    # at most (6 MB for 15,000).
    assert large["heap"] - small["heap"] < more * 400, f"the page's heap does not grow with the journal: {figures}"
    # The server keeps a few bytes of index per event, and reads the events back from the file (at most 20,000 kB
    # for 15,000 more).
    assert large["server"] - small["server"] < more * 4 // 3, f"the server's memory does not grow with the journal: {figures}"
    if SLOW:
        biggest = figures[SIZES[-1]]
        assert biggest["heap"] - small["heap"] < 40 << 20, f"a 500,000-event journal: {figures}"


def settled_heap(cdp):
    """The page's heap once garbage is collected: the least of three collections, as one can leave behind what a
    drawing still held, which the next frees."""
    sizes = []
    for _ in range(3):
        cdp.send("HeapProfiler.collectGarbage")
        sizes.append(cdp.send("Runtime.getHeapUsage")["usedSize"])
    return min(sizes)


def test_a_years_journal_costs_the_page_its_state_not_its_days(browser, tmp_path):
    """A year's journal and a month's, as large (20,000 events), the app writing four keys of each day's own
    (`habits.DAY`…: 1,460 in the year, 120 in the month): the page keeps a model every 500 events, as many of either,
    and the year's costs it its keys once — not once for each model kept, which would take it several MB more. At
    the end both show every day's keys; the server holds as much for either."""
    figures = {}
    for days in (30, 365):
        path = str(tmp_path / f"journal-{days}-days.jsonl")
        dated_journal(path, days=days, count=20_000, keys_per_day=4)
        studio, address = start_studio(["--journal", path])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800}, device_scale_factor=SCALE)
            page.goto(address)
            expect(page.get_by_test_id("loading")).to_have_attribute("data-loaded", "true", timeout=600_000)
            page.get_by_test_id("slider").fill("20000")
            expect(page.get_by_test_id("instant")).to_contain_text("#20000  (20000/20000)")
            # Every day's keys and the flag, in the state drawn at the end.
            expect(page.locator("#groups tbody tr")).to_have_count(days * 4 + 1, timeout=60_000)
            cdp = page.context.new_cdp_session(page)
            figures[days] = {"heap": settled_heap(cdp), "models": page.evaluate("journal.checkpoints.length"),
                             "server": server_memory_kb(studio)}
            page.close()
        finally:
            stop(studio)
    print(f"\na month's and a year's journal of 20,000 events: {json.dumps(figures)}")
    month, year = figures[30], figures[365]
    assert month["models"] == year["models"] == 41, f"a model kept every 500 events, whatever the days: {figures}"
    # The 1,340 more keys, once each, and the models' maps of them: about a MB.
    assert year["heap"] - month["heap"] < 2 << 20, f"the page holds each key once, not once a model: {figures}"
    # The server keeps a few bytes a event, however many days they span (its copies of the narrator hold no keys).
    assert year["server"] - month["server"] < 8 << 10, f"the server's memory does not grow with the days: {figures}"
