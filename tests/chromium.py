"""Headless Chromium for report tests (tests/analytics and the real-cluster audit in tests/slurm).

Debian's ``chromium`` with the flags ../shared/ENVIRONMENT.md lists: ``--dump-dom`` gives the DOM
after scripts ran (Plotly drew its SVG), ``--screenshot`` a PNG; ``--enable-logging=stderr``
puts the page's console messages on stderr, where :func:`console_messages` finds them.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from tests.support import require
from wass_chat.report.draw_time import HEADLESS_FLAGS

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


def assert_not_blank(screenshot: Path) -> None:
    """The PNG is tall, varied (a blank page has ~0 variance) and inked over many rows."""
    from PIL import Image

    pixels = np.asarray(Image.open(screenshot).convert("L"), dtype=float)
    assert pixels.shape[0] >= 1000
    assert pixels.std() > 10
    rows_with_ink = (pixels < 200).any(axis=1).mean()
    assert rows_with_ink > 0.2
