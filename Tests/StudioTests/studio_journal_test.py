"""The timeline of a recorded journal — the journal of the live broker the browser tests share, replayed when they are
done with it: its loading progress, markers for shields, blocks, unlocks, errors and clock controls, the next and
previous of each, moving by time, zoom, a request linked to its reply by `corr`, and the person's actions saved as a
scenario that replays. Checked against the journal itself.
"""
import math
import os
import re
import subprocess
import time

import pytest

from studio_support import expect, SCALE, SHIELDBUS, read_journal, shot, start_studio, stop


@pytest.fixture(scope="module")
def replay(live):
    events = read_journal(live["journal"])
    studio, address = start_studio(["--journal", live["journal"]])
    yield {"address": address, "events": events}
    stop(studio)


def marked(events):
    """Where the Studio's markers must be, by the journal's own topics (`Timeline.kind`'s rules)."""
    def shields_something(e):
        shield = e["body"].get("shield") or {}
        categories = shield.get("applicationCategories") or {}
        return bool(shield.get("applications") or shield.get("webDomains") or categories.get("categories") or categories.get("policy") == "all")
    return {
        "SHIELD": [i for i, e in enumerate(events) if e["topic"] == "shield.shown"],
        "BLOCK": [i for i, e in enumerate(events) if e["topic"] == "managedsettings.changed" and shields_something(e)],
        "UNBLOCK": [i for i, e in enumerate(events) if e["topic"] == "managedsettings.changed" and not shields_something(e)],
        "ERROR": [i for i, e in enumerate(events) if e["topic"] == "bus.error"],
        "clock": [i for i, e in enumerate(events) if e["topic"] == "clock.changed"],
    }


@pytest.mark.parametrize("width,height", [(390, 844), (1280, 800)])
def test_the_journals_timeline(browser, replay, width, height):
    events = replay["events"]
    marks = marked(events)
    assert all(marks[kind] for kind in ["SHIELD", "BLOCK", "ERROR", "clock"]), {k: len(v) for k, v in marks.items()}
    page = browser.new_page(viewport={"width": width, "height": height}, device_scale_factor=SCALE)
    page.goto(replay["address"])
    expect(page.get_by_test_id("loading")).to_have_attribute("data-loaded", "true")
    expect(page.get_by_test_id("loading")).to_have_text(f"{len(events):,} events")
    markers = page.get_by_test_id("markers")
    for kind, indices in marks.items():
        expect(markers).to_have_attribute(f"data-{kind.lower()}", str(len(indices)))
    overflow = page.evaluate("() => [document.scrollingElement.scrollWidth, innerWidth]")
    assert overflow[0] <= overflow[1], f"no sideways scroll at {width} px with the timeline's controls: {overflow}"

    instant = page.get_by_test_id("instant")
    page.get_by_test_id("slider").fill("0")
    for index in marks["SHIELD"][:2]:
        page.get_by_test_id("next-shield").click()
        expect(instant).to_contain_text(f"#{events[index]['seq']} ")
    expect(page.get_by_test_id("shield-title")).to_have_text(events[marks["SHIELD"][1]]["body"]["configuration"]["title"]["text"])
    page.locator("#scrubber [data-seek='SHIELD'][data-step='-1']").click()
    expect(instant).to_contain_text(f"#{events[marks['SHIELD'][0]]['seq']} ")
    error_at = next(i for i in marks["ERROR"] if i > marks["SHIELD"][0])
    page.get_by_test_id("next-error").click()
    expect(instant).to_contain_text(f"#{events[error_at]['seq']} ")
    page.get_by_test_id("slider").fill("0")
    page.get_by_test_id("next-clock").click()
    expect(instant).to_contain_text(f"#{events[marks['clock'][0]]['seq']} ")
    shot(page, f"13-journal-timeline-{width}")

    # By time: an hour on from the first shield is the last event at or before that instant.
    page.get_by_test_id("slider").fill(str(marks["SHIELD"][0] + 1))
    page.get_by_test_id("seek-time").fill("+1h")
    page.get_by_test_id("seek").click()
    target = events[marks["SHIELD"][0]]["time"] + 3_600_000
    last_before = max(i for i, e in enumerate(events) if e["time"] <= target)
    expect(instant).to_contain_text(f"#{events[last_before]['seq']} ")
    page.get_by_test_id("seek-time").fill("soon")
    page.get_by_test_id("seek").click()
    expect(page.get_by_test_id("seek-note")).to_have_text("go to +1h, -10m, +90s or 07:30")

    # A request and its reply, linked by corr: the last clock control's, shown just after its reply.
    request = [e for e in events if e["topic"] == "clock.control.request"][-1]
    reply = next(e for e in events if e["topic"] == "clock.control.reply" and e.get("corr") == request["corr"])
    page.get_by_test_id("slider").fill(str(events.index(reply) + 1))
    page.locator(f"#bus li[data-seq='{request['seq']}']").click()
    expect(page.locator(f"#bus li[data-seq='{reply['seq']}']")).to_have_class(re.compile(r"\blinked\b"))
    expect(page.locator("#bus li.linked")).to_have_count(2)

    # Zoom: + (the button, then the key) halves the stretch the slider and the markers cover, around the instant shown;
    # − doubles it; 0 is the whole journal again; in a text field the keys are only typed.
    total, at = len(events), marks["SHIELD"][0] + 1
    page.get_by_test_id("slider").fill(str(at))
    expect(instant).to_contain_text(f"#{events[marks['SHIELD'][0]]['seq']} ")
    slider, markers_view = page.get_by_test_id("slider"), page.get_by_test_id("markers")

    def expect_stretch(span):
        low = max(0, min(total - span, at - js_round(span / 2)))
        expect(slider).to_have_attribute("min", str(low))
        expect(slider).to_have_attribute("max", str(low + span))
        expect(markers_view).to_have_attribute("data-from", str(low))
        expect(markers_view).to_have_attribute("data-to", str(low + span))
        expect(page.get_by_test_id("zoom-level")).to_have_text("whole journal" if span == total else re.compile(rf"^events {low + 1:,}–{low + span:,} "))

    half = max(20, js_round(total / 2))
    page.get_by_test_id("zoom-in").click()
    expect_stretch(half)
    slider.focus()
    page.keyboard.press("+")
    quarter = max(20, js_round(half / 2))
    expect_stretch(quarter)
    expect(instant).to_contain_text(f"#{events[marks['SHIELD'][0]]['seq']} ")
    shot(page, f"14-journal-zoomed-{width}")
    page.get_by_test_id("seek-time").focus()
    page.keyboard.press("-")
    expect_stretch(quarter)
    page.get_by_test_id("zoom-out").click()
    expect_stretch(min(total, quarter * 2))
    slider.focus()
    page.keyboard.press("0")
    expect_stretch(total)
    expect(page.get_by_test_id("zoom-out")).to_be_disabled()
    page.close()


def test_playback_goes_event_by_event_pauses_and_stops_at_the_end(browser, replay):
    """▶ plays the journal event by event — every event in turn, none skipped, however long the quiet between them —
    ❚❚ pauses it where it got to, and at the journal's end it stops by itself."""
    events = replay["events"]
    page = browser.new_page(viewport={"width": 1280, "height": 800}, device_scale_factor=SCALE)
    page.goto(replay["address"])
    expect(page.get_by_test_id("loading")).to_have_attribute("data-loaded", "true")
    instant, play = page.get_by_test_id("instant"), page.locator("#play")
    page.get_by_test_id("slider").fill("0")
    expect(instant).to_have_text("before the first event")
    # Every instant the page shows while it plays, in order.
    page.evaluate("""() => { window.shownInstants = [];
        new MutationObserver(() => window.shownInstants.push(document.getElementById("instant").textContent))
          .observe(document.getElementById("instant"), { childList: true, characterData: true, subtree: true }); }""")
    play.click()
    expect(play).to_have_text("❚❚")
    # Once the sixth has been drawn (seen by the observer: a poll of the text could miss an instant played by).
    page.wait_for_function("seq => window.shownInstants.some((text) => text.includes(`#${seq} `))", arg=events[5]["seq"], timeout=20_000)
    play.click()
    expect(play).to_have_text("▶")
    # A step already taken when ❚❚ was pressed is drawn once its events arrive; nothing after it moves.
    page.wait_for_function("() => journal.shown.count === studio.index")
    paused_at = instant.text_content()
    shown = [int(re.search(r"#(\d+) ", text).group(1)) for text in page.evaluate("() => window.shownInstants") if "#" in text]
    assert shown == [e["seq"] for e in events[:len(shown)]], f"each event in turn from the first: {shown}"
    assert len(shown) >= 6, shown
    assert page.evaluate("() => playing === null"), "paused: nothing moves the slider on"
    assert instant.text_content() == paused_at

    page.get_by_test_id("slider").fill(str(len(events) - 3))
    play.click()
    expect(instant).to_contain_text(f"#{events[-1]['seq']} ")
    expect(play).to_have_text("▶")
    shot(page, "16-journal-played-to-its-end")
    page.close()


def js_round(x):
    """Math.round: halves up."""
    return math.floor(x + 0.5)


def test_a_journal_opened_at_an_event(browser, live):
    """`shieldbus studio --journal FILE --at SEQ` (what `shieldbus check` prints for a violation) opens just after it —
    also when the page's last script comes late. (The page once opened its WebSocket before that script had run: a
    journal's hello then met an undefined `startJournal`, and the page never opened at the event. It happened only when
    the server, loaded, sent the hello before the script.)"""
    events = read_journal(live["journal"])
    seq = next(e for e in events if e["topic"] == "shield.shown")["seq"]
    studio, address = start_studio(["--journal", live["journal"], "--at", str(seq)])
    try:
        page = browser.new_page(viewport={"width": 1280, "height": 800}, device_scale_factor=SCALE)
        sockets, held = [], []
        page.on("websocket", lambda socket: sockets.append(socket))
        page.route(re.compile(r".*/studio-journal\.js$"), lambda route: held.append(route))
        page.goto(address, wait_until="commit")
        # studio-journal.js held back for two seconds (a slow network): no feed is opened without it.
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline or not held:
            assert time.monotonic() < deadline + 20, "the page asked for studio-journal.js"
            page.wait_for_timeout(50)
        assert not sockets, "the page opened its feed before all its scripts had run"
        held[0].continue_()
        expect(page.get_by_test_id("seek-note")).to_have_text(f"opened at #{seq}")
        expect(page.get_by_test_id("instant")).to_contain_text(f"#{seq} ")
        expect(page.get_by_test_id("shield")).to_be_visible()
        page.close()
    finally:
        stop(studio)


def test_the_persons_actions_saved_as_a_scenario_replay_to_the_same_state(browser, replay, live, tmp_path):
    """*Save as scenario* at the first unlock of the live tests' journal: `shieldbus run --scenario` with the file plays
    the person's steps the live broker journaled up to there, in order, and ends with each store shielding what it
    shielded there."""
    events = replay["events"]
    unlock = marked(events)["UNBLOCK"][0]
    page = browser.new_page(viewport={"width": 1280, "height": 800}, device_scale_factor=SCALE)
    page.goto(replay["address"])
    expect(page.get_by_test_id("loading")).to_have_attribute("data-loaded", "true")
    page.get_by_test_id("slider").fill(str(unlock + 1))
    expect(page.get_by_test_id("instant")).to_contain_text(f"#{events[unlock]['seq']} ")
    with page.expect_download() as download:
        page.get_by_test_id("save-scenario").click()
    saved = str(tmp_path / "saved.yml")
    download.value.save_as(saved)
    expect(page.get_by_test_id("action-result")).to_have_text(f"saved shieldbus-scenario-{events[unlock]['seq']}.yml")
    page.close()

    journal = str(tmp_path / "replayed.jsonl")
    run = subprocess.run([SHIELDBUS, "run", "--config", os.path.join(live["folder"], "habit-lock-live.yml"), "--scenario", saved,
                          "--journal", journal, "--runtime-dir", str(tmp_path / "run"), "--state-dir", str(tmp_path / "state"), "--quiet"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, f"{open(saved).read()}\n{run.stderr}"
    replayed = read_journal(journal)
    steps = lambda es: [e["body"]["action"] for e in es if e["topic"] == "scenario.step"]
    assert steps(replayed) == steps(events[:unlock + 1]), open(saved).read()
    assert stores(replayed) == stores(events[:unlock + 1]), open(saved).read()


def stores(events):
    """What each ManagedSettings store shields last: how many apps, web domains and categories (tokens are a device's own)."""
    shields = {e["body"]["store"]: e["body"].get("shield") or {} for e in events if e["topic"] == "managedsettings.changed"}
    return {store: (len(shield.get("applications") or []), len(shield.get("webDomains") or []),
                    (shield.get("applicationCategories") or {}).get("policy"), len((shield.get("applicationCategories") or {}).get("categories") or []))
            for store, shield in shields.items()}
