"""How answers print quantities: seconds, bytes and percentages, at the precision the verifier
(:mod:`wass_chat.answers.checks.verify`) matches against the facts."""

from __future__ import annotations


def seconds(value: float) -> str:
    """``812.5 s`` (one decimal), the unit the simulator reports in."""
    return f"{value:.1f} s"


def size(value: float) -> str:
    """Bytes in decimal units: ``1.23 GB``, ``512.0 kB`` (exact bytes under 1 kB)."""
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(value) >= scale:
            return f"{value / scale:.2f} {unit}"
    return f"{int(value)} B"


def percent(value: float) -> str:
    """A signed percentage with one decimal: ``+12.5%``."""
    return f"{value:+.1f}%"
