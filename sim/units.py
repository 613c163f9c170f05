"""Human-friendly quantities in platform files: "10Gbps", "1.25GBps", "64GiB", "2.5Gf", "10us".

Every parser accepts a plain number (already in base units: bytes, bytes/s, flop/s, seconds)
or a string with a unit. Decimal prefixes (k, M, G, T, P) are powers of 1000, binary prefixes
(Ki, Mi, Gi, Ti, Pi) powers of 1024. Bandwidths in bits per second ("bps", "bit/s") are
converted to bytes per second, the unit the model uses. The unit vocabulary follows SimGrid's
platform files, so a value copied from one works in the other.
"""

from __future__ import annotations

import re
from typing import Literal

Quantity = Literal["size", "bandwidth", "speed", "time"]

_PREFIX = {
    "": 1.0,
    "k": 1e3,
    "K": 1e3,
    "M": 1e6,
    "G": 1e9,
    "T": 1e12,
    "P": 1e15,
    "Ki": 2.0**10,
    "Mi": 2.0**20,
    "Gi": 2.0**30,
    "Ti": 2.0**40,
    "Pi": 2.0**50,
}

# Unit suffix (after the prefix) -> factor to the base unit, per kind of quantity.
_UNITS: dict[Quantity, dict[str, float]] = {
    "size": {"B": 1.0, "byte": 1.0, "bytes": 1.0},
    "bandwidth": {"Bps": 1.0, "B/s": 1.0, "bps": 1 / 8, "bit/s": 1 / 8, "b/s": 1 / 8},
    "speed": {"f": 1.0, "flops": 1.0, "flop/s": 1.0, "Flops": 1.0, "F": 1.0},
    "time": {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9, "min": 60.0, "h": 3600.0},
}

_NUMBER_WITH_UNIT = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(\S*)\s*$")


def parse_quantity(value: object, kind: Quantity) -> float:
    """The value in base units (bytes, bytes/s, flop/s or seconds).

    Raises ValueError with a message naming the accepted units when ``value`` is neither a
    number nor a string with a known unit; booleans are refused (YAML turns "yes" into True).
    """
    if isinstance(value, bool):
        raise ValueError(f"expected a {kind}, got {value!r}")
    if isinstance(value, int | float):
        return float(value)
    if not isinstance(value, str):
        raise ValueError(f"expected a {kind} (number or string with unit), got {value!r}")
    match = _NUMBER_WITH_UNIT.match(value)
    if not match:
        raise ValueError(f"cannot read {value!r} as a {kind}")
    number, unit = float(match.group(1)), match.group(2)
    factor = _unit_factor(unit, kind)
    if factor is None:
        known = ", ".join(sorted(_UNITS[kind]))
        raise ValueError(
            f"unknown {kind} unit in {value!r} (units: {known}, with k/M/G/T or Ki/Mi/Gi)"
        )
    if factor < 1:  # divide by the exact inverse: 10 / 1e6 is 1e-05, 10 * 1e-6 is not
        return number / round(1 / factor)
    return number * factor


def _unit_factor(unit: str, kind: Quantity) -> float | None:
    if unit == "":
        return 1.0
    units = _UNITS[kind]
    if unit in units:  # time units like "ms" must not be read as prefix "m" + "s"
        return units[unit]
    for prefix in sorted(_PREFIX, key=len, reverse=True):
        if prefix and unit.startswith(prefix) and unit[len(prefix) :] in units:
            return _PREFIX[prefix] * units[unit[len(prefix) :]]
    return None


def format_bytes(size: float) -> str:
    """A short binary-prefixed size for people: 1536 -> '1.5 KiB'."""
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def format_rate(value: float, unit: str) -> str:
    """A short decimal-prefixed rate for people: (2.5e9, 'f') -> '2.5 Gf'."""
    for prefix, factor in (("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(value) >= factor:
            return f"{value / factor:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}"
