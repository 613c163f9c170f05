"""Longest Job First: the seed README's queue baseline, applied to batches of ready tasks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from policy.sjf import DurationOrder


@dataclass(frozen=True)
class LJF(DurationOrder):
    """The ready task with the longest mean compute time goes first, to its earliest-finish node."""

    name: str = "ljf"
    description: ClassVar[str] = "Longest job first among ready tasks, earliest-finish node"
    shortest: ClassVar[bool] = False
