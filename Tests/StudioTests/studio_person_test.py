"""Every action explore uses, from the Studio's person panel, each through the real broker (journaled as the person's
step, or refused in words when it changed nothing), and the session's journal exported. Run after the live tests: it
changes the shared broker's time zone and device clock, revokes and approves its authorization, and crashes it.
"""
import json
import re

import pytest

from studio_support import expect, PLUGINS, SCALE, assert_fits, journal_until, read_journal, shot


def steps(live):
    return [e["body"]["action"] for e in read_journal(live["journal"]) if e["topic"] == "scenario.step" and e["body"]["by"].startswith("do-")]


@pytest.mark.parametrize("width,height,zone", [(390, 844, "Asia/Tokyo"), (1280, 800, "America/New_York")])
def test_every_action_explore_uses(browser, live, width, height, zone):
    """Each action at a phone's width and a laptop's: every control clicked (Playwright's click finds nothing over it),
    never a sideways scroll. The second width goes on where the first left the device (another zone, the clock 2 h on)."""
    page = browser.new_page(viewport={"width": width, "height": height}, device_scale_factor=SCALE)
    page.goto(live["address"])
    expect(page.get_by_test_id("connection")).to_have_class(re.compile(r"\bup\b"))
    result = page.get_by_test_id("action-result")

    def act(testid, done, step):
        before = len(steps(live))
        page.get_by_test_id(testid).click()
        expect(result).to_have_text(done)
        journal_until(live["journal"], lambda _: step in steps(live)[before:], f"the step '{step}' journaled")
        assert_fits(page, f"at {width} px after {testid}")

    def refused(testid, why):
        page.get_by_test_id(testid).click()
        expect(result).to_have_text(re.compile(r"^refused: .*" + re.escape(why)))
        expect(result).to_have_class(re.compile(r"\berror\b"))

    # The habit lock's promise names no control in its app: no row to tap one (an empty choice that could only fail).
    expect(page.get_by_test_id("app-action")).to_be_hidden()
    expect(page.get_by_test_id("app-control")).to_be_hidden()
    page.get_by_test_id("app-choice").select_option("Maps")
    page.locator("#person [data-action='open']").click()
    expect(result).to_have_text("done: open Maps")
    act("close-app", "done: close", "close the foreground app")

    page.get_by_test_id("tab").fill("2")
    page.get_by_test_id("visit").click()
    expect(result).to_have_text(re.compile(r"^done: visit"))
    page.get_by_test_id("home-indicator").click()
    act("switch-tab", "done: switch-tab", "switch to tab 2")
    act("close-tab", "done: close-tab", "close tab 2")
    refused("close-tab", "no such tab is open")
    refused("switch-tab", "no such tab is open")

    act("authorize-revoke", "done: authorize revoke", "authorization revoked")
    act("authorize-approve", "done: authorize approve", "authorization approved")
    refused("authorize-approve", "changed nothing")
    act("authorize-deny", "done: authorize deny", "authorization denied")
    refused("authorize-deny", "changed nothing")
    page.get_by_test_id("authorize-approve").click()
    expect(result).to_have_text("done: authorize approve")

    offsets = lambda: [e["body"]["offsetMs"] for e in read_journal(live["journal"]) if e["topic"] == "device.clock-changed"]
    offset = (offsets() or [0])[-1]
    page.locator("#device-clock-setting").fill("+2h")
    act("set-clock", "done: set-clock +2h", "set the device clock forward 120 min")
    assert offsets()[-1] == offset + 7_200_000, offsets()[-2:]
    page.locator("#device-clock-setting").fill("tomorrow")
    refused("set-clock", "expected a signed duration")
    page.locator("#time-zone").fill(zone)
    act("set-time-zone", f"done: time-zone {zone}", f"change the time zone to {zone}")
    page.locator("#time-zone").fill("Mars/Olympus")
    refused("set-time-zone", "expected an IANA time zone name")

    page.get_by_test_id("app-choice").select_option("Habit Lock")
    act("force-quit", "done: force-quit Habit Lock", "force-quit Habit Lock")
    journal_until(live["journal"], lambda es: any(e["topic"] == "plugin.down" and "force-quit" in e["body"].get("reason", "") for e in es),
                  "the companion app's process ended by the force-quit")
    shot(page, "12-person-actions" if width == 1280 else f"12-person-actions-{width}")

    # The broker crashes and starts again on the same state: every plugin back, the Studio still following it.
    ups = sum(e["topic"] == "plugin.up" for e in read_journal(live["journal"]))
    act("crash-broker", "done: crash-broker", "the broker crashes and starts again")
    journal_until(live["journal"], lambda es: any(e["topic"] == "bus.started" and e["body"].get("after") == "crash" for e in es), "the crash")
    journal_until(live["journal"], lambda es: sum(e["topic"] == "plugin.up" for e in es) >= ups + len(PLUGINS),
                  "every plugin back after the crash", seconds=30)
    expect(page.locator("#bus li[data-topic='bus.started']").first).to_be_visible()

    # This session's journal, downloaded: what the broker journaled so far.
    with page.expect_download() as download:
        page.get_by_test_id("export-journal").click()
    lines = open(download.value.path()).read().splitlines()
    # The journal's whole lines now: the broker goes on journaling (the clock), so the download is a prefix of them,
    # holding at least the crash's restart the page showed before the click.
    written = open(live["journal"]).read().split("\n")[:-1]
    assert download.value.suggested_filename.endswith(".jsonl"), download.value.suggested_filename
    assert lines == written[:len(lines)], "the download is the journal as the broker wrote it, from its first line"
    events = [json.loads(line) for line in written]
    restart = max(i for i, e in enumerate(events) if e["topic"] == "bus.started" and e["body"].get("after") == "crash")
    assert len(lines) > restart, (len(lines), restart)
    page.close()
