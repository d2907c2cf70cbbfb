"""ShieldBus Studio in a real browser (Playwright driving Debian's chromium), through the real broker and plugins:
the phone, the person's actions, the state and a replayed journal. (`studio_page_test.py`: the page itself —
layout, incremental drawing, the banner.)

Run by StudioBrowserTests.swift from `make test`, and by `make studio-screenshots`; `studio_support.py` says what
they need. What the page shows is checked against the broker's own journal, never against the page's own idea of it.
"""
import os
import re
import subprocess
import tempfile
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from studio_support import (expect, CONFIG, PLUGINS, SCALE, SHIELDBUS, journal_until, last, page_seqs, read_journal, send, shot,
                            start_studio, stop)


def test_a_studio_that_comes_later_shows_what_came_before(browser, live):
    """A Studio started after the broker's start-up (the lock set, the schedule registered) shows it all: it reads
    the broker's journal up to its tap's welcome, then follows the tap, each event once, none missed."""
    studio, address = start_studio(["--runtime-dir", live["runtime"]])
    try:
        page = browser.new_page()
        page.goto(address)
        expect(page.get_by_test_id("connection")).to_have_class(re.compile(r"\bup\b"))
        events = read_journal(live["journal"])
        lock = next(e for e in events if e["topic"] == "managedsettings.changed")
        # The start-up's BLOCK, as `shieldbus run` prints it, and the store with the writer the journal names.
        expect(page.get_by_test_id("timeline")).to_contain_text(re.compile(r"\bBLOCK\b"))
        expect(page.locator("#stores tr", has_text=lock["body"]["store"])).to_contain_text(lock["body"]["writer"])
        expect(page.get_by_test_id("schedules")).to_contain_text("habit-lock.daily")
        # One event sent after it connected: the bus then holds the journal's events up to it, newest first, each once.
        send(live, "app.studio-after", {})
        expect(page.locator("#bus li[data-topic='app.studio-after']")).to_have_count(1)
        shown = page_seqs(page)
        journaled = [e["seq"] for e in reversed(read_journal(live["journal"])) if e["seq"] <= shown[0]][:400]
        assert shown == journaled, f"the bus is the journal, without gaps or repeats: {shown[:20]}… vs {journaled[:20]}…"
        assert journaled[-1] == 1 or len(shown) == 400, "from the broker's first event on"
        for topic in ["managedsettings.read.request", "input.look.request"]:
            asked = [e for e in read_journal(live["journal"]) if e["topic"] == topic and e["source"].startswith("studio-")]
            assert asked, f"the Studio's {topic} is an ordinary request on the bus"
        page.close()
    finally:
        stop(studio)


def test_open_press_and_unlock_in_the_browser(browser, live):
    page = browser.new_page(viewport={"width": 1440, "height": 900}, device_scale_factor=SCALE)
    page.goto(live["address"])
    expect(page.get_by_test_id("connection")).to_have_class(re.compile(r"\bup\b"))
    expect(page.locator("#plugins .pill", has_text="up")).to_have_count(len(PLUGINS), timeout=15000)
    expect(page.get_by_test_id("stores")).to_contain_text("lock")
    expect(page.get_by_test_id("schedules")).to_contain_text("habit-lock.daily")
    expect(page.get_by_test_id("app-Instagram")).to_be_visible()
    shot(page, "1-home")

    # Open Instagram → the shield, drawn from the renderer's own configuration.
    page.get_by_test_id("app-Instagram").click()
    expect(page.get_by_test_id("shield")).to_be_visible()
    events = journal_until(live["journal"], lambda es: any(e["topic"] == "shield.shown" for e in es), "a shield")
    shown = last(events, "shield.shown")["body"]
    assert shown["renderedBy"] == "shield", f"the renderer drew it, not the system: {shown}"
    configuration = shown["configuration"]
    expect(page.get_by_test_id("shield-title")).to_have_text(configuration["title"]["text"])
    expect(page.get_by_test_id("shield-subtitle")).to_have_text(configuration["subtitle"]["text"])
    expect(page.get_by_test_id("shield-primary")).to_have_text(configuration["primaryButtonLabel"]["text"])
    expect(page.get_by_test_id("shield-secondary")).to_have_count(1 if "secondaryButtonLabel" in configuration else 0)
    if "icon" in configuration:
        # The renderer's icon loads (polled: the image arrives after the shield is drawn).
        page.wait_for_function("() => { const img = document.querySelector('[data-testid=shield-icon]'); return img && img.complete && img.naturalWidth > 0; }")
    shot(page, "2-shield")

    # Press the primary button → the home screen, and the bus shows the action's request and its handling.
    page.get_by_test_id("shield-primary").click()
    expect(page.get_by_test_id("home-screen")).to_be_visible()
    expect(page.get_by_test_id("shield")).to_have_count(0)
    page.get_by_test_id("prefix").fill("shield.action.")
    actions = page.locator("#bus li")
    expect(actions.filter(has=page.locator(":scope[data-topic='shield.action.handled']"))).to_have_count(1)
    expect(actions.filter(has=page.locator(":scope[data-topic='shield.action.request']"))).to_have_count(1)
    # Every row shown is one of them (an expectation, so it waits for the redraw the filter's input schedules: a
    # one-off read of the rows could still see the unfiltered list — what once failed this test, and the unlock
    # never came, so the next test's visit met the lock).
    expect(page.locator("#bus li:not([data-topic^='shield.action.'])")).to_have_count(0)
    events = journal_until(live["journal"], lambda es: any(e["topic"] == "shield.action.handled" for e in es), "the press")
    handled = last(events, "shield.action.handled")
    page.locator(f"#bus li[data-seq='{handled['seq']}']").click()
    expect(page.get_by_test_id("event-json")).to_contain_text('"response": "' + handled["body"]["response"] + '"')
    # Its instant read out beside the raw epoch milliseconds, on the device's clock in its zone, to the millisecond.
    zone = ZoneInfo(re.search(r"^timeZone:\s*(\S+)", open(CONFIG).read(), re.M).group(1))
    at = datetime.fromtimestamp(handled["time"] / 1000, zone)
    expect(page.get_by_test_id("event-times")).to_have_text(re.compile(
        rf"^time \w+ {at:%d %b}, {at:%H:%M:%S}\.{handled['time'] % 1000:03d} {re.escape(at.tzname())}"))
    shot(page, "3-pressed")
    page.get_by_test_id("prefix").fill("")

    # A private tab on a shielded domain: the shield comes down on its first visit (no page was ever shown), over a
    # tab drawn as private — what the shield.shown in the journal says of it.
    page.locator("#url").fill("https://www.reddit.com/r/swift")
    page.locator("#private").check()
    page.get_by_test_id("visit").click()
    expect(page.get_by_test_id("shield")).to_be_visible()
    expect(page.get_by_test_id("foreground-web")).to_have_attribute("data-domain", "reddit.com")
    expect(page.get_by_test_id("foreground-web")).to_have_class(re.compile(r"\bprivate\b"))
    events = journal_until(live["journal"], lambda es: any(e["topic"] == "shield.shown" and "webDomain" in e["body"]["target"]
                                                            for e in es), "the shield over the private tab")
    over_page = [e for e in events if e["topic"] == "shield.shown" and "webDomain" in e["body"]["target"]][-1]["body"]
    assert over_page["isPrivate"] is True and over_page["target"]["webDomain"]["domain"] == "reddit.com", over_page
    assert not any(e["topic"] == "activity.web.visited" for e in events), "the shielded page was never shown"
    shot(page, "3b-private-tab-shielded")
    page.locator("#private").uncheck()
    page.get_by_test_id("home-indicator").click()
    expect(page.get_by_test_id("home-screen")).to_be_visible()

    # Complete the day's habits → the next open of Instagram shows no shield.
    for habit in ["Read", "Walk", "Meditate"]:
        page.locator("#habit").fill(habit)
        page.get_by_test_id("complete-habit").click()
        expect(page.get_by_test_id("action-result")).to_have_text(f"done: habit {habit}")
    journal_until(live["journal"], lambda es: any(e["topic"] == "managedsettings.changed" and not any(
        (e["body"].get("shield") or {}).get(k) for k in ("applications", "webDomains", "applicationCategories"))
        for e in es), "the unlock")
    expect(page.get_by_test_id("timeline")).to_contain_text("UNBLOCK")
    page.get_by_test_id("app-Instagram").click()
    expect(page.get_by_test_id("foreground-app")).to_have_attribute("data-app", "Instagram")
    expect(page.get_by_test_id("shield")).to_have_count(0)
    opened = journal_until(live["journal"], lambda es: any(e["topic"] == "activity.app.opened" for e in es), "the open")
    assert last(opened, "activity.app.opened")["body"]["application"]["localizedDisplayName"] == "Instagram"
    expect(page.get_by_test_id("groups")).to_contain_text("isCurrentlyUnlocked")
    shot(page, "4-unlocked")
    page.close()


def test_tap_a_notification_and_follow_its_deep_link(browser, live):
    """The notifier's reminder (posted when the shield came up) waits in the notifications; a tap brings the companion
    app to the foreground, and the app opens the notifier's pending deep-link route — once."""
    posted = last(journal_until(live["journal"], lambda es: any(e["topic"] == "notification.posted" for e in es), "the reminder"),
                  "notification.posted")["body"]
    # A Studio started after it was posted lists it too (not as a banner: that was long ago), and the broker's look at
    # the phone (input.look.reply's notifications) has it.
    late, late_address = start_studio(["--runtime-dir", live["runtime"]])
    try:
        late_page = browser.new_page()
        late_page.goto(late_address)
        expect(late_page.get_by_test_id("notifications")).to_contain_text(posted["title"])
        expect(late_page.get_by_test_id("banner")).to_be_hidden()
        look = last(read_journal(live["journal"]), "input.look.reply")
        assert look["source"] == "broker" and posted["id"] in [n["id"] for n in look["body"]["value"]["notifications"]], look
        late_page.close()
    finally:
        stop(late)

    page = browser.new_page(viewport={"width": 1440, "height": 900}, device_scale_factor=SCALE)
    page.goto(live["address"])
    expect(page.get_by_test_id("connection")).to_have_class(re.compile(r"\bup\b"))
    waiting = page.locator("#notifications button", has_text=posted["title"])
    expect(waiting).to_have_count(1)
    shot(page, "7-notification")
    waiting.click()
    expect(page.get_by_test_id("action-result")).to_have_text(f"done: notification-tap {posted['id']}")
    expect(page.get_by_test_id("foreground-app")).to_have_attribute("data-app", "Habit Lock")
    expect(waiting).to_have_count(0)
    events = journal_until(live["journal"], lambda es: any(e["topic"] == "app.url.opened" for e in es), "the deep link opened")
    tapped = last(events, "notification.tapped")
    assert tapped["body"]["id"] == posted["id"], tapped
    opened = [e for e in events if e["topic"] == "app.url.opened"]
    assert [e["body"]["url"] for e in opened] == ["habitlock://habits"], opened
    assert opened[0]["seq"] > tapped["seq"], "the route is opened after the tap"
    page.get_by_test_id("home-indicator").click()
    expect(page.get_by_test_id("home-screen")).to_be_visible()
    page.close()


def test_the_persons_taps_reach_the_device_in_the_order_made(browser, live):
    """Home tapped, then an app at once: the app is in front, whichever answer would come first. The page sends an
    action only once the one before it was answered: Home is held unanswered while the app is tapped, and the page
    must not have sent the app's open beside it (two requests in flight may reach the Studio in either order)."""
    page = browser.new_page()
    # Counts the page's input requests in flight, and the most at once.
    page.add_init_script("""(() => {
      const fetched = window.fetch;
      window.inputs = { now: 0, most: 0 };
      window.fetch = async (url, init) => {
        if (!String(url).includes("/api/input")) return fetched(url, init);
        inputs.now += 1; inputs.most = Math.max(inputs.most, inputs.now);
        try { return await fetched(url, init); } finally { inputs.now -= 1; }
      };
    })()""")
    page.goto(live["address"])
    expect(page.get_by_test_id("connection")).to_have_class(re.compile(r"\bup\b"))
    expect(page.get_by_test_id("home-screen")).to_be_visible()
    held, sent = [], []
    page.route("**/api/input", lambda route: held.append(route))
    page.get_by_test_id("home-indicator").click()
    expect(page.get_by_test_id("action-result")).to_have_text("home…")
    page.wait_for_function("inputs.now === 1")
    page.get_by_test_id("app-Maps").click()
    expect(page.get_by_test_id("action-result")).to_have_text("open Maps…")
    assert page.evaluate("inputs.most") == 1, "the app's open was sent while Home was unanswered"
    # Every request let through as it comes, in the order it came, until the app is in front.
    deadline = datetime.now() + timedelta(seconds=30)
    while page.evaluate("document.querySelector('[data-testid=\"action-result\"]').textContent") != "done: open Maps":
        assert datetime.now() < deadline, f"the open answered; sent so far: {sent}"
        while held:
            route = held.pop(0)
            sent.append(route.request.post_data_json["action"])
            route.continue_()
    assert sent == ["home", "open"], sent
    expect(page.get_by_test_id("foreground-app")).to_have_attribute("data-app", "Maps")
    page.unroute("**/api/input")
    page.get_by_test_id("home-indicator").click()
    expect(page.get_by_test_id("home-screen")).to_be_visible()
    page.close()


def test_visit_update_and_restart_as_the_person(browser, live):
    """After the unlock: a private tab on a selected domain is usable, then an iOS update and a device restart,
    each through the page's buttons, each seen in the broker's journal and on the page."""
    page = browser.new_page(viewport={"width": 1440, "height": 900}, device_scale_factor=SCALE)
    page.goto(live["address"])
    expect(page.get_by_test_id("connection")).to_have_class(re.compile(r"\bup\b"))
    page.locator("#url").fill("https://www.reddit.com/r/swift")
    page.locator("#private").check()
    page.get_by_test_id("visit").click()
    expect(page.get_by_test_id("foreground-web")).to_have_attribute("data-domain", "reddit.com")
    expect(page.get_by_test_id("foreground-web")).to_have_class(re.compile(r"\bprivate\b"))
    visited = last(journal_until(live["journal"], lambda es: any(e["topic"] == "activity.web.visited" for e in es), "the visit"),
                   "activity.web.visited")["body"]
    assert visited["isPrivate"] is True and visited["url"] == "https://www.reddit.com/r/swift", visited
    shot(page, "6-private-tab")

    # A Studio started now shows the same phone: the private tab on screen, from its look at connect.
    late, late_address = start_studio(["--runtime-dir", live["runtime"]])
    try:
        late_page = browser.new_page()
        late_page.goto(late_address)
        expect(late_page.get_by_test_id("foreground-web")).to_have_attribute("data-domain", "reddit.com")
        expect(late_page.get_by_test_id("foreground-web")).to_have_class(re.compile(r"\bprivate\b"))
        late_page.close()
    finally:
        stop(late)

    page.get_by_role("button", name="Update iOS").click()
    expect(page.get_by_test_id("action-result")).to_have_text("done: os-update")
    expect(page.get_by_test_id("timeline")).to_contain_text("iOS updated: every token regenerated")
    journal_until(live["journal"], lambda es: any(e["topic"] == "device.os-updated" for e in es), "the update")

    page.get_by_role("button", name="Restart device").click()
    expect(page.get_by_test_id("action-result")).to_have_text("done: restart")
    expect(page.get_by_test_id("timeline")).to_contain_text("restarted")
    expect(page.get_by_test_id("home-screen")).to_be_visible()
    events = journal_until(live["journal"], lambda es: sum(e["topic"] == "plugin.up" for e in es) >= 2 * len(PLUGINS),
                           "every plugin back after the restart", seconds=30)
    assert any(e["topic"] == "device.restarted" for e in events)
    expect(page.locator("#plugins .pill", has_text="up")).to_have_count(len(PLUGINS), timeout=15000)
    page.close()


def test_a_page_from_another_origin_cannot_act(live):
    """A web site the person visits must not drive the device through the Studio."""
    import urllib.error
    import urllib.request
    request = urllib.request.Request(live["address"] + "/api/input", data=b'{"action":"restart"}', method="POST",
                                     headers={"Content-Type": "application/json", "Origin": "http://evil.example"})
    def restarts():
        return sum(e["topic"] == "input.restart.request" for e in read_journal(live["journal"]))
    before = restarts()
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 403
    # A marker through the same broker: once the tool's send is journaled, a forwarded restart would be too.
    subprocess.run([SHIELDBUS, "send", "--runtime-dir", live["runtime"], "app.studio-marker", "{}"], check=True,
                   stdout=subprocess.DEVNULL, timeout=30)
    journal_until(live["journal"], lambda es: any(e["topic"] == "app.studio-marker" for e in es), "the marker")
    assert restarts() == before, "the refused request never reached the bus"


def test_scrubbing_a_recorded_journal(browser):
    """A journal of the habit-lock day, replayed: the slider shows the phone, bus and state as they were."""
    folder = tempfile.mkdtemp(prefix="sb-studio-journal-")
    journal = os.path.join(folder, "day.jsonl")
    subprocess.run([SHIELDBUS, "run", "--config", CONFIG, "--quiet", "--runtime-dir", os.path.join(folder, "run"),
                    "--state-dir", os.path.join(folder, "state"), "--journal", journal],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
    events = read_journal(journal)
    studio, address = start_studio(["--journal", journal])
    try:
        page = browser.new_page(viewport={"width": 1440, "height": 900}, device_scale_factor=SCALE)
        page.goto(address)
        expect(page.get_by_test_id("slider")).to_have_attribute("max", str(len(events)))
        # Every shield the day showed, at the instant it was shown, and what came after it.
        shown = [i for i, e in enumerate(events) if e["topic"] == "shield.shown"]
        assert shown, "the day shows shields"
        for index in shown[:3] + shown[-2:]:
            page.get_by_test_id("slider").fill(str(index + 1))
            title = events[index]["body"]["configuration"]["title"]["text"]
            expect(page.get_by_test_id("shield-title")).to_have_text(title)
            expect(page.get_by_test_id("instant")).to_contain_text(f"#{events[index]['seq']}")
            expect(page.locator("#bus li").first).to_have_attribute("data-seq", str(events[index]["seq"]))
            following = next((e for e in events[index + 1:] if e["topic"] in ("shield.dismissed", "activity.home", "activity.app.opened")), None)
            if following:
                page.get_by_test_id("slider").fill(str(events.index(following) + 1))
                expect(page.get_by_test_id("shield")).to_have_count(0)
        # The stores as they were: before the first change there are none, at the end the last writer's.
        first_change = next(i for i, e in enumerate(events) if e["topic"] == "managedsettings.changed")
        page.get_by_test_id("slider").fill(str(first_change))
        expect(page.locator("#stores td")).to_have_count(0)
        page.get_by_test_id("slider").fill(str(len(events)))
        expect(page.get_by_test_id("stores")).to_contain_text(last(events, "managedsettings.changed")["body"]["writer"])
        # The schedules at the end, with their next start computed independently (zoneinfo, not the Studio's code).
        zone = ZoneInfo(re.search(r"^timeZone:\s*(\S+)", open(CONFIG).read(), re.M).group(1))
        end = datetime.fromtimestamp(events[-1]["time"] / 1000, zone)
        daily = [e["body"] for e in events if e["topic"] == "deviceactivity.start-monitoring.request"
                 and e["body"]["activity"] == "habit-lock.daily"][-1]["schedule"]["intervalStart"]
        start = end.replace(hour=daily.get("hour", 0), minute=daily.get("minute", 0), second=0, microsecond=0)
        if start <= end:
            start = (start + timedelta(days=1)).replace(hour=daily.get("hour", 0), minute=daily.get("minute", 0))
        row = page.locator("#schedules tr", has_text="habit-lock.daily")
        expect(row).to_contain_text(start.strftime("%d/%m, %H:%M"))
        page.get_by_test_id("slider").fill(str(shown[0] + 1))
        shot(page, "5-journal")
        page.close()
    finally:
        stop(studio)
