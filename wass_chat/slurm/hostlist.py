"""Slurm's hostlist syntax: ``n[01-03,07],gpu1`` <-> node names."""

from __future__ import annotations

import re


def expand(text: str) -> list[str]:
    """``n[01-03,07],gpu1`` -> ``[n01, n02, n03, n07, gpu1]``; ``(null)`` and '' -> ``[]``."""
    names: list[str] = []
    if text.strip() in {"", "(null)", "None"}:
        return names
    for group in re.findall(r"[^,\[]+(?:\[[^\]]*\])?", text):
        base, _, ranges = group.partition("[")
        if not ranges:
            names.append(base)
            continue
        for item in ranges.rstrip("]").split(","):
            lo, _, hi = item.partition("-")
            width = len(lo)
            names += [f"{base}{i:0{width}d}" for i in range(int(lo), int(hi or lo) + 1)]
    return names
