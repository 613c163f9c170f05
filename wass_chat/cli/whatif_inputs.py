"""Inputs and units the `wass-chat whatif` commands share: the jobs table, dates, durations."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def jobs_table(path: Path | None) -> Any:
    import polars as pl

    from sim.errors import InputError
    from wass_chat.config import settings
    from wass_chat.sacct.cache import SacctCache
    from wass_chat.sacct.parse import parse_sacct_file

    if path is None:
        return SacctCache(settings().sacct_dir).scan().collect()
    if not path.exists():
        raise InputError(str(path), ["no such file"])
    if path.suffix == ".parquet":
        try:
            return pl.read_parquet(path)
        except (OSError, pl.exceptions.PolarsError) as exc:  # not Parquet, or damaged
            raise InputError(str(path), [f"not a readable Parquet file: {exc}"]) from exc
    return parse_sacct_file(path).jobs


def duration(seconds: float) -> str:
    if abs(seconds) < 120:
        return f"{seconds:.0f} s"
    if abs(seconds) < 7200:
        return f"{seconds / 60:.1f} min"
    if abs(seconds) < 172800:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} d"
