"""Shared test helpers.

``require`` is how a test states that it needs a real component (SimGrid, Slurm, Chromium...).
On a developer's machine without it the test skips, saying why; under ``CI=true`` (where
``.ci/run`` installs everything as root) a missing component fails the test instead, so CI can
never pass by skipping.
"""

from __future__ import annotations

import os

import pytest

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def require(available: bool, reason: str) -> None:
    """Skip (locally) or fail (in CI) the calling test when ``available`` is false."""
    if available:
        return
    if IN_CI:
        pytest.fail(f"required in CI but unavailable: {reason}")
    pytest.skip(reason)
