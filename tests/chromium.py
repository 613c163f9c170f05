"""Headless Chromium for report tests (tests/analytics and the real-cluster audit in tests/slurm).

Debian's ``chromium`` with the flags ../shared/ENVIRONMENT.md lists: ``--dump-dom`` gives the DOM
after scripts ran (Plotly drew its SVG), ``--screenshot`` a PNG; ``--enable-logging=stderr``
puts the page's console messages on stderr, where :func:`console_messages` finds them.

:func:`render_pages` reads several pages in one browser over the DevTools pipe instead: each at
a window width, as a person would see it (headers, visible text, the page's width), with its
DOM, a screenshot and its console messages.
"""

from __future__ import annotations

import base64
import io
import re
import shutil
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tests.support import require
from wass_chat.report.draw_time import HEADLESS_FLAGS, headless_chromium

CHROMIUM_FLAGS = (
    *HEADLESS_FLAGS,
    "--enable-logging=stderr",
    "--v=0",
    "--virtual-time-budget=8000",
    "--window-size=1280,6000",
)


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def require_chromium() -> str:
    """The Chromium executable; skips locally, fails in CI, when it is absent."""
    found = chromium()
    require(found is not None, "headless Chromium (Debian's chromium) not installed")
    assert found is not None
    return found


def run_chromium(
    binary: str, page: Path, profile: Path, *action: str
) -> subprocess.CompletedProcess[str]:
    argv = [binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *action, page.as_uri()]
    return subprocess.run(argv, capture_output=True, text=True, timeout=180, check=True)


def console_messages(stderr: str) -> list[str]:
    """Lines Chromium logs for the page's console (errors, uncaught exceptions, warnings)."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


def assert_rendered(dom: str, section_ids: Iterable[str], chart_ids: Iterable[str]) -> None:
    """Every section is in the DOM and every chart's figure holds a Plotly SVG with a trace."""
    for section_id in section_ids:
        assert f'id="{section_id}"' in dom, f"section {section_id} missing"
    for chart_id in chart_ids:
        start = dom.index(f'id="{chart_id}"')
        following = dom[start : dom.find("</figure>", start)]
        assert 'class="main-svg"' in following, f"{chart_id} has no plotly svg"
        assert re.search(r'class="(trace|scatterlayer|barlayer)', following), (
            f"{chart_id} drew no trace"
        )


def assert_not_blank(screenshot: Path | bytes) -> None:
    """The PNG is tall, varied (a blank page has ~0 variance) and inked over many rows."""
    from PIL import Image

    source = io.BytesIO(screenshot) if isinstance(screenshot, bytes) else screenshot
    pixels = np.asarray(Image.open(source).convert("L"), dtype=float)
    assert pixels.shape[0] >= 1000
    assert pixels.std() > 10
    rows_with_ink = (pixels < 200).any(axis=1).mean()
    assert rows_with_ink > 0.2


PAGE_PROBE = r"""(() => {
  // Text a reader sees, outside the charts' SVG, code samples and the Methods' definitions.
  const skipped = ".plot, svg, code, script, style, #methods";
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const text = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const words = node.textContent.trim();
    if (words && !node.parentElement.closest(skipped)) text.push(words);
  }
  const sections = {};
  for (const section of document.querySelectorAll("section")) {
    const title = section.querySelector("h2");
    sections[section.id] = section.innerText.trim().length - (title ? title.innerText.length : 0);
  }
  return {
    // textContent, not innerText: a header in a folded <details> reads '' until it is opened.
    headers: [...document.querySelectorAll("th")].map((th) => th.textContent.trim()),
    text: text.join("\n"),
    sections: sections,
    nav: [...document.querySelectorAll("nav a")].map((a) => a.getAttribute("href").slice(1)),
    pageWidth: Math.max(document.documentElement.scrollWidth, document.body.scrollWidth),
    viewportWidth: window.innerWidth,
  };
})()"""
CONSOLE_EVENTS = ("Runtime.consoleAPICalled", "Runtime.exceptionThrown", "Log.entryAdded")


@dataclass(frozen=True)
class RenderedPage:
    """A report page as headless Chromium showed it at one window width."""

    page: Path
    width: int
    seen: dict[str, Any]
    """:data:`PAGE_PROBE`'s answer: headers, text, sections, nav, pageWidth, viewportWidth."""
    dom: str
    screenshot: bytes
    console: list[str]


def render_pages(
    binary: str, pages: Sequence[tuple[Path, int]], shot_height: int = 3000
) -> list[RenderedPage]:
    """Each (page, window width) in turn, in one Chromium: drawn, read, photographed."""
    out = []
    with headless_chromium(binary) as browser:
        for page, width in pages:
            session = browser.open(page, width, 900)
            browser.call("Log.enable", session)
            browser.wait_drawn(session, 120)
            shot = browser.call(
                "Page.captureScreenshot",
                session,
                format="png",
                captureBeyondViewport=True,
                clip={"x": 0, "y": 0, "width": width, "height": shot_height, "scale": 1},
            )
            out.append(
                RenderedPage(
                    page,
                    width,
                    browser.evaluate(session, PAGE_PROBE),
                    browser.evaluate(session, "document.documentElement.outerHTML"),
                    base64.b64decode(shot["data"]),
                    [
                        str(e["params"])
                        for e in browser.events
                        if e.get("sessionId") == session and e["method"] in CONSOLE_EVENTS
                    ],
                )
            )
    return out
