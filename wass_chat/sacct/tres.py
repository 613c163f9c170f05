"""Amounts read out of sacct's TRES strings (``cpu=8,mem=10G,gres/gpu:v100=1,gres/gpu=1``).

One place for the text rules of the TRES columns (ReqTRES, AllocTRES, TRESUsageIn*): a key's
amount, in bytes or as a number, and the GPUs a job held with their type.
"""

from __future__ import annotations

import polars as pl

UNIT_BYTES = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40, "P": 2**50}


def tres_bytes(column: str, key: str = "mem", bare_unit: str = "") -> pl.Expr:
    """The ``key=`` amount of a TRES string column in bytes (null without it).

    Usage strings (TRESUsageInTot) print bytes with a unit only when it is exact
    (``mem=1294440K``, ``gres/gpumem=37956M``, ``mem=0``; ``--noconvert`` prints raw bytes);
    allocation strings (AllocTRES) print megabytes with one (``mem=32000M``): ``bare_unit`` is
    the unit of a number printed without one.
    """
    text = pl.col(column).str.extract(rf"(?:^|,){key}=([0-9.]+[KMGTP]?)(?:,|$)", 1)
    unit = text.str.extract(r"([KMGTP])$", 1).fill_null(bare_unit)
    number = text.str.extract(r"^([0-9.]+)", 1).cast(pl.Float64, strict=False)
    return (number * unit.replace_strict(UNIT_BYTES, return_dtype=pl.Float64)).round(0)


def tres_number(column: str, key: str) -> pl.Expr:
    """The ``key=`` amount of a TRES string column as a plain number (``gres/gpuutil=90``)."""
    text = pl.col(column).str.extract(rf"(?:^|,){key}=([0-9.]+)(?:,|$)", 1)
    return text.cast(pl.Float64, strict=False)


def gpus(column: str = "alloc_tres") -> pl.Expr:
    """GPUs in a TRES column (AllocTRES by default; ReqTRES for requests): the untyped count
    first, else a typed one; 0 without any."""
    tres = pl.col(column)
    plain = tres.str.extract(r"gres/gpu=(\d+)", 1)
    typed = tres.str.extract(r"gres/gpu:[^=,]+=(\d+)", 1)
    return pl.coalesce(plain, typed).cast(pl.Int64).fill_null(0)


def gpu_type(column: str = "alloc_tres") -> pl.Expr:
    """The GPU type of a TRES column (``v100`` in ``gres/gpu:v100=1``), null when untyped."""
    return pl.col(column).str.extract(r"gres/gpu:([^=,]+)=", 1)
