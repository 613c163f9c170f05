"""GPU-use wording: "which GPU jobs are idle right now?", "who wasted the most GPU hours last
month?", "how well did job 42 use its GPUs?" go to ``gpu_usage``.

A question is one when it speaks of GPUs being used (used, idle, wasted, utilisation, busy, at
0%...) about jobs, users or a period, or names a job. A GPU's live readings on a node (its
clocks, temperature, nvidia-smi, "is the gpu on n4 being used?") stay refused
(:data:`~wass_chat.agent.understanding.scope.GPU_READINGS`): no tool reads a node's GPUs, only
what jobs record. GPU nodes, a GPU partition or its queue are other tools' questions.
"""

from __future__ import annotations

import re
from typing import Any

from wass_chat.agent.understanding.slots import Slots

_GPU = r"(?:gpus?|gpu[\s-]?hours?|[ahv]100s?|h200s?|a40s?|l40s?|mi\d{3}x?s?)"
_NOT_NODES = r"(?!\s+(?:nodes?|partitions?|queue|cost|price))"
_USE = (
    r"(?:idle|idling|use|used|uses|using|usage|utili[sz]\w*|wast\w*|burn\w*|busy|efficien\w*|"
    r"at\s+0\s*%|0\s*%|zero\s*%?|doing\s+nothing|sitting|unused|untouched|occupied)"
)
GPU_USE = re.compile(
    rf"\b{_GPU}\b{_NOT_NODES}.{{0,50}}\b{_USE}(?!\w)|\b{_USE}\b.{{0,40}}\b{_GPU}\b{_NOT_NODES}",
    re.I,
)
_SUBJECT = re.compile(r"\b(?:jobs?|who|whose|users?|people|my|our|gpu[\s-]?hours?)\b", re.I)
"""Whose use: jobs, users, GPU-hours (a node's GPUs alone are a live reading, refused)."""
_NOW = re.compile(r"\b(?:now|right\s+now|currently|at\s+the\s+moment|running|live|today)\b", re.I)
_OVER_TIME = re.compile(r"\b(?:wast\w*|burn\w*|most|worst|top|hours?|ranking)\b", re.I)
"""A ranking or a total: a period's (the last 30 days unless one is named)."""
_READINGS = re.compile(
    r"\b(?:energy|kwh|power|watts?|clocks?|temperatures?|nvlink|nvidia-smi|nvtop|dcgm\w*|"
    r"rocm-smi|free|available|cost|price)\b",
    re.I,
)
"""Hardware readings, energy or prices: not how jobs used their GPUs."""


def asks_gpu_use(text: str, slots: Slots) -> bool:
    """Whether ``text`` asks how jobs use (or waste) their GPUs."""
    if not GPU_USE.search(text) or _READINGS.search(text) or slots.cluster_changes:
        return False
    if slots.host and not slots.jobid and not re.search(r"\bjobs?\b", text, re.I):
        return False  # "is the gpu on n4 being used?": a node's live reading
    return bool(slots.jobid or slots.period or _SUBJECT.search(text))


def gpu_arguments(text: str, slots: Slots) -> dict[str, Any]:
    """``gpu_usage``'s arguments: the job, else a period (named, or 30 days for a ranking
    asked with no time), else the jobs running now."""
    if slots.jobid:
        return {"jobid": slots.jobid}
    args: dict[str, Any] = {"user": slots.user} if slots.user else {}
    if slots.period:
        return {**args, "period": slots.period, "count": slots.count or 5}
    if _OVER_TIME.search(text) and not _NOW.search(text):
        return {**args, "period": "30d", "count": slots.count or 5}
    return args
