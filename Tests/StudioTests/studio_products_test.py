"""A day of each shipped product but the habit lock (whose day is studio_browser_test.py's), and of the habit lock and the
speed bump on one device, driven in the Studio as a person would: the product's app opened first, its picked apps opened, the shield's buttons pressed, the controls of its
app tapped, a notification tapped — and time moved with the Studio's clock bar (paused, then jumped to the next wall
time), never waited for. Each day has a broker of its own on the product's shipped configuration; what the page shows
is checked against that broker's journal.
"""
import os
import re
import subprocess
import tempfile

import pytest
from playwright.sync_api import expect

from studio_support import ROOT, SCALE, SHIELDBUS, journal_until, read_journal, shot, start_studio, steer_clock, stop


def shields(event):
    """Whether a `managedsettings.changed` shields anything."""
    shield = event["body"].get("shield") or {}
    categories = shield.get("applicationCategories") or {}
    return bool(shield.get("applications") or shield.get("webDomains") or categories.get("categories") or categories.get("policy"))


def app_token(events, app):
    """The token the journal's events give `app` (in an app's open, a shield's target…)."""
    def find(value):
        if isinstance(value, dict):
            if value.get("localizedDisplayName") == app and "token" in value:
                return value["token"]
            value = list(value.values())
        if isinstance(value, list):
            return next((found for found in map(find, value) if found), None)
        return None
    token = next((found for found in (find(e["body"]) for e in events) if found), None)
    assert token, f"the journal names no token of {app}"
    return token


class Day:
    """A product's broker and a Studio following it, a page on it, and what the person does there."""

    def __init__(self, browser, product, plugins, width=1280):
        self.product = product
        folder = tempfile.mkdtemp(prefix=f"sb-studio-{product}-")
        config = os.path.join(ROOT, "Config", f"{product}.yml")
        self.journal, runtime = os.path.join(folder, "journal.jsonl"), os.path.join(folder, "run")
        self.studio, address = start_studio(["--runtime-dir", runtime], config=config)
        self.broker = subprocess.Popen([SHIELDBUS, "run", "--config", config, "--no-scenario", "--quiet", "--runtime-dir", runtime,
                                        "--state-dir", os.path.join(folder, "state"), "--journal", self.journal],
                                       stdout=subprocess.DEVNULL, stderr=open(os.path.join(folder, "broker.log"), "w"))
        self.page = browser.new_page(viewport={"width": width, "height": 900}, device_scale_factor=SCALE)
        self.page.goto(address)
        expect(self.page.get_by_test_id("connection")).to_have_class(re.compile(r"\bup\b"))
        expect(self.page.locator("#plugins .pill", has_text="up")).to_have_count(plugins, timeout=60_000)
        # Bus time stands still from here: only the clock bar moves it.
        steer_clock(self.page, self.journal, "clock-pause")

    def close(self):
        self.page.close()
        stop(self.studio)
        stop(self.broker)

    def events(self):
        return read_journal(self.journal)

    def until(self, condition, what):
        return journal_until(self.journal, condition, what, seconds=30)

    def result(self, text):
        expect(self.page.get_by_test_id("action-result")).to_have_text(text)

    def jump(self, to, shielding=None):
        """Bus time to `to` (+6m, or 09:01: the next 09:01), every timer on the way firing at its own time; with
        `shielding`, waits for the stores to be written on the way to shield something (True) or nothing (False)."""
        before = len(self.events())
        steer_clock(self.page, self.journal, "clock-jump", fill=to)
        expect(self.page.get_by_test_id("bus-clock")).to_have_attribute("data-paused", "true")
        if shielding is not None:
            self.store_changed(before, shielding, f"the stores on the way to {to}")

    def home(self):
        self.page.get_by_test_id("home-indicator").click()
        expect(self.page.get_by_test_id("home-screen")).to_be_visible()

    def open_companion(self, app):
        """The product's app opened once (as a person sets it up: its selection and schedules), then home."""
        self.companion = app
        self.page.get_by_test_id(f"app-{app}").click()
        expect(self.page.get_by_test_id("foreground-app")).to_have_attribute("data-app", app)
        self.until(lambda es: any(e["topic"] == "deviceactivity.start-monitoring.request" for e in es), f"{app} monitoring its schedules")
        self.home()

    def open(self, app):
        """Opens `app` from the home screen; returns its `shield.shown` when the device shielded it, else None — the page
        showing the shield the renderer configured, or the app itself, as the journal says."""
        before = len(self.events())
        self.page.get_by_test_id(f"app-{app}").click()
        self.result(f"done: open {app}")
        events = self.until(lambda es: any(e["topic"] in ("shield.shown", "activity.app.opened") for e in es[before:]), f"{app} opened or shielded")
        shown = [e for e in events[before:] if e["topic"] == "shield.shown"]
        if not shown:
            opened = [e for e in events[before:] if e["topic"] == "activity.app.opened"][-1]
            assert opened["body"]["application"]["localizedDisplayName"] == app, opened
            expect(self.page.get_by_test_id("foreground-app")).to_have_attribute("data-app", app)
            expect(self.page.get_by_test_id("shield")).to_have_count(0)
            return None
        self.expect_shield(shown[-1], app)
        return shown[-1]

    def expect_shield(self, shown, app):
        assert shown["body"]["target"]["application"]["localizedDisplayName"] == app, shown
        configuration = shown["body"]["configuration"]
        page = self.page
        expect(page.get_by_test_id("shield")).to_be_visible()
        expect(page.get_by_test_id("shield-title")).to_have_text(configuration["title"]["text"])
        expect(page.get_by_test_id("shield-primary")).to_have_text(configuration["primaryButtonLabel"]["text"])
        if "secondaryButtonLabel" in configuration:
            expect(page.get_by_test_id("shield-secondary")).to_have_text(configuration["secondaryButtonLabel"]["text"])
        else:
            expect(page.get_by_test_id("shield-secondary")).to_have_count(0)

    def press(self, button):
        """Presses a shield button; returns the delegate's `shield.action.handled`."""
        before = len(self.events())
        self.page.get_by_test_id(f"shield-{button}").click()
        self.result(f"done: press {button}")
        events = self.until(lambda es: any(e["topic"] == "shield.action.handled" for e in es[before:]), f"the {button} press handled")
        return [e for e in events[before:] if e["topic"] == "shield.action.handled"][-1]

    def tap_in_app(self, control, shielding):
        """Taps a control of the product's app (the person panel's app controls), the app brought to the front first as
        a person would; waits for the stores to be written to shield something (`shielding`) or nothing; then home."""
        page = self.page
        front = page.get_by_test_id("foreground-app")
        if front.count() == 0 or front.get_attribute("data-app") != self.companion:
            self.home()
            page.get_by_test_id(f"app-{self.companion}").click()
            expect(page.get_by_test_id("foreground-app")).to_have_attribute("data-app", self.companion)
        before = len(self.events())
        page.get_by_test_id("app-control").select_option(label=f"{self.companion}: {control}")
        page.get_by_test_id("app-action").click()
        self.result(f"done: app-action {control}")
        self.until(lambda es: any(e["topic"] == "activity.app.action" and e["body"]["action"] == control for e in es[before:]),
                   f"'{control}' tapped in the app")
        self.store_changed(before, shielding, f"the stores after '{control}'")
        self.home()

    def store_changed(self, before, shielding, what):
        """Waits for the products' stores to be written after event `before` to shield something (or nothing)."""
        return self.until(lambda es: any(e["topic"] == "managedsettings.changed" and shields(e) == shielding for e in es[before:]), what)

    def app_store_changed(self, before, app, shielded, what, store=None):
        """Waits for a `managedsettings.changed` after event `before` (of `store`, when given) that shields `app` (or
        leaves it out)."""
        def holds(events):
            token = app_token(events, app)
            return any(e["topic"] == "managedsettings.changed" and store in (None, e["body"]["store"])
                       and (token in ((e["body"].get("shield") or {}).get("applications") or [])) == shielded for e in events[before:])
        return self.until(holds, what)

    def lock_state(self):
        """Whether the last `managedsettings.changed` shields anything (False when none was written)."""
        changes = [e for e in self.events() if e["topic"] == "managedsettings.changed"]
        return bool(changes) and shields(changes[-1])


@pytest.fixture
def day(browser, request):
    made = []

    def start(product, plugins):
        made.append(Day(browser, product, plugins))
        return made[-1]
    yield start
    for each in made:
        each.close()


def test_a_focus_window_day(day):
    """Focus hours 09:00–12:00 and 14:00–17:00: "Back to focus" closes the app, "Open for 5 minutes" lets that app alone
    through until the pass ends, and the same app opens freely after the window."""
    d = day("focus-window", 5)
    d.open_companion("Focus Window")
    d.jump("08:30")
    assert not d.lock_state(), "outside the focus hours nothing is shielded"
    assert d.open("Instagram") is None, "before the focus hours Instagram opens"
    d.home()

    d.jump("09:01", shielding=True)
    assert d.open("Instagram"), "Instagram is shielded in focus hours"
    shot(d.page, "20-focus-window-shield")
    handled = d.press("primary")
    assert handled["body"]["response"] == "close", handled
    expect(d.page.get_by_test_id("home-screen")).to_be_visible()

    d.open("Instagram")
    mark = len(d.events())
    d.press("secondary")
    # The grace pass: the monitor lifts Instagram alone, and the app comes to the front.
    d.app_store_changed(mark, "Instagram", False, "Instagram's grace pass")
    expect(d.page.get_by_test_id("shield")).to_have_count(0)
    expect(d.page.get_by_test_id("foreground-app")).to_have_attribute("data-app", "Instagram")
    d.home()
    assert d.open("TikTok"), "the pass is Instagram's alone"
    d.press("primary")

    mark = len(d.events())
    d.jump("+6m")
    d.app_store_changed(mark, "Instagram", True, "the pass's end")
    assert d.open("Instagram"), "the pass ended after 5 minutes"
    d.press("primary")

    d.jump("12:01", shielding=False)
    assert d.open("Instagram") is None, "after the focus hours Instagram opens"
    shot(d.page, "21-focus-window-after")


def test_a_speed_bump_day(day):
    """Past 30 minutes of the picked apps' use in a day the speed bump comes down over the app in front and the notifier
    posts its nudge; "Dismiss" lets that app through for the 15-minute cooldown; the nudge's tap opens Speed Bump at its
    deep link; after the cooldown the app is shielded again."""
    d = day("speed-bump", 6)
    d.open_companion("Speed Bump")
    d.jump("07:30")  # a new device day, out of the notifier's quiet hours
    assert d.open("Instagram") is None, "under the day's threshold Instagram opens"

    mark = len(d.events())
    d.jump("+31m")  # half an hour on Instagram
    d.store_changed(mark, True, "the speed bump past the threshold")
    events = d.until(lambda es: any(e["topic"] == "shield.shown" for e in es[mark:]), "the shield over the app in front")
    d.expect_shield([e for e in events[mark:] if e["topic"] == "shield.shown"][-1], "Instagram")
    posted = d.until(lambda es: any(e["topic"] == "notification.posted" for e in es[mark:]), "the nudge")
    nudge = [e for e in posted[mark:] if e["topic"] == "notification.posted"][-1]["body"]
    waiting = d.page.locator("#notifications button", has_text=nudge["title"])
    expect(waiting).to_have_count(1)
    shot(d.page, "22-speed-bump-shield")

    mark = len(d.events())
    handled = d.press("primary")
    d.app_store_changed(mark, "Instagram", False, "Instagram let through by the dismiss")
    expect(d.page.get_by_test_id("shield")).to_have_count(0)
    expect(d.page.get_by_test_id("foreground-app")).to_have_attribute("data-app", "Instagram")
    d.home()
    assert d.open("Instagram") is None, f"dismissed ({handled['body']['response']}): Instagram is let through for the cooldown"
    d.home()

    mark = len(d.events())
    waiting.click()
    d.result(f"done: notification-tap {nudge['id']}")
    expect(d.page.get_by_test_id("foreground-app")).to_have_attribute("data-app", "Speed Bump")
    expect(waiting).to_have_count(0)
    opened = d.until(lambda es: any(e["topic"] == "app.url.opened" for e in es[mark:]), "the nudge's deep link")
    assert [e["body"]["url"] for e in opened[mark:] if e["topic"] == "app.url.opened"] == ["tether://nudge?action=call"]
    d.home()

    d.jump("+16m")
    assert d.open("Instagram") is None, "after the cooldown the count goes on from where it paused"
    mark = len(d.events())
    d.jump("+31m")
    d.app_store_changed(mark, "Instagram", True, "the speed bump back after another half hour")
    events = d.until(lambda es: any(e["topic"] == "shield.shown" for e in es[mark:]), "the shield over Instagram again")
    d.expect_shield([e for e in events[mark:] if e["topic"] == "shield.shown"][-1], "Instagram")
    shot(d.page, "23-speed-bump-after-cooldown")


def test_a_bedtime_night(day):
    """From 22:30 the picked apps are shielded; "5 more minutes" lets an app through twice a night, not a third time;
    "skip tonight" in Bedtime lifts the night's shield."""
    d = day("bedtime", 4)
    d.jump("21:00")
    d.open_companion("Bedtime")  # set up in the evening
    d.jump("22:00")
    assert d.open("Instagram") is None, "before bedtime Instagram opens"
    d.home()

    d.jump("22:31", shielding=True)

    for app in ["Instagram", "TikTok"]:
        assert d.open(app), f"{app} is shielded at night"
        mark = len(d.events())
        d.press("secondary")
        d.app_store_changed(mark, app, False, f"{app}'s five more minutes")
        d.home()
        assert d.open(app) is None, f"{app} opens on its pass"
        d.home()
    shown = d.open("YouTube")
    assert shown, "YouTube is shielded at night"
    shot(d.page, "24-bedtime-no-passes-left")
    if "secondaryButtonLabel" in shown["body"]["configuration"]:
        mark = len(d.events())
        d.press("secondary")
        # The third press grants nothing: the stores stay as they were, YouTube shielded.
        assert not any(e["topic"] == "managedsettings.changed" for e in d.events()[mark:]), "no third pass"
    d.home()
    assert d.open("YouTube"), "no third pass a night"
    d.press("primary")

    d.tap_in_app("skip-tonight", shielding=False)
    assert d.open("YouTube") is None, "tonight skipped: YouTube opens"
    shot(d.page, "25-bedtime-skipped")


def test_a_profiles_evening(day):
    """Between the workday profile (ends 20:00) and the evening one (from 21:00) the apps are free but for a deep-work
    session started and stopped in the app; in the evening a 15-minute break lifts the lock until it ends, and ending
    the evening early from the app frees them."""
    d = day("profiles", 4)
    d.open_companion("Profiles")
    d.jump("20:10")
    assert d.open("TikTok") is None, "between the profiles TikTok opens"
    d.home()
    d.tap_in_app("start-deep-work", shielding=True)
    assert d.open("TikTok"), "deep work: TikTok is shielded"
    d.press("primary")
    d.tap_in_app("stop-deep-work", shielding=False)
    assert d.open("TikTok") is None, "the session stopped: TikTok opens"
    d.home()

    d.jump("21:05", shielding=True)
    assert d.open("YouTube"), "the evening profile shields YouTube"
    shot(d.page, "26-profiles-evening")
    d.press("primary")
    d.tap_in_app("take-a-break", shielding=False)
    assert d.open("YouTube") is None, "on a break YouTube opens"
    d.home()
    d.jump("+16m", shielding=True)
    assert d.open("YouTube"), "the break ended: YouTube is shielded again"
    d.press("primary")
    d.tap_in_app("end-evening", shielding=False)
    assert d.open("X") is None, "the evening ended: X opens"
    shot(d.page, "27-profiles-ended")


def test_two_products_on_one_device(day):
    """The habit lock and the speed bump on one phone: Instagram stays under the habit lock while Facebook crosses the
    speed bump's threshold; the habits' unlock lifts the habit lock's store alone — X, past the speed bump, stays
    shielded by the other product's renderer."""
    d = day("two-products", 8)
    d.open_companion("Speed Bump")
    d.open_companion("Habit Lock")
    d.jump("07:30")
    shown = d.open("Instagram")
    assert shown, "the habit lock shields Instagram"
    habit_title = shown["body"]["configuration"]["title"]["text"]
    d.press("primary")
    assert d.open("Facebook") is None, "under the speed bump's threshold Facebook opens"

    mark = len(d.events())
    d.jump("+31m")  # half an hour on Facebook
    d.app_store_changed(mark, "Facebook", True, "the speed bump past the threshold", store="speed-bump")
    events = d.until(lambda es: any(e["topic"] == "shield.shown" for e in es[mark:]), "the speed bump over Facebook")
    bump = [e for e in events[mark:] if e["topic"] == "shield.shown"][-1]
    d.expect_shield(bump, "Facebook")
    assert bump["body"]["configuration"]["title"]["text"] != habit_title, "each product's renderer draws its own shield"
    shot(d.page, "28-two-products-speed-bump")
    d.press("primary")
    d.home()

    mark = len(d.events())
    for habit in ["Read", "Walk", "Meditate"]:
        d.page.locator("#habit").fill(habit)
        d.page.get_by_test_id("complete-habit").click()
        d.result(f"done: habit {habit}")
    d.app_store_changed(mark, "Instagram", False, "the habit lock's unlock", store="habit-lock")
    assert not any(e["topic"] == "managedsettings.changed" and e["body"]["store"] == "speed-bump" and not shields(e) for e in d.events()[mark:]), \
        "the unlock never touches the speed bump's store"
    assert d.open("Instagram") is None, "the habits done: Instagram opens"
    d.home()
    shown = d.open("X")
    assert shown, "X stays behind the speed bump"
    assert shown["body"]["configuration"]["title"]["text"] == bump["body"]["configuration"]["title"]["text"]
    shot(d.page, "29-two-products-unlocked")
