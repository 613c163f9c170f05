"""The periods a question about the accounting names (``7d``, ``2024-05``, ``START..END``,
``all``): read into datetimes, said in words, and the sacct cache refreshed for them. Shared by
the cluster's facts (:mod:`wass_chat.agent.facts.cluster_tools`) and the what-ifs
(:mod:`wass_chat.agent.facts.workload_tools`)."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from sim.errors import InputError


def refresh_cache(cache: Any, start: datetime | None, end: datetime | None) -> str:
    """Import the period from Slurm when it answers (see :mod:`wass_chat.sacct.refresh`)."""
    from wass_chat.sacct.refresh import refresh_period

    return refresh_period(cache, start, end, progress=_progress)


def _progress(done: int, total: int) -> None:
    """The import's progress on stderr, when it spans more than one month."""
    import sys

    if total > 1:
        print(f"importing accounting data: month {done} of {total}", file=sys.stderr)


def period_in_words(period: str) -> str:
    """The period as an answer says it: ``7d`` -> "the last 7 days", ``all`` -> "all cached
    history"; other forms as given."""
    text = period.strip().lower()
    if m := re.fullmatch(r"(\d+)\s*([dhw])", text):
        unit = {"d": "day", "h": "hour", "w": "week"}[m.group(2)]
        return f"the last {m.group(1)} {unit}{'s' if m.group(1) != '1' else ''}"
    return "all cached history" if text in {"", "all"} else period


def parse_period(
    period: str, now: datetime | None = None
) -> tuple[datetime | None, datetime | None]:
    """``7d`` (the last 7 days; ``30m``, ``24h``, ``2w`` likewise), ``2024-05`` (a month),
    ``START..END`` (ISO dates), ``all``."""
    from datetime import timedelta

    text = period.strip().lower()
    now = now or datetime.now()
    if text in {"", "all"}:
        return None, None
    if match := re.fullmatch(r"(\d+)\s*([mdhw])", text):
        unit = {
            "m": timedelta(minutes=1),
            "h": timedelta(hours=1),
            "d": timedelta(days=1),
            "w": timedelta(weeks=1),
        }
        return now - int(match.group(1)) * unit[match.group(2)], None
    try:
        if match := re.fullmatch(r"(\d{4})-(\d{2})", text):
            year, month = int(match.group(1)), int(match.group(2))
            start = datetime(year, month, 1)
            return start, datetime(year + month // 12, month % 12 + 1, 1)
        if ".." in text:
            first, _, last = text.partition("..")
            return (
                datetime.fromisoformat(first) if first else None,
                datetime.fromisoformat(last) if last else None,
            )
    except ValueError as exc:
        raise InputError(period, [f"unreadable period: {exc}"]) from exc
    raise InputError(period, ["use 7d, 24h, 30m, 2w, 2024-05, START..END (ISO dates) or all"])
