"""What "reads like a person's report" means, as checks shared by the page and Markdown tests."""

from __future__ import annotations

import re

NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)\.(\d+)(?!\.\d)(\s?%)?")
RAW_EMPTY = re.compile(r"\b(None|NaN|nan|null)\b")


def too_precise(text: str) -> list[str]:
    """Numbers written with more precision than their unit needs: a percentage with more than
    one decimal, any other number with a fraction and more than three significant digits
    (``242,077.6``, ``161.76``, ``91.46662444966434``; ``14.4``, ``0.35`` and ``48.6%`` pass)."""
    bad = []
    for match in NUMBER.finditer(text):
        whole, fraction, pct = match.groups()
        if pct:
            ok = len(fraction) <= 1
        else:
            ok = len((whole.replace(",", "") + fraction).lstrip("0")) <= 3
        if not ok:
            bad.append(match.group(0))
    return bad


def raw_empties(text: str) -> list[str]:
    """``None``, ``NaN`` or ``null`` written where a value was missing."""
    return RAW_EMPTY.findall(text)
