"""The browser and the live broker the Studio's browser tests share (one of each for the whole session: a broker
with six plugin processes is slow to start on a loaded 2-core machine)."""
import os
import subprocess
import tempfile

import pytest
from playwright.sync_api import sync_playwright

from studio_support import CHROMIUM, SHIELDBUS, journal_until, live_configuration, start_studio, stop


@pytest.fixture(scope="session")
def browser():
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def live():
    """A Studio, then a broker on the habit-lock configuration (real clock, no scenario, journaled) for it to follow."""
    folder = tempfile.mkdtemp(prefix="sb-studio-")
    runtime, journal = os.path.join(folder, "run"), os.path.join(folder, "journal.jsonl")
    studio, address = start_studio(["--runtime-dir", runtime])
    broker = subprocess.Popen([SHIELDBUS, "run", "--config", live_configuration(folder), "--no-scenario", "--quiet", "--runtime-dir", runtime,
                               "--state-dir", os.path.join(folder, "state"), "--journal", journal],
                              stdout=subprocess.DEVNULL, stderr=open(os.path.join(folder, "broker.log"), "w"))
    journal_until(journal, lambda events: any(e["topic"] == "managedsettings.changed" for e in events), "the lock being set")
    yield {"address": address, "journal": journal, "folder": folder, "runtime": runtime}
    stop(studio)
    stop(broker)
