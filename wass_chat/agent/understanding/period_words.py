"""Periods and counts in words: "last week" -> ``7d``, "in may" -> ``2026-05``, "top five" -> 5.

Periods come out in the forms :func:`wass_chat.agent.facts.accounting_periods.parse_period` accepts
(``7d``, ``24h``, ``2w``, ``YYYY-MM``, ``START..END`` with ISO dates, ``all``); relative ones
("yesterday", "this month", "in may" meaning the most recent May) are resolved against ``today``.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

NUMBER_WORDS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "twelve": 12,
    "twenty": 20,
    "a": 1,
    "an": 1,
    "a couple of": 2,
}
MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
COUNT = r"(\d+|one|two|three|four|five|six|seven|eight|nine|ten|twelve|twenty|an?)"


def find_count(text: str) -> int | None:
    """How many: ``top 3``, ``5 users``, ``k=4``, ``top five``."""
    lowered = text.lower()
    patterns = (
        r"\bk\s*=\s*(\d+)",
        r"\btop\s+" + COUNT + r"\b",
        r"\b"
        + COUNT
        + r"\s+(?:\w+\s+){0,2}(?:users?|waiters?|cases?|executions?|runs?|neighbou?rs?)\b",
    )
    for pattern in patterns:
        if match := re.search(pattern, lowered):
            return count_word(match.group(1)) or None
    return None


def count_word(word: str) -> int:
    return int(word) if word.isdigit() else NUMBER_WORDS.get(word.lower(), 0)


def find_period(text: str, today: date | None = None) -> str | None:
    """A period in :func:`~wass_chat.agent.facts.accounting_periods.parse_period`'s forms, or
    ``None``."""
    today = today or date.today()
    lowered = text.lower()
    if m := re.search(
        r"\b(\d{4}-\d{2}-\d{2})\s*(?:\.\.|to|until|-)\s*(\d{4}-\d{2}-\d{2})\b", lowered
    ):
        return f"{m.group(1)}..{m.group(2)}"
    if m := re.search(r"\b(?:since|from|after)\s+(\d{4}-\d{2}-\d{2})\b", lowered):
        return f"{m.group(1)}.."
    if m := re.search(r"(?<![\w-])(\d+)\s*([dhw])\b", lowered):
        return f"{m.group(1)}{m.group(2)}"
    if m := re.search(r"\b(\d{4})-(\d{2})\b(?!-)", lowered):
        return f"{m.group(1)}-{m.group(2)}"
    if re.search(r"\b(all[\s-]time|ever|overall|since the beginning|all history)\b", lowered):
        return "all"
    if re.search(r"\byesterday\b", lowered):
        return _days(today - timedelta(days=1), 1)
    if re.search(r"\btoday\b", lowered):
        return _days(today, 1)
    if m := re.search(
        r"\b(?:last|past|previous|over the last|in the last)\s+"
        + COUNT
        + r"\s+(minutes?|mins?|hours?|days?|weeks?|months?)\b",
        lowered,
    ):
        n, unit = count_word(m.group(1)), m.group(2)
        return f"{n * 30}d" if unit.startswith("month") else f"{n}{unit[0]}"
    if re.search(r"\b(?:last|past|previous)\s+hour\b", lowered):
        return "1h"
    if re.search(r"\b(?:last|past|previous)\s+(?:24\s*h(?:ours)?|day)\b", lowered):
        return "24h"
    if re.search(r"\b(?:last|past|previous)\s+(?:week|7 days)\b|\bweekly\b", lowered):
        return "7d"
    if re.search(r"\b(?:last|past|previous)\s+fortnight\b", lowered):
        return "2w"
    if re.search(r"\b(?:last|past|previous)\s+month\b", lowered):
        return "30d"
    if re.search(r"\b(?:last|past|previous)\s+year\b", lowered):
        return "365d"
    if re.search(r"\bthis\s+month\b", lowered):
        return f"{today.year}-{today.month:02d}"
    if re.search(r"\bthis\s+week\b", lowered):
        return _days(today - timedelta(days=today.weekday()), today.weekday() + 1)
    month = _month(lowered, today)
    return month


def _days(start: date, days: int) -> str:
    return f"{start.isoformat()}..{(start + timedelta(days=days)).isoformat()}"


def _month(lowered: str, today: date) -> str | None:
    """``in may`` (the most recent May), ``may 2024``, ``during oct``: a ``YYYY-MM`` period."""
    names = "|".join(f"{m[:3]}(?:{m[3:]})?" if len(m) > 3 else m for m in MONTHS)
    pattern = rf"\b(?:(in|during|for|of|since)\s+)?({names})\b(?:\s+(\d{{4}}))?"
    for m in re.finditer(pattern, lowered):
        word, year = m.group(2), m.group(3)
        if word == "may" and not m.group(1) and not year:
            continue  # "may I see ..." is not a month
        if not m.group(1) and not year and word not in MONTHS:
            continue
        number = next(i for i, name in enumerate(MONTHS, 1) if name.startswith(word[:3]))
        if year:
            return f"{year}-{number:02d}"
        y = today.year if number <= today.month else today.year - 1
        return f"{y}-{number:02d}"
    return None
