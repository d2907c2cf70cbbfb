"""The Studio's clock bar on the live broker the browser tests share, at a phone's width and a laptop's: pause, a
speed, a jump, a step and resume, each through the real broker (journaled as `clock.changed`, shown at once), and a
jump back refused in words. Run after the page's tests: it leaves the shared broker's clock moved on (scaled, running).
"""
import re

import pytest

from studio_support import expect, SCALE, read_journal, shot, steer_clock


def changes(live):
    return [e for e in read_journal(live["journal"]) if e["topic"] == "clock.changed"]


def control(page, live, button, fill=None):
    return steer_clock(page, live["journal"], button, fill)


@pytest.mark.parametrize("width,height", [(390, 844), (1280, 800)])
def test_the_clock_bar_steers_the_bus_clock(browser, live, width, height):
    page = browser.new_page(viewport={"width": width, "height": height}, device_scale_factor=SCALE)
    page.goto(live["address"])
    expect(page.get_by_test_id("connection")).to_have_class(re.compile(r"\bup\b"))
    clock = page.get_by_test_id("bus-clock")
    expect(clock).to_have_attribute("data-paused", "false")
    # Every control within reach (trial: Playwright's check that it is visible and nothing covers it); pause first.
    page.get_by_test_id("clock-pause").click(trial=True, timeout=5000)
    for button in ["clock-step", "clock-jump"]:
        page.get_by_test_id(button).click(trial=True, timeout=5000)
    expect(page.get_by_test_id("jump-to")).to_be_visible()
    overflow = page.evaluate("() => [document.scrollingElement.scrollWidth, innerWidth]")
    assert overflow[0] <= overflow[1], f"no sideways scroll at {width} px with the clock bar: {overflow}"

    paused = control(page, live, "clock-pause")
    assert paused["body"]["paused"] and paused["body"]["by"].startswith("clock-"), paused
    expect(clock).to_have_attribute("data-paused", "true")
    expect(clock).to_contain_text("paused")
    expect(page.get_by_test_id("clock-pause")).to_be_disabled()
    standing = clock.text_content()

    # Each speed the bar offers, lit once the broker has it.
    for speed in ("10", "60"):
        changed = control(page, live, speed)
        assert changed["body"]["speed"] == int(speed), changed
        expect(page.locator(f"#clockbar [data-speed='{speed}']")).to_have_class(re.compile(r"\bon\b"))
    fast = control(page, live, "600")
    assert fast["body"]["speed"] == 600 and fast["body"]["clock"] == "scaled", fast
    expect(clock).to_have_attribute("data-rate", "600")
    expect(page.locator("#clockbar [data-speed='600']")).to_have_class(re.compile(r"\bon\b"))
    assert clock.text_content().split("  ")[0] == standing.split("  ")[0], "a speed does not start a paused clock"

    jumped = control(page, live, "clock-jump", fill="+30m")
    assert jumped["time"] - jumped["body"]["from"] == 30 * 60_000 and jumped["body"]["paused"], jumped
    jumps = sum(e["body"]["action"] == "jump" for e in changes(live))
    expect(page.locator("#timeline span.clock", has_text="jump 30m forward")).to_have_count(jumps)
    expect(clock).not_to_have_text(standing)
    shot(page, f"10-clock-jumped-{width}")

    stepped = control(page, live, "clock-step")
    assert stepped["time"] >= jumped["time"] and stepped["body"]["paused"], stepped

    # Back in time: refused in words, and nothing journaled.
    before = len(changes(live))
    page.get_by_test_id("jump-to").fill("2020-01-01T00:00")
    page.get_by_test_id("clock-jump").click()
    expect(page.get_by_test_id("clock-result")).to_have_text(re.compile("never runs backwards"))
    expect(page.get_by_test_id("clock-result")).to_have_class(re.compile(r"\berror\b"))
    assert len(changes(live)) == before

    control(page, live, "clock-resume")
    expect(clock).to_have_attribute("data-paused", "false")
    expect(clock).to_contain_text("running")
    control(page, live, "1")
    expect(clock).to_have_attribute("data-rate", "1")
    page.close()
