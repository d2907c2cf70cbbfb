"""What the Studio's browser tests share: where things are, the broker's journal, starting and stopping a Studio.

Needs SHIELDBUS (the built `shieldbus`) and, optionally, CHROMIUM (default /usr/bin/chromium); STUDIO_SCREENSHOTS=folder
writes a PNG of each step, STUDIO_SCALE=0.75 makes them smaller.
"""
import json
import os
import re
import signal
import subprocess
import threading
import time

import pytest
from playwright.sync_api import expect as playwright_expect

# Deadlines, not sleeps: every expectation polls until it holds or 20 s pass (a loaded 2-core CI machine needs more
# than Playwright's default 5 s for a broker round trip through six plugin processes).
DEADLINE_MS = 20_000
# Playwright polls an expectation ever less often, every 500 ms once it has waited 270 ms, unless its timeout is under
# 2.5 s: an answer that comes after 300 ms is seen up to half a second late. The tests' expectations are asked in
# slices of 2 s up to their deadline, each slice polling every 100 ms at most.
SLICE_MS = 2_000


class _Sliced:
    """Playwright's assertions on a locator or page, each polled in slices up to its whole timeout (the deadline)."""

    def __init__(self, assertions):
        self._assertions = assertions

    @property
    def not_(self):
        return _Sliced(self._assertions.not_)

    def __getattr__(self, name):
        assertion = getattr(self._assertions, name)
        if not name.startswith(("to_", "not_to_")):
            return assertion

        def sliced(*args, timeout=None, **kwargs):
            deadline = time.monotonic() + (DEADLINE_MS if timeout is None else timeout) / 1000
            while True:
                left = (deadline - time.monotonic()) * 1000
                try:
                    return assertion(*args, timeout=max(1, min(SLICE_MS, left)), **kwargs)
                except AssertionError:
                    if left <= SLICE_MS:
                        raise
        return sliced


def expect(actual, message=None):
    return _Sliced(playwright_expect(actual, message))

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SHIELDBUS = os.environ.get("SHIELDBUS", os.path.join(ROOT, ".build", "debug", "shieldbus"))
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CONFIG = os.path.join(ROOT, "Config", "habit-lock.yml")
SCREENSHOTS = os.environ.get("STUDIO_SCREENSHOTS")
SCALE = float(os.environ.get("STUDIO_SCALE", "1"))  # pixels per CSS pixel of the screenshots (docs/images: 0.75)
PLUGINS = ["monitor", "shield", "action", "app", "reports", "notifier"]


def read_journal(path):
    with open(path) as journal:
        return [json.loads(line) for line in journal if line.strip()]


def last(events, topic):
    found = [e for e in events if e["topic"] == topic]
    assert found, f"no {topic} in the journal"
    return found[-1]


def journal_until(path, condition, what, seconds=15):
    """The broker's journal once `condition` holds for it (read again until a deadline)."""
    deadline = time.monotonic() + seconds
    while True:
        events = read_journal(path) if os.path.exists(path) else []
        if condition(events):
            return events
        assert time.monotonic() < deadline, f"the journal never showed {what}"
        time.sleep(0.05)  # poll the file with a deadline: the broker appends as it goes


def start_studio(arguments, config=CONFIG):
    """`shieldbus studio --port 0 …`, and the address it prints once it listens."""
    studio = subprocess.Popen([SHIELDBUS, "studio", "--port", "0", "--config", config] + arguments,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # What it says on standard error is read as it comes (a full pipe would stop it), kept in `studio.said`.
    studio.said = []

    def listen():
        for said in studio.stderr:
            studio.said.append(said)
    threading.Thread(target=listen, daemon=True).start()
    line = studio.stdout.readline()
    match = re.search(r"http://127\.0\.0\.1:\d+", line)
    if not match:
        studio.kill()
        studio.wait()
        pytest.fail(f"the Studio did not start: {line!r} {''.join(studio.said)}")
    return studio, match.group(0)


def stop(process):
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def assert_fits(page, what):
    """No sideways scroll: the page is no wider than its window."""
    widths = page.evaluate("() => [document.scrollingElement.scrollWidth, innerWidth]")
    assert widths[0] <= widths[1], f"no sideways scroll {what}: {widths}"


def shot(page, name):
    if SCREENSHOTS:
        os.makedirs(SCREENSHOTS, exist_ok=True)
        page.screenshot(path=os.path.join(SCREENSHOTS, f"{name}.png"))


def live_configuration(folder):
    """The habit-lock configuration for a broker on the real clock: its notifier's reminder without quiet hours (the
    test runs at any hour) and with a deep-link route, so that a tap in the Studio opens the app on that route."""
    text = open(CONFIG).read()
    edits = [
        (re.compile(r"^scenario: .*\n", re.M), ""),
        (re.compile(r"^name: habit-lock$", re.M), f"name: habit-lock\ncatalog: {os.path.join(ROOT, 'Config', 'catalog.yml')}"),
        (re.compile(r"^( +)quietHours: .*\n", re.M), r"\1routes: {habits: 'habitlock://habits'}\n"),
        (re.compile(r"^( +)interruptionLevel: passive$", re.M), r"\1interruptionLevel: passive\n\1route: habits"),
    ]
    for pattern, replacement in edits:
        text, count = pattern.subn(replacement, text)
        assert count == 1, f"{CONFIG} no longer has {pattern.pattern!r}: update live_configuration"
    path = os.path.join(folder, "habit-lock-live.yml")
    with open(path, "w") as file:
        file.write(text)
    return path


def send(live, topic, body):
    """An event on the live broker's bus from a tool (`shieldbus send`), once it is sequenced."""
    subprocess.run([SHIELDBUS, "send", "--runtime-dir", live["runtime"], topic, json.dumps(body)], check=True,
                   stdout=subprocess.DEVNULL, timeout=30)


def steer_clock(page, journal, button, fill=None):
    """Clicks a control of the clock bar (a test id, or a speed: "600"), after filling the jump field, and waits for its
    answer and its `clock.changed` in the journal at `journal`; returns that event."""
    def changes():
        return [e for e in read_journal(journal) if e["topic"] == "clock.changed"]
    before = len(changes())
    if fill is not None:
        page.get_by_test_id("jump-to").fill(fill)
    if button.isdigit():
        page.locator(f"#clockbar [data-speed='{button}']").click()
    else:
        page.get_by_test_id(button).click()
    expect(page.get_by_test_id("clock-result")).to_have_text(re.compile(r": done$"))
    told = journal_until(journal, lambda events: sum(e["topic"] == "clock.changed" for e in events) > before, "the control journaled")
    return [e for e in told if e["topic"] == "clock.changed"][-1]


def page_seqs(page):
    """The seqs of the bus lines on the page, top (newest) first."""
    return [int(seq) for seq in page.locator("#bus li").evaluate_all("rows => rows.map(row => row.dataset.seq)")]


ENVELOPE_START = re.compile(rb'^\{"v":1,"seq":(\d+),"time":(-?\d+),')


def repeat_journal(base, path, count):
    """`count` events: `base`'s lines again and again, each copy's seqs after the last one's and its times an hour
    after the last one's end (bus time never runs backwards); returns each event's (seq, time)."""
    data = open(base, "rb").read()
    # The live broker may be writing a line: only whole ones are taken.
    lines = [line for line in data[:data.rindex(b"\n")].split(b"\n") if line.strip()]
    parsed = [ENVELOPE_START.match(line) for line in lines]
    assert all(parsed), "the broker writes each envelope starting with its version, seq and time"
    first_seq, first_time = int(parsed[0].group(1)), int(parsed[0].group(2))
    span_seq = int(parsed[-1].group(1)) - first_seq + 1
    span_time = int(parsed[-1].group(2)) - first_time + 3_600_000
    places = []
    with open(path, "wb") as out:
        copy = 0
        while len(places) < count:
            chunk = []
            for line, match in zip(lines, parsed):
                if len(places) == count:
                    break
                seq = int(match.group(1)) + copy * span_seq
                at = int(match.group(2)) + copy * span_time
                chunk.append(b'{"v":1,"seq":%d,"time":%d,' % (seq, at) + line[match.end():])
                places.append((seq, at))
            out.write(b"\n".join(chunk) + b"\n")
            copy += 1
    return places


def dated_journal(path, days, count, keys_per_day):
    """`count` events over `days` days from 2026-01-01 (a month's journal or a year's, as large): each day the app
    writes `keys_per_day` App-Group keys of that day's own (`habits.2026-01-01`, `tally1.2026-01-01`…: a key no later
    day writes again, as the reference apps keep one per day) and the unlock flag once; a tool's probes fill the rest."""
    start = 1_767_225_600_000  # 2026-01-01T00:00Z
    per_day = count // days
    assert per_day > keys_per_day + 1, "room in each day for its keys"
    seq = 0
    with open(path, "w") as out:
        for day in range(days):
            date = time.strftime("%Y-%m-%d", time.gmtime((start + day * 86_400_000) / 1000))
            names = [f"habits.{date}"] + [f"tally{k}.{date}" for k in range(1, keys_per_day)] + ["isCurrentlyUnlocked"]
            for n in range(per_day if day < days - 1 else count - seq):
                seq += 1
                at = start + day * 86_400_000 + 6 * 3_600_000 + n * (16 * 3_600_000 // per_day)
                if n < len(names):
                    topic, source = "state.changed", "app"
                    body = {"group": "group.dev.shieldbus.habitlock", "key": names[n], "removed": False, "version": day + 1 if n == len(names) - 1 else 1,
                            "writer": "app"}
                else:
                    topic, source, body = "app.year-probe", "greeter", {"n": n}
                out.write(json.dumps({"v": 1, "seq": seq, "time": at, "topic": topic, "source": source, "body": body}, separators=(",", ":")) + "\n")


def server_memory_kb(process):
    with open(f"/proc/{process.pid}/status") as status:
        return int(re.search(r"VmRSS:\s+(\d+) kB", status.read()).group(1))
