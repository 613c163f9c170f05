"""Slurm's text formats: timestamps, durations, memory sizes, TRES lists, and what "unset" looks
like (``(null)``, ``N/A``, ``Unknown``...), read the way the Slurm commands print them.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

UNSET = frozenset({"", "(null)", "N/A", "Unknown", "None", "n/a"})


def is_set(value: str | None) -> bool:
    return value is not None and value.strip() not in UNSET


def slurm_time(value: str | None) -> datetime | None:
    """``2026-11-23T23:04:08`` -> datetime; ``Unknown``/``N/A``/``None`` -> None."""
    if not is_set(value):
        return None
    try:
        return datetime.fromisoformat(str(value).strip())
    except ValueError:
        return None


def slurm_duration(value: str | None) -> float | None:
    """Seconds of ``[D-]HH:MM:SS``, ``MM:SS``, ``MM`` (minutes); None for UNLIMITED or unset."""
    if not is_set(value) or str(value).upper() in {"UNLIMITED", "INFINITE", "PARTITION_LIMIT"}:
        return None
    text = str(value).strip()
    days = 0
    if "-" in text:
        head, _, text = text.partition("-")
        days = int(head)
    parts = [float(p) for p in text.split(":")]
    if len(parts) == 1:
        seconds = parts[0] * 60.0  # a bare number is minutes, as in --time
    elif len(parts) == 2:
        seconds = parts[0] * 60.0 + parts[1]
    else:
        seconds = parts[0] * 3600.0 + parts[1] * 60.0 + parts[2]
    return days * 86400.0 + seconds


def slurm_clock(seconds: float | None) -> str:
    """Seconds as Slurm prints a duration: ``00:10:00``, ``1-04:37:26``; None -> ''."""
    if seconds is None:
        return ""
    s = int(seconds)
    days, clock_part = divmod(s, 86400)
    text = f"{clock_part // 3600:02d}:{clock_part % 3600 // 60:02d}:{clock_part % 60:02d}"
    return f"{days}-{text}" if days else text


def memory_mb(value: str | None) -> float | None:
    """``2000M``, ``4G``, ``512K``, ``1.5T``, ``100Mn``/``100Mc`` (per node/CPU) -> megabytes."""
    if not is_set(value):
        return None
    match = re.fullmatch(r"([\d.]+)\s*([KMGT]?)[nc]?", str(value).strip(), re.I)
    if not match:
        return None
    scale = {"": 1.0, "K": 1 / 1024, "M": 1.0, "G": 1024.0, "T": 1024.0**2}
    return float(match.group(1)) * scale[match.group(2).upper()]


def tres(value: str | None) -> dict[str, str]:
    """``cpu=4,mem=2000M,node=1,gres/gpu=2`` -> {cpu: 4, mem: 2000M, node: 1, gres/gpu: 2}."""
    if not is_set(value):
        return {}
    return dict(item.split("=", 1) for item in str(value).split(",") if "=" in item)


def set_or_empty(value: str | None) -> str:
    """``value``, or '' for Slurm's ``(null)``, ``N/A``, ``Unknown``..."""
    return str(value) if is_set(value) else ""


def clock(when: datetime | None, now: datetime | None = None) -> str:
    """``23:04`` today, ``Tue 23:04`` within a week, else ``2026-11-23 23:04``."""
    if when is None:
        return "an unknown time"
    now = now or datetime.now()
    if when.date() == now.date():
        return when.strftime("%H:%M")
    if abs(when - now) < timedelta(days=6):
        return when.strftime("%a %H:%M")
    return when.strftime("%Y-%m-%d %H:%M")
