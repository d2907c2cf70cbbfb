"""An explore failure opened in the Studio: `shieldbus explore` finds the naive habit lock's flaw (seed 17) and writes the
day; `shieldbus studio --scenario FILE` plays it and opens its journal at the violation, the checker's account beside
the phone — the same account explore gave, at the event `shieldbus check` names for the same journal.
"""
import json
import os
import re
import subprocess
import tempfile
import time

import pytest

from studio_support import expect, ROOT, SCALE, SHIELDBUS, shot, start_studio, stop

NAIVE = os.path.join(ROOT, "Config", "naive-habit-lock.yml")


@pytest.fixture(scope="module")
def failure():
    """The failure explore writes for seed 17 (not shrunk: the day as it failed, which costs the test no shrinking runs)."""
    folder = tempfile.mkdtemp(prefix="sb-studio-explore-")
    run = subprocess.run([SHIELDBUS, "explore", "--config", NAIVE, "--days", "1", "--seed", "17", "--profile", "faithful", "--jobs", "1",
                          "--shrink-runs", "0", "--json"], cwd=folder, capture_output=True, text=True, timeout=300)
    assert run.returncode == 3, f"explore finds the flaw: {run.stdout}{run.stderr}"
    found = next(json.loads(line)["failure"] for line in run.stdout.splitlines() if '"failure"' in line)
    studio, address = start_studio(["--scenario", os.path.join(folder, found["file"])], config=NAIVE)
    # Said before it listens; the thread reading it may not have it yet.
    deadline = time.monotonic() + 10
    while not any(line.startswith("played: its journal is ") for line in studio.said):
        assert time.monotonic() < deadline, f"the Studio names the journal it played: {studio.said}"
        time.sleep(0.05)
    journal = next(line for line in studio.said if line.startswith("played: ")).split(" is ", 1)[1].strip()
    check = subprocess.run([SHIELDBUS, "check", "--config", NAIVE, journal], capture_output=True, text=True, timeout=120)
    assert check.returncode == 3, check.stdout + check.stderr
    seqs = [int(seq) for seq in re.findall(r"--at (\d+)", check.stdout)]
    assert seqs, check.stdout
    yield {"address": address, "account": found["account"], "at": seqs}
    stop(studio)


@pytest.mark.parametrize("width,height", [(390, 844), (1280, 800)])
def test_an_explore_failure_opens_at_its_violation(browser, failure, width, height):
    page = browser.new_page(viewport={"width": width, "height": height}, device_scale_factor=SCALE)
    page.goto(failure["address"])
    first = failure["at"][0]
    expect(page.get_by_test_id("seek-note")).to_have_text(f"opened at #{first}: the checker's violation begins after it")
    expect(page.get_by_test_id("instant")).to_contain_text(f"#{first} ")
    checker = page.get_by_test_id("checker")
    expect(checker).to_be_visible()
    expect(page.get_by_test_id("verdict")).to_contain_text(["promise BROKEN"])
    # The checker's account is explore's: each violation's kind and what it says.
    violations = page.get_by_test_id("violation")
    expected = [line for line in failure["account"] if re.match(r"^[a-z-]+: ", line) and not line.startswith("last to write")]
    expect(violations).to_have_count(len(expected))
    for index, line in enumerate(expected):
        kind, description = line.split(": ", 1)
        expect(violations.nth(index).locator(".kind")).to_have_text(kind)
        expect(violations.nth(index).get_by_test_id("violation-description")).to_have_text(description)
    expect(violations.first).to_have_class(re.compile(r"\bhere\b"))
    expect(page.get_by_test_id("markers")).to_have_attribute("data-violation", str(len(set(failure["at"]))))

    overflow = page.evaluate("() => [document.scrollingElement.scrollWidth, innerWidth]")
    assert overflow[0] <= overflow[1], f"no sideways scroll at {width} px with the checker's account: {overflow}"
    box = checker.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= width, f"the checker's account within the window: {box}"
    shot(page, f"15-explore-failure-{width}")

    # From the start, ›violation goes back to it; the account's button too.
    page.get_by_test_id("slider").fill("0")
    expect(violations.first).not_to_have_class(re.compile(r"\bhere\b"))
    page.get_by_test_id("next-violation").click()
    expect(page.get_by_test_id("instant")).to_contain_text(f"#{first} ")
    page.get_by_test_id("slider").fill("0")
    violations.first.get_by_test_id("violation-go").click()
    expect(page.get_by_test_id("instant")).to_contain_text(f"#{first} ")
    expect(violations.first).to_have_class(re.compile(r"\bhere\b"))
    page.close()
