"""A day of each shipped product but the habit lock (whose day is studio_browser_test.py's), and of the habit lock and the
speed bump on one device, driven in the Studio as a person would: the product's app opened first, its picked apps
opened, the shield's buttons pressed, the controls of its app tapped, a notification tapped — and time moved with the
Studio's clock bar (paused, then jumped to the next wall time), never waited for; then the person's other actions
(`Day.every_other_action`): an app closed, the product's app force-quit, tabs switched and closed, authorization
revoked, denied and approved again, the device clock set, the time zone changed, the broker crashed, the session saved
as a scenario and its journal exported. Each day has a broker of its own on the product's shipped configuration; what
the page shows is checked against that broker's journal. Each day runs at a phone's width and a laptop's: never a
sideways scroll, and every click lands on its control (Playwright's click refuses one that something covers). The
other actions run at one of the two widths for each product (`OTHER_ACTIONS_AT`), the phone's for some products and
the laptop's for the others: what the device does for them does not depend on the page's width, and
studio_person_test.py clicks every one of them at both widths.
"""
import os
import re
import subprocess
import tempfile
from contextlib import contextmanager

import pytest

from studio_support import expect, ROOT, SCALE, SHIELDBUS, assert_fits, journal_until, read_journal, shot, start_studio, steer_clock, stop


# The width at which each product's day ends with the person's other actions (`Day.every_other_action`).
OTHER_ACTIONS_AT = {"focus-window": 1280, "speed-bump": 390, "bedtime": 1280, "profiles": 1280, "two-products": 390}


def shields(event):
    """Whether a `managedsettings.changed` shields anything."""
    shield = event["body"].get("shield") or {}
    categories = shield.get("applicationCategories") or {}
    return bool(shield.get("applications") or shield.get("webDomains") or categories.get("categories") or categories.get("policy"))


def shielding_stores(events):
    """The stores whose last `managedsettings.changed` shields something."""
    last = {e["body"]["store"]: e for e in events if e["topic"] == "managedsettings.changed"}
    return {store for store, event in last.items() if shields(event)}


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

    def __init__(self, browser, product, plugins, width):
        self.product, self.plugins, self.width = product, plugins, width
        folder = tempfile.mkdtemp(prefix=f"sb-studio-{product}-")
        config = os.path.join(ROOT, "Config", f"{product}.yml")
        self.journal, runtime = os.path.join(folder, "journal.jsonl"), os.path.join(folder, "run")
        self.studio, address = start_studio(["--runtime-dir", runtime], config=config)
        self.broker, self.page = None, None
        try:
            self.broker = subprocess.Popen([SHIELDBUS, "run", "--config", config, "--no-scenario", "--quiet", "--runtime-dir", runtime,
                                            "--state-dir", os.path.join(folder, "state"), "--journal", self.journal],
                                           stdout=subprocess.DEVNULL, stderr=open(os.path.join(folder, "broker.log"), "w"))
            self.page = browser.new_page(viewport={"width": width, "height": 844 if width < 600 else 900}, device_scale_factor=SCALE)
            self.page.goto(address)
            expect(self.page.get_by_test_id("connection")).to_have_class(re.compile(r"\bup\b"))
            self.expect_plugins_up()
            # Bus time stands still from here: only the clock bar moves it.
            steer_clock(self.page, self.journal, "clock-pause")
        except BaseException:
            self.close()  # a day that could not begin leaves no broker or Studio behind
            raise

    def close(self):
        try:
            if self.page:
                self.page.close()
        finally:
            stop(self.studio)
            if self.broker:
                stop(self.broker)

    def events(self):
        return read_journal(self.journal)

    def until(self, condition, what):
        return journal_until(self.journal, condition, what, seconds=30)

    def expect_plugins_up(self):
        expect(self.page.locator("#plugins .pill", has_text="up")).to_have_count(self.plugins, timeout=60_000)

    def shot(self, name):
        shot(self.page, name if self.width == 1280 else f"{name}-{self.width}")

    def result(self, text):
        expect(self.page.get_by_test_id("action-result")).to_have_text(text)
        assert_fits(self.page, f"at {self.width} px after '{text}'")

    def act(self, testid, done, fill=None):
        """Clicks a control of the person's panel (after filling its field) and waits for the device's answer; returns
        the index in the journal the action came after."""
        before = len(self.events())
        if fill:
            selector, value = fill
            self.page.locator(selector).fill(value)
        self.page.get_by_test_id(testid).click()
        self.result(done)
        return before

    def step(self, before, action):
        """Waits for the person's step `action` journaled after event `before`."""
        return self.until(lambda es: any(e["topic"] == "scenario.step" and e["body"]["action"] == action for e in es[before:]),
                          f"the step '{action}'")

    def every_other_action(self):
        """The person's actions a day of taps and presses leaves out, each through the page and journaled as the
        person's step: an app opened and closed; the product's app force-quit (its process ends); a page visited in a
        second tab, switched to and closed; authorization revoked (every shield lifted), denied, approved again (the
        app sets up again: it asks for its schedules anew); the device clock set forward and back; the time zone
        changed and back; the broker crashed (it starts again on the same state, every plugin back); then the session
        saved as a scenario holding these steps, and its journal exported whole. Only at the product's width in
        `OTHER_ACTIONS_AT`."""
        if self.width != OTHER_ACTIONS_AT[self.product]:
            return
        page = self.page
        self.home()
        page.get_by_test_id("app-choice").select_option("Maps")
        page.locator("#person [data-action='open']").click()
        self.result("done: open Maps")
        self.step(self.act("close-app", "done: close"), "close the foreground app")

        page.get_by_test_id("app-choice").select_option(self.companion)
        mark = self.act("force-quit", f"done: force-quit {self.companion}")
        self.until(lambda es: any(e["topic"] == "plugin.down" and "force-quit" in e["body"].get("reason", "") for e in es[mark:]),
                   f"{self.companion}'s process ended by the force-quit")

        page.get_by_test_id("tab").fill("2")
        self.act("visit", re.compile(r"^done: visit"), fill=("#url", "https://en.wikipedia.org/wiki/Sleep"))
        self.home()
        self.step(self.act("switch-tab", "done: switch-tab"), "switch to tab 2")
        self.step(self.act("close-tab", "done: close-tab"), "close tab 2")
        page.get_by_test_id("tab").fill("1")
        self.home()

        self.step(self.act("authorize-revoke", "done: authorize revoke"), "authorization revoked")
        self.until(lambda es: not shielding_stores(es), "every shield lifted by the revocation")
        mark = self.act("authorize-approve", "done: authorize approve")
        self.step(mark, "authorization approved")
        self.until(lambda es: any(e["topic"] == "deviceactivity.start-monitoring.request" for e in es[mark:]), "the app set up again")
        self.step(self.act("authorize-deny", "done: authorize deny"), "authorization denied")
        self.step(self.act("authorize-approve", "done: authorize approve"), "authorization approved")

        self.step(self.act("set-clock", "done: set-clock +1h", fill=("#device-clock-setting", "+1h")), "set the device clock forward 60 min")
        self.step(self.act("set-clock", "done: set-clock -1h", fill=("#device-clock-setting", "-1h")), "set the device clock back 60 min")
        self.step(self.act("set-time-zone", "done: time-zone Asia/Tokyo", fill=("#time-zone", "Asia/Tokyo")), "change the time zone to Asia/Tokyo")
        self.step(self.act("set-time-zone", "done: time-zone Europe/Berlin", fill=("#time-zone", "Europe/Berlin")),
                  "change the time zone to Europe/Berlin")

        ups = sum(e["topic"] == "plugin.up" for e in self.events())
        self.act("crash-broker", "done: crash-broker")
        self.until(lambda es: any(e["topic"] == "bus.started" and e["body"].get("after") == "crash" for e in es), "the crash")
        self.until(lambda es: sum(e["topic"] == "plugin.up" for e in es) >= ups + self.plugins, "every plugin back after the crash")
        self.expect_plugins_up()

        with page.expect_download() as download:
            page.get_by_test_id("save-scenario").click()
        saved = open(download.value.path()).read()
        for step in ["close: ", "forceQuit: ", "switchTab: ", "closeTab: ", "authorize: revoked", "authorize: denied", "setClock: ", 'timeZone: "Asia/Tokyo"', "crashBroker: true"]:
            assert step in saved, f"the saved scenario has its '{step}' step:\n{saved}"
        with page.expect_download() as download:
            page.get_by_test_id("export-journal").click()
        exported = open(download.value.path()).read().splitlines()
        journaled = open(self.journal).read().splitlines()
        assert exported[0] == journaled[0] and len(exported) >= len(journaled) - 5, (len(exported), len(journaled))
        assert_fits(page, f"at {self.width} px after every action")

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

    def opens(self, app, why):
        """Opens `app`, which the device must not shield; then home."""
        assert self.open(app) is None, why
        self.home()

    def shielded(self, app, why, close=False):
        """Opens `app`, which the device must shield; with `close`, the primary button pressed (back home). Returns its
        `shield.shown`."""
        shown = self.open(app)
        assert shown, why
        if close:
            self.press("primary")
        return shown

    @contextmanager
    def writing(self, app, shielded, what, store=None):
        """What the block does must write the stores to shield `app` (or leave it out), of `store` when given."""
        mark = len(self.events())
        yield
        self.app_store_changed(mark, app, shielded, what, store)

    def new_shield(self, mark, app, what):
        """The `shield.shown` over `app` after event `mark`, as the page shows it."""
        events = self.until(lambda es: any(e["topic"] == "shield.shown" for e in es[mark:]), what)
        shown = [e for e in events[mark:] if e["topic"] == "shield.shown"][-1]
        self.expect_shield(shown, app)
        return shown

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
        """Presses a shield button; returns the delegate's `shield.action.handled` — or None when the shield went before
        the delegate answered (its own writes made the monitor lift the app: the OS then drops the answer, as iOS does)."""
        before = len(self.events())
        self.page.get_by_test_id(f"shield-{button}").click()
        events = self.until(lambda es: any(e["topic"] == "input.press.reply" for e in es[before:]), f"the {button} press answered")
        self.result(f"done: press {button}")
        events = self.until(lambda es: any(e["topic"] in ("shield.action.handled", "shield.dismissed") for e in es[before:]),
                            f"the {button} press handled")
        handled = [e for e in events[before:] if e["topic"] == "shield.action.handled"]
        return handled[-1] if handled else None

    def tap_in_app(self, control, shielding):
        """Taps a control of the product's app (the person panel's app controls), the app brought to the front first as
        a person would; waits for the stores to be written to shield something (`shielding`) or nothing; then home."""
        page = self.page
        # Read at once: the app in front may leave between a count and a read (a shield closing), and a locator's read
        # would then wait for one that never comes back.
        front = page.evaluate("() => document.querySelector('[data-testid=\"foreground-app\"]')?.getAttribute('data-app') ?? null")
        if front != self.companion:
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


@pytest.fixture(params=[390, 1280], ids=["390px", "1280px"])
def day(browser, request):
    made = []

    def start(product, plugins):
        made.append(Day(browser, product, plugins, request.param))
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
    d.opens("Instagram", "before the focus hours Instagram opens")

    d.jump("09:01", shielding=True)
    d.shielded("Instagram", "Instagram is shielded in focus hours")
    d.shot("20-focus-window-shield")
    handled = d.press("primary")
    assert handled and handled["body"]["response"] == "close", handled
    expect(d.page.get_by_test_id("home-screen")).to_be_visible()

    d.open("Instagram")
    # The grace pass: the monitor lifts Instagram alone, and the app comes to the front.
    with d.writing("Instagram", False, "Instagram's grace pass"):
        d.press("secondary")
    expect(d.page.get_by_test_id("shield")).to_have_count(0)
    expect(d.page.get_by_test_id("foreground-app")).to_have_attribute("data-app", "Instagram")
    d.home()
    d.shielded("TikTok", "the pass is Instagram's alone", close=True)

    with d.writing("Instagram", True, "the pass's end"):
        d.jump("+6m")
    d.shielded("Instagram", "the pass ended after 5 minutes", close=True)

    d.jump("12:01", shielding=False)
    assert d.open("Instagram") is None, "after the focus hours Instagram opens"
    d.shot("21-focus-window-after")
    d.every_other_action()


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
    d.new_shield(mark, "Instagram", "the shield over the app in front")
    posted = d.until(lambda es: any(e["topic"] == "notification.posted" for e in es[mark:]), "the nudge")
    nudge = [e for e in posted[mark:] if e["topic"] == "notification.posted"][-1]["body"]
    waiting = d.page.locator("#notifications button", has_text=nudge["title"])
    expect(waiting).to_have_count(1)
    d.shot("22-speed-bump-shield")

    with d.writing("Instagram", False, "Instagram let through by the dismiss"):
        handled = d.press("primary")
    expect(d.page.get_by_test_id("shield")).to_have_count(0)
    expect(d.page.get_by_test_id("foreground-app")).to_have_attribute("data-app", "Instagram")
    d.home()
    d.opens("Instagram", f"dismissed ({handled and handled['body']['response']}): Instagram is let through for the cooldown")

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
    with d.writing("Instagram", True, "the speed bump back after another half hour"):
        d.jump("+31m")
    d.new_shield(mark, "Instagram", "the shield over Instagram again")
    d.shot("23-speed-bump-after-cooldown")
    d.every_other_action()


def test_a_bedtime_night(day):
    """From 22:30 the picked apps are shielded; "5 more minutes" lets an app through twice a night, not a third time;
    "skip tonight" in Bedtime lifts the night's shield."""
    d = day("bedtime", 4)
    d.jump("21:00")
    d.open_companion("Bedtime")  # set up in the evening
    d.jump("22:00")
    d.opens("Instagram", "before bedtime Instagram opens")

    d.jump("22:31", shielding=True)
    for app in ["Instagram", "TikTok"]:
        d.shielded(app, f"{app} is shielded at night")
        with d.writing(app, False, f"{app}'s five more minutes"):
            d.press("secondary")
        d.home()
        d.opens(app, f"{app} opens on its pass")
    shown = d.shielded("YouTube", "YouTube is shielded at night")
    d.shot("24-bedtime-no-passes-left")
    if "secondaryButtonLabel" in shown["body"]["configuration"]:
        mark = len(d.events())
        d.press("secondary")
        # The third press grants nothing: the stores stay as they were, YouTube shielded.
        assert not any(e["topic"] == "managedsettings.changed" for e in d.events()[mark:]), "no third pass"
    d.home()
    d.shielded("YouTube", "no third pass a night", close=True)

    d.tap_in_app("skip-tonight", shielding=False)
    assert d.open("YouTube") is None, "tonight skipped: YouTube opens"
    d.shot("25-bedtime-skipped")
    d.every_other_action()


def test_a_profiles_evening(day):
    """Between the workday profile (ends 20:00) and the evening one (from 21:00) the apps are free but for a deep-work
    session started and stopped in the app; in the evening a 15-minute break lifts the lock until it ends, and ending
    the evening early from the app frees them."""
    d = day("profiles", 4)
    d.open_companion("Profiles")
    d.jump("20:10")
    d.opens("TikTok", "between the profiles TikTok opens")
    d.tap_in_app("start-deep-work", shielding=True)
    d.shielded("TikTok", "deep work: TikTok is shielded", close=True)
    d.tap_in_app("stop-deep-work", shielding=False)
    d.opens("TikTok", "the session stopped: TikTok opens")

    d.jump("21:05", shielding=True)
    d.shielded("YouTube", "the evening profile shields YouTube")
    d.shot("26-profiles-evening")
    d.press("primary")
    d.tap_in_app("take-a-break", shielding=False)
    d.opens("YouTube", "on a break YouTube opens")
    d.jump("+16m", shielding=True)
    d.shielded("YouTube", "the break ended: YouTube is shielded again", close=True)
    d.tap_in_app("end-evening", shielding=False)
    assert d.open("X") is None, "the evening ended: X opens"
    d.shot("27-profiles-ended")
    d.every_other_action()


def test_two_products_on_one_device(day):
    """The habit lock and the speed bump on one phone: Instagram stays under the habit lock while Facebook crosses the
    speed bump's threshold; the habits' unlock lifts the habit lock's store alone — X, past the speed bump, stays
    shielded by the other product's renderer."""
    d = day("two-products", 8)
    d.open_companion("Speed Bump")
    d.open_companion("Habit Lock")
    d.jump("07:30")
    habit_title = d.shielded("Instagram", "the habit lock shields Instagram", close=True)["body"]["configuration"]["title"]["text"]
    assert d.open("Facebook") is None, "under the speed bump's threshold Facebook opens"

    mark = len(d.events())
    with d.writing("Facebook", True, "the speed bump past the threshold", store="speed-bump"):
        d.jump("+31m")  # half an hour on Facebook
    bump = d.new_shield(mark, "Facebook", "the speed bump over Facebook")
    assert bump["body"]["configuration"]["title"]["text"] != habit_title, "each product's renderer draws its own shield"
    d.shot("28-two-products-speed-bump")
    d.press("primary")
    d.home()

    mark = len(d.events())
    with d.writing("Instagram", False, "the habit lock's unlock", store="habit-lock"):
        for habit in ["Read", "Walk", "Meditate"]:
            d.page.locator("#habit").fill(habit)
            d.page.get_by_test_id("complete-habit").click()
            d.result(f"done: habit {habit}")
    assert not any(e["topic"] == "managedsettings.changed" and e["body"]["store"] == "speed-bump" and not shields(e) for e in d.events()[mark:]), \
        "the unlock never touches the speed bump's store"
    d.opens("Instagram", "the habits done: Instagram opens")
    shown = d.shielded("X", "X stays behind the speed bump")
    assert shown["body"]["configuration"]["title"]["text"] == bump["body"]["configuration"]["title"]["text"]
    d.shot("29-two-products-unlocked")
    d.every_other_action()
