"""The Studio's page itself in a real browser, on the live broker the browser tests share: it is drawn incrementally
(selections and clicks survive the events coming), a notification's banner comes and goes, and it fits a phone's
width and a laptop's. Run after `studio_browser_test.py` (they post notifications its tests must not see).
"""
import json
import re
import subprocess
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from studio_support import expect, CONFIG, PLUGINS, SCALE, SHIELDBUS, assert_fits, journal_until, read_journal, send, shot, start_studio, stop


SELECTION_HELD = """([marker, watch]) => {
    const node = document.querySelector(`[data-probe="${marker}"]`);
    const lost = !node || !node.isConnected || !getSelection().toString() || !node.contains(getSelection().anchorNode);
    // Each status report the page takes (one a second) redraws its panels a frame later: counted as it changes, and
    // the fourth taken means the third is drawn.
    if (studio.status !== window[watch].status) { window[watch].status = studio.status; window[watch].reports += 1; }
    return lost || window[watch].reports >= 4;
}"""


def hold_selection(page, locator, marker, during=lambda: None):
    """Selects the text of `locator`'s element, calls `during` (events sent while it is selected), then waits
    (polling) until the selection has been kept through three status reports drawn or is lost; whether it was kept."""
    locator.evaluate("(node, marker) => { node.dataset.probe = marker; getSelection().selectAllChildren(node); }", marker)
    watch = f"heldThrough_{marker}"
    page.evaluate("(watch) => { window[watch] = { status: studio.status, reports: 0 }; }", watch)
    during()
    page.wait_for_function(SELECTION_HELD, arg=[marker, watch], polling=100, timeout=20_000)
    return page.evaluate(f"() => document.querySelector('[data-probe=\"{marker}\"]')?.contains(getSelection().anchorNode) ?? false")


@pytest.mark.parametrize("width,height", [(390, 844), (1280, 800)])
def test_selections_and_clicks_survive_the_events_coming(browser, live, width, height):
    """The page is drawn incrementally: a selection in the timeline or in an event's JSON stays while events and
    status reports come in, and every click on a bus line opens that very line (Playwright's click finds nothing over
    it) — at a phone's width as at a laptop's, without a sideways scroll."""
    page = browser.new_page(viewport={"width": width, "height": height}, device_scale_factor=SCALE)
    page.goto(live["address"])
    expect(page.get_by_test_id("connection")).to_have_class(re.compile(r"\bup\b"))
    expect(page.locator("#timeline span:not(.day)").first).to_be_visible()

    # A timeline line selected; then new timeline lines (notifications posted) and bus lines come above it.
    line = page.locator("#timeline span:not(.day)").first

    def notifications_come():
        for number in range(3):
            send(live, "notification.post.request", {"id": f"studio-select-{width}-{number}", "title": f"Selection {width}-{number}", "body": "",
                                                     "interruptionLevel": "passive"})
        expect(page.locator("#timeline span.notify", has_text=f"Selection {width}-2")).to_have_count(1)
    assert hold_selection(page, line, "line", during=notifications_come), "the timeline line's selection survived the events and three status reports"

    # An event's JSON selected, while more events come.
    page.locator("#bus li[data-topic='notification.posted']").first.click()
    json_text = page.get_by_test_id("event-json").first
    expect(json_text).to_be_visible()
    assert hold_selection(page, json_text, "json", during=lambda: send(live, "app.studio-tick", {})), "the JSON's selection survived an event and three status reports"
    page.evaluate("() => getSelection().removeAllRanges()")

    # A line pressed, a new line coming above it before the release (which moves it down): the pressed line opens.
    page.locator("#bus li:not(.open)").nth(1).evaluate("node => { node.dataset.probe = 'pressed'; }")
    pressed = page.locator("#bus li[data-probe='pressed']")
    pressed.scroll_into_view_if_needed()
    box = pressed.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    send(live, "app.studio-press", {"width": width})
    expect(page.locator("#bus li[data-topic='app.studio-press']").first).to_contain_text(f'"width":{width}')
    assert pressed.bounding_box()["y"] > box["y"], "the new line moved the pressed one down"
    page.mouse.up()
    expect(pressed).to_have_class(re.compile(r"\bopen\b"))
    expect(page.locator("#bus li.open")).to_have_count(2)  # the notification's, and the pressed one; none between

    # 20 clicks on bus lines while events keep coming (a tool sending them one after another): each opens its line.
    sending = subprocess.Popen([SHIELDBUS, "send", "--runtime-dir", live["runtime"], "--stdin"], stdin=subprocess.PIPE,
                               stdout=subprocess.DEVNULL, text=True)
    try:
        for number in range(20):
            sending.stdin.write(json.dumps({"topic": "app.studio-click", "body": {"n": number}}) + "\n")
            sending.stdin.flush()
            row = page.locator("#bus li:not(.open):not([data-probe])").nth(2)
            row.evaluate("(node, n) => { node.dataset.probe = `click-${n}`; }", number)
            page.locator(f"#bus li[data-probe='click-{number}']").click()
            expect(page.locator(f"#bus li[data-probe='click-{number}']")).to_have_class(re.compile(r"\bopen\b"), timeout=5000)
        expect(page.locator("#bus li.open[data-probe^='click-']")).to_have_count(20)
        assert_fits(page, f"at {width} px with 20 events opened")
    finally:
        sending.stdin.close()
        sending.wait(timeout=30)
    page.close()


def test_a_banner_comes_and_goes(browser, live):
    """A notification shows as a banner for a few seconds, then waits in the list; × or a swipe up puts it away at
    once; a device restart ends it and it does not come back. Meanwhile the apps under it stay reachable."""
    page = browser.new_page(viewport={"width": 390, "height": 844}, device_scale_factor=SCALE)
    page.goto(live["address"])
    expect(page.get_by_test_id("connection")).to_have_class(re.compile(r"\bup\b"))
    page.get_by_test_id("home-indicator").click()
    expect(page.get_by_test_id("home-screen")).to_be_visible()
    banner = page.get_by_test_id("banner")

    def post(name):
        send(live, "notification.post.request", {"id": f"studio-banner-{name}", "title": f"Banner {name}", "body": "A reminder", "interruptionLevel": "active"})
        expect(banner).to_contain_text(f"Banner {name}")
        expect(banner).to_be_visible()

    # Left alone, it goes within a few seconds (polled up to 15 s), and then it is in the list, the app under it clickable.
    post("left")
    shot(page, "9-banner")
    expect(banner).to_be_hidden(timeout=15_000)
    expect(page.locator("#notifications button", has_text="Banner left")).to_have_count(1)
    page.get_by_test_id("app-Instagram").click(timeout=5000)
    expect(page.get_by_test_id("action-result")).to_have_text("done: open Instagram")
    page.get_by_test_id("home-indicator").click()
    expect(page.get_by_test_id("home-screen")).to_be_visible()

    # × puts it away at once (well before it would go by itself); it stays in the list.
    post("closed")
    page.get_by_test_id("banner-close").click()
    expect(banner).to_be_hidden(timeout=1500)
    expect(page.locator("#notifications button", has_text="Banner closed")).to_have_count(1)

    # A swipe up too.
    post("swiped")
    box = banner.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] - 40, steps=6)
    page.mouse.up()
    expect(banner).to_be_hidden(timeout=1500)
    expect(page.get_by_test_id("action-result")).not_to_have_text(re.compile("notification-tap"))

    # A restart ends it; neither this page nor one opened after the restart shows it again, and it is still listed.
    ups = sum(e["topic"] == "plugin.up" for e in read_journal(live["journal"]))
    post("restarted")
    page.get_by_role("button", name="Restart device").click()
    expect(page.get_by_test_id("action-result")).to_have_text("done: restart")
    journal_until(live["journal"], lambda es: sum(e["topic"] == "plugin.up" for e in es) >= ups + len(PLUGINS),
                  "every plugin back after the restart", seconds=30)
    expect(banner).to_be_hidden()
    after = browser.new_page(viewport={"width": 390, "height": 844})
    after.goto(live["address"])
    expect(after.locator("#notifications button", has_text="Banner restarted")).to_have_count(1)
    expect(after.get_by_test_id("banner")).to_be_hidden()
    after.close()
    page.close()


PANELS = ["phone", "person", "notifications-panel", "timeline-panel", "plugins-panel", "bus-panel", "state-panel"]
# Panels shown whole (the others scroll inside by design: the timeline, the bus, the tables).
WHOLE = {"phone", "person", "notifications-panel"}

# Whether a panel can be seen and used: scrolled to, it is inside the window's width, wide enough to read, the point
# near its top is the panel's own (nothing lies over it), and whether its content is cut off.
PANEL_IN_REACH = """panel => {
    panel.scrollIntoView({block: "start"});
    const box = panel.getBoundingClientRect();
    const y = Math.min(Math.max(box.top + 12, 0), innerHeight - 1);
    const hit = document.elementFromPoint(box.left + box.width / 2, y);
    return {left: box.left, right: box.right, width: box.width, height: box.height, covered: !panel.contains(hit),
            by: hit ? hit.outerHTML.slice(0, 80) : null, clipped: panel.scrollHeight > panel.clientHeight + 1};
}"""


@pytest.mark.parametrize("width,height", [(390, 844), (1280, 800)])
def test_the_page_fits_a_phone_and_a_laptop(browser, live, width, height):
    """At a phone's width the columns stack, at a laptop's they stand side by side: never a sideways scroll, every
    panel on the page, readable and uncovered, the home screen's apps clickable."""
    page = browser.new_page(viewport={"width": width, "height": height}, device_scale_factor=SCALE)
    page.goto(live["address"])
    expect(page.get_by_test_id("connection")).to_have_class(re.compile(r"\bup\b"))
    expect(page.locator("#plugins .pill")).to_have_count(len(PLUGINS))
    expect(page.locator("#bus li").first).to_be_visible()
    page.get_by_test_id("home-indicator").click()
    expect(page.get_by_test_id("app-Instagram")).to_be_visible()
    overflow = page.evaluate("() => [document.scrollingElement.scrollWidth, innerWidth]")
    assert overflow[0] <= overflow[1], f"no sideways scroll at {width} px: {overflow}"
    for panel in PANELS:
        box = page.get_by_test_id(panel).evaluate(PANEL_IN_REACH)
        assert box["width"] >= min(300, width - 40) and box["height"] > 0, f"{panel} at {width} px: {box}"
        assert 0 <= box["left"] and box["right"] <= width, f"{panel} is inside the window at {width} px: {box}"
        assert not box["covered"], f"{panel} is covered at {width} px: {box}"
        assert not (panel in WHOLE and box["clipped"]), f"{panel} is cut off at {width} px: {box}"
    # An app on the home screen's top row takes a click (trial: Playwright's own check that nothing covers it).
    page.get_by_test_id("app-Instagram").click(trial=True, timeout=5000)
    shot(page, f"8-layout-{width}")
    page.close()


@pytest.mark.parametrize("width,height", [(390, 844), (1280, 800)])
def test_the_state_shows_values_and_what_changed(browser, live, width, height):
    """An App-Group key's row shows its value (read from the store while that version is current: `state.changed`
    carries only writer and version), what changed since the version before, and an instant it holds on the device's
    clock — at a phone's width too, the row uncovered and no sideways scroll."""
    page = browser.new_page(viewport={"width": width, "height": height}, device_scale_factor=SCALE)
    page.goto(live["address"])
    expect(page.get_by_test_id("connection")).to_have_class(re.compile(r"\bup\b"))
    key = "studioNote" if width == 1280 else f"studioNote{width}"  # a key of its own: its versions start at v1

    def state_set(value):
        subprocess.run([SHIELDBUS, "state", "set", key, json.dumps(value, separators=(",", ":")), "--runtime-dir", live["runtime"]],
                       check=True, stdout=subprocess.DEVNULL, timeout=30)

    row = page.locator("#groups tr", has_text=re.compile(rf"\b{key}\b"))
    state_set({"a": 1, "b": 2})
    expect(row.get_by_test_id("stored-value")).to_contain_text('{"a":1,"b":2}')
    expect(row.locator(".note")).to_have_count(0)
    state_set({"a": 1, "b": 3, "c": [4]})
    expect(row.get_by_test_id("stored-value")).to_contain_text('{"a":1,"b":3,"c":[4]}')
    expect(row.locator(".note")).to_have_text("since v1: b: 2 → 3, + c: [4]")
    expect(row).to_contain_text("v2")
    # An instant stored as seconds since 1970 (as the apps store `timeIntervalSince1970`, e.g. lastShieldDayCheck) is
    # read out beside the number, on the device's clock in its zone; a value with none has no such line.
    expect(row.get_by_test_id("stored-time")).to_have_count(0)
    when_key, stored_at = f"{key}When", 1795420800.25
    subprocess.run([SHIELDBUS, "state", "set", when_key, json.dumps(stored_at), "--runtime-dir", live["runtime"]],
                   check=True, stdout=subprocess.DEVNULL, timeout=30)
    when_row = page.locator(f"#groups tr[data-key$='/{when_key}']")
    at = datetime.fromtimestamp(stored_at, ZoneInfo(re.search(r"^timeZone:\s*(\S+)", open(CONFIG).read(), re.M).group(1)))
    expect(when_row.get_by_test_id("stored-value")).to_contain_text("1795420800.25")
    expect(when_row.get_by_test_id("stored-time")).to_have_text(re.compile(
        rf"^\w+ {at:%d %b}, {at:%H:%M:%S}\.250 {re.escape(at.tzname())}$"))
    # Set again, a day later: what changed is read out as those instants, not as the numbers they are stored as.
    later = stored_at + 86400
    subprocess.run([SHIELDBUS, "state", "set", when_key, json.dumps(later), "--runtime-dir", live["runtime"]],
                   check=True, stdout=subprocess.DEVNULL, timeout=30)
    expect(when_row.get_by_test_id("stored-value")).to_contain_text(str(later))
    then = datetime.fromtimestamp(later, at.tzinfo)
    expect(when_row.locator(".note:not(.when)")).to_have_text(
        f"since v1: {at:%a %d %b}, {at:%H:%M:%S}.250 {at.tzname()} → {then:%a %d %b}, {then:%H:%M:%S}.250 {then.tzname()}")
    page.get_by_test_id("state-panel").scroll_into_view_if_needed()
    when_row.get_by_test_id("stored-time").click(trial=True, timeout=5000)  # the time is on the page, nothing over it
    value = row.get_by_test_id("stored-value")
    value.scroll_into_view_if_needed()
    value.click(trial=True, timeout=5000)  # nothing lies over the value
    assert_fits(page, f"at {width} px with the state's values")
    # Every column of the state's tables within its panel (a long key wraps): the version and the time are not out of
    # sight behind a sideways scroll of the panel.
    panel = page.evaluate("() => { const p = document.querySelector('[data-testid=state-panel]'); return [p.scrollWidth, p.clientWidth]; }")
    assert panel[0] <= panel[1], f"the state's tables fit their panel at {width} px: {panel}"
    for row_of in (row, when_row):
        row_of.locator("td").last.click(trial=True, timeout=5000)  # when it was written: in sight, nothing over it
    cut = when_row.locator(".note").evaluate_all("notes => notes.filter(n => n.scrollWidth > n.clientWidth).map(n => n.textContent)")
    assert not cut, f"the value's notes are not cut off at {width} px: {cut}"
    shot(page, "11-state-values" if width == 1280 else f"11-state-values-{width}")
    page.close()


def test_a_live_page_keeps_only_the_newest_events(browser, live):
    """A Studio keeping 30 events (`--keep-events 30`): the page holds no more than twice that however many come, says
    how many it let go, and a bus line clicked still opens its own event's JSON."""
    studio, address = start_studio(["--runtime-dir", live["runtime"], "--keep-events", "30"])
    try:
        page = browser.new_page(viewport={"width": 1280, "height": 800}, device_scale_factor=SCALE)
        page.goto(address)
        expect(page.get_by_test_id("plugins")).to_contain_text("monitor")
        lines = "\n".join(json.dumps({"topic": "app.keep-probe", "body": {"n": n}}) for n in range(80))
        sent = subprocess.run([SHIELDBUS, "send", "--stdin", "--json", "--runtime-dir", live["runtime"]], input=lines, text=True,
                              capture_output=True, timeout=120, check=True)
        last_seq = json.loads(sent.stdout.splitlines()[-1])["seq"]
        expect(page.locator("#bus li").first).to_have_attribute("data-seq", str(last_seq))
        held = page.evaluate("studio.events.length")
        assert held <= 60, f"the page holds at most twice --keep-events: {held}"
        expect(page.locator("#bus-count")).to_contain_text("older ones no longer kept (--keep-events)")
        row = page.locator("#bus li").nth(3)
        seq = row.get_attribute("data-seq")
        row.click()
        expect(row.get_by_test_id("event-json")).to_contain_text(f'"seq": {seq},')
        page.close()
    finally:
        stop(studio)
