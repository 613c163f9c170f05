"""How long a report page takes to draw in headless Chromium, on the real clock.

``--virtual-time-budget`` (what ``--dump-dom`` tests use) runs page clocks on virtual time, so
the page's own timings mean little there. This drives Chromium over the DevTools protocol on a
pipe (``--remote-debugging-pipe``: file descriptors 3 and 4, NUL-separated JSON), navigates to
the page, and polls until the page says every chart is drawn (the report's script stamps
``document.body.dataset.drawnMs``, or sets nothing when it has no charts: then the load event
counts). Times are wall-clock milliseconds from navigation, as ``performance.now()`` counts them.

The same session (:func:`headless_chromium`, :class:`DevTools`) lets the report tests read a
page as rendered (its headers, text and width at a given window size) and takes the
screenshots in docs/, in one browser for many pages.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

HEADLESS_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
"""Debian's Chromium, headless as root and quiet on a machine without internet (the tests use
the same set)."""
FLAGS = (*HEADLESS_FLAGS, "--remote-debugging-pipe")
_PROBE = "document.readyState === 'complete' && (document.body.dataset.drawnMs || "
_PROBE += "(document.getElementById('figures') ? '' : String(Math.round(performance.now()))))"


class DevTools:
    """One headless Chromium driven over its DevTools pipe (see :func:`headless_chromium`)."""

    def __init__(self, to_browser: int, from_browser: int) -> None:
        self.out, self.inp, self.next_id, self.buffer = to_browser, from_browser, 0, b""
        self.events: list[dict[str, Any]] = []
        """Events that arrived while a reply was awaited (console messages, exceptions...)."""

    def send(self, method: str, session: str | None = None, **params: Any) -> None:
        """Send a command without waiting for its reply."""
        self.next_id += 1
        message: dict[str, Any] = {"id": self.next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self.out, json.dumps(message).encode() + b"\0")

    def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        """Send a command and return its result (events arriving meanwhile are kept)."""
        self.send(method, session, **params)
        while True:
            reply = self._read()
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return dict(reply.get("result", {}))
            if "method" in reply:
                self.events.append(reply)

    def open(self, page: Path, width: int = 1280, height: int = 1000) -> str:
        """A new tab of ``width`` x ``height`` CSS pixels showing ``page``; its session id."""
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        session = str(
            self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        )
        self.call(
            "Emulation.setDeviceMetricsOverride",
            session,
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )
        self.call("Runtime.enable", session)  # console messages and exceptions become events
        self.call("Page.navigate", session, url=page.resolve().as_uri())
        return session

    def evaluate(self, session: str, expression: str) -> Any:
        """The value of a JavaScript expression in the tab (JSON-serialisable values)."""
        reply = self.call("Runtime.evaluate", session, expression=expression, returnByValue=True)
        return reply.get("result", {}).get("value")

    def wait_drawn(self, session: str, timeout_s: float = 120.0) -> float:
        """Milliseconds from navigation until the tab's report has drawn every chart."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            drawn = self.evaluate(session, _PROBE)
            if drawn:
                return float(drawn)
            time.sleep(0.05)
        raise RuntimeError(f"the page was not drawn within {timeout_s:.0f} s")

    def _read(self) -> dict[str, Any]:
        while b"\0" not in self.buffer:
            chunk = os.read(self.inp, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed the debugging pipe")
            self.buffer += chunk
        raw, self.buffer = self.buffer.split(b"\0", 1)
        return dict(json.loads(raw))


@contextmanager
def headless_chromium(binary: str, *flags: str) -> Iterator[DevTools]:
    """A fresh headless Chromium (own profile) for the ``with`` block, closed after it."""
    # Chromium reads commands on fd 3 and writes replies on fd 4: a POSIX shell moves our
    # stdin/stdout pipes there (the arguments pass through "$@", never parsed by the shell).
    redirect = 'exec "$@" 3<&0 4>&1 0</dev/null 1>/dev/null'
    with tempfile.TemporaryDirectory(prefix="wass-draw-") as profile:
        process = subprocess.Popen(
            ["sh", "-c", redirect, "sh", binary, *FLAGS, *flags, f"--user-data-dir={profile}"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert process.stdin is not None and process.stdout is not None
        closed = False
        try:
            browser = DevTools(process.stdin.fileno(), process.stdout.fileno())
            yield browser
            browser.send("Browser.close")
            closed = True
        finally:
            try:
                process.wait(timeout=10 if closed else 0.1)
            except subprocess.TimeoutExpired:
                process.kill()
            process.wait(timeout=30)
            process.stdin.close()
            process.stdout.close()


def draw_time_ms(binary: str, page: Path, timeout_s: float = 120.0) -> float:
    """Milliseconds from navigation until ``page`` has drawn every chart, in a fresh Chromium."""
    with headless_chromium(binary) as browser:
        return browser.wait_drawn(browser.open(page), timeout_s)
