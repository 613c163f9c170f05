"""Slurm's ``--json`` output across data_parser versions, read by shape rather than by version.

The same command prints differently shaped JSON per release: Slurm 22.05 (openapi v0.0.38) gives
plain numbers and ``"job_state": "RUNNING"``; 23.02 on (data_parser v0.0.39+) wraps numbers as
``{"set": true, "infinite": false, "number": 60}`` and, from 23.11 (v0.0.40), states are lists
(``["RUNNING"]``); from 24.05 (v0.0.41) a job's ``job_resources`` lists each node's allocated
CPUs (``nodes.allocation[].cpus.count``), which 22.05-23.11 do not print (only a per-socket core
map without threads). The helpers here accept every shape, so a caller names the field once.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from sim.errors import InputError


class SlurmJsonError(InputError):
    """``--json`` output that is not JSON, or reports errors instead of data."""

    kind = "Slurm JSON"


def loads(text: str, command: str) -> dict[str, Any]:
    """The JSON object ``command`` printed; :class:`SlurmJsonError` for anything else, or for
    a non-empty ``errors`` list (Slurm's own report of a failure)."""
    try:
        payload = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SlurmJsonError(command, [f"not JSON: {exc}"]) from exc
    if not isinstance(payload, dict):
        raise SlurmJsonError(command, ["not a JSON object"])
    errors = [e for e in payload.get("errors") or [] if e]
    if errors:
        raise SlurmJsonError(command, [_error_text(e) for e in errors])
    return payload


def _error_text(error: Any) -> str:
    if isinstance(error, Mapping):
        return str(error.get("description") or error.get("error") or error)
    return str(error)


def number(value: Any) -> float | None:
    """``60`` or ``{"set": true, "number": 60}`` -> 60.0; unset, infinite or absent -> None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, Mapping):
        if not value.get("set", True) or value.get("infinite", False):
            return None
        return number(value.get("number"))
    return None


def is_infinite(value: Any) -> bool:
    """``{"infinite": true}`` (data_parser) or Slurm's INFINITE (0xFFFFFFFF) as a plain number."""
    if isinstance(value, Mapping):
        return bool(value.get("infinite"))
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0xFFFFFFFE


def states(value: Any) -> list[str]:
    """``"RUNNING"`` (22.05), ``["RUNNING", "COMPLETING"]`` (23.11+) -> upper-case names."""
    if isinstance(value, str):
        return [s for s in value.upper().replace(",", "+").split("+") if s]
    if isinstance(value, list):
        return [str(s).upper() for s in value]
    return []


def text(value: Any) -> str:
    """A string field, '' for null (data_parser prints absent strings as "" or null)."""
    return "" if value is None else str(value)
