"""Options shared by the accounting commands (`sacct ...`, `report`): periods and capacity."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sim.errors import InputError

CAP_NODES = "Configured nodes (default: from scontrol or $SLURM_CONF; else nodes seen, labelled)."
CAP_CPUS = "Configured CPUs; utilisation is then allocated CPUs over this."
START_HELP = "Period start (YYYY-MM-DD[THH:MM[:SS]], cluster local time)."
END_HELP = "Period end, exclusive."


def parse_when(value: str | None, option: str) -> datetime | None:
    """An ISO date or time option (None stays None); a one-line error otherwise."""
    if value is None:
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError as exc:
        raise InputError(
            "options", [f"{option} must be an ISO date or time, got {value!r}"]
        ) from exc


def parse_period(start: str | None, end: str | None) -> tuple[datetime | None, datetime | None]:
    """``--start``/``--end`` as datetimes, the end after the start."""
    begin, finish = parse_when(start, "--start"), parse_when(end, "--end")
    if begin is not None and finish is not None and finish <= begin:
        raise InputError("options", [f"--end ({finish}) must be after --start ({begin})"])
    return begin, finish


def capacity(nodes: int | None, cpus: int | None) -> Any:
    """The stated capacity, else the one the live cluster or $SLURM_CONF gives, else None."""
    from wass_chat.analytics.capacity import discover_capacity, stated_capacity

    return stated_capacity(nodes, cpus) or discover_capacity()


def settings() -> Any:
    from wass_chat.config import settings as current

    return current()
