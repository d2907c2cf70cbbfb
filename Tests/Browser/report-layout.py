#!/usr/bin/env python3
"""report-layout.py: lays out a report page in headless Chromium at a given width, light or dark, and measures it
(JSON on standard output) or takes its screenshot.

Measuring needs only Debian's chromium: headless Chromium keeps windows at least 500 px wide, so the page is shown in
an iframe of exactly the asked width (its own viewport: media queries and prefers-color-scheme apply to it), and
measured from the frame around it. A screenshot is taken with Playwright (`make deps`) driving the same chromium, whose
viewport can be exactly the asked width, so the PNG is the page and nothing beside it.

  report-layout.py measure report.html --width 390 --dark
  report-layout.py screenshot report.html --width 1280 --out report-1280-light.png
"""
import argparse
import html
import json
import os
import re
import subprocess
import sys
import tempfile

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")

# Runs in the frame around the page once everything has loaded; writes its measurements into the DOM.
MEASURE = """
<script>
window.addEventListener('load', () => {
  const doc = document.getElementById('page').contentDocument, view = doc.defaultView;
  const width = doc.documentElement.clientWidth;
  const describe = (el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
    ((el.getAttribute('class') || '') ? '.' + el.getAttribute('class').trim().split(/\\s+/).join('.') : '');
  const overflowing = [];
  for (const el of doc.body.querySelectorAll('*')) {
    const box = el.getBoundingClientRect();
    if (box.width === 0 && box.height === 0) continue;
    if (box.right > width + 0.5 || box.left < -0.5) {
      overflowing.push(describe(el) + ' spans ' + Math.round(box.left) + '..' + Math.round(box.right));
    }
  }
  // The smallest label of the visible heatmaps, as drawn.
  let smallestHeatmapLabel = null;
  for (const text of doc.querySelectorAll('svg.heatmap text, svg.calendar text')) {
    const box = text.getBoundingClientRect();
    if (box.height > 0 && (smallestHeatmapLabel === null || box.height < smallestHeatmapLabel)) smallestHeatmapLabel = box.height;
  }
  const visible = (selector) => [...doc.querySelectorAll(selector)].filter(el => el.getBoundingClientRect().width > 0).length;
  document.getElementById('measure').textContent = JSON.stringify({
    width, scrollWidth: doc.documentElement.scrollWidth, height: Math.ceil(doc.body.getBoundingClientRect().bottom),
    dark: view.matchMedia('(prefers-color-scheme: dark)').matches,
    background: view.getComputedStyle(doc.body).backgroundColor,
    overflowing, smallestHeatmapLabel,
    visibleHeatmaps: visible('svg.heatmap:not(.compact)'), visibleCompactHeatmaps: visible('svg.heatmap.compact'),
  });
});
</script>
"""


def frame(page, width, height):
    source = open(page, encoding="utf-8").read()
    return ("<!DOCTYPE html><html><head><meta charset=\"utf-8\"/></head><body style=\"margin:0\">"
            f"<iframe id=\"page\" style=\"display:block;width:{width}px;height:{height}px;border:0\" "
            f"srcdoc=\"{html.escape(source, quote=True)}\"></iframe><pre id=\"measure\"></pre>"
            + MEASURE + "</body></html>")


def chromium(arguments, folder):
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
               f"--user-data-dir={folder}/profile"] + arguments
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        sys.exit(f"chromium failed ({result.returncode}): {result.stderr[-2000:]}")
    return result.stdout


def measure(page, width, dark, folder):
    wrapper = os.path.join(folder, "measure.html")
    with open(wrapper, "w", encoding="utf-8") as out:
        out.write(frame(page, width, 8000))
    dom = chromium([f"--window-size={max(width, 500) + 20},900", "--dump-dom"] + (["--force-dark-mode"] if dark else [])
                   + ["file://" + os.path.abspath(wrapper)], folder)
    found = re.search(r'<pre id="measure">(.*?)</pre>', dom, re.S)
    if not found or not found.group(1):
        sys.exit("the page was not measured (no measurements in the DOM)")
    return json.loads(html.unescape(found.group(1)))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["measure", "screenshot"])
    parser.add_argument("page", help="the report's HTML file")
    parser.add_argument("--width", type=int, required=True, help="the page's width in CSS pixels")
    parser.add_argument("--dark", action="store_true", help="prefers-color-scheme: dark")
    parser.add_argument("--out", help="the PNG to write (screenshot)")
    options = parser.parse_args()
    if options.mode == "screenshot":
        if not options.out:
            sys.exit("screenshot needs --out FILE")
        screenshot(options.page, options.width, options.dark, options.out)
        return
    with tempfile.TemporaryDirectory(prefix="report-layout") as folder:
        print(json.dumps(measure(options.page, options.width, options.dark, folder)))


def screenshot(page, width, dark, out):
    from playwright.sync_api import sync_playwright
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        tab = browser.new_page(viewport={"width": width, "height": 800}, color_scheme="dark" if dark else "light")
        tab.goto("file://" + os.path.abspath(page))
        tab.screenshot(path=out, full_page=True)
        browser.close()


if __name__ == "__main__":
    main()
