"""Princeton jobstats summaries in ``AdminComment``, read the way reportseff reads them.

jobstats (github.com/PrincetonUniversity/jobstats) stores, when a job ends, a summary in the
job's AdminComment: ``JS1:`` followed by base64 of gzip'd JSON::

    {"gpus": 2, "total_time": 83124,
     "nodes": {"della-l05g2": {"cpus": 12, "total_time": 960068.6,
                               "used_memory": ..., "total_memory": ...,
                               "gpu_utilization": {"3": 9.5},            # time average, %
                               "gpu_used_memory": {"2": ..., "3": ...},  # peak, bytes
                               "gpu_total_memory": {"2": ..., "3": ...}}}}

Jobs too short to sample carry ``JS1:Short``. reportseff (src/reportseff/job.py) lists a node's
GPUs from ``gpu_total_memory``; a GPU missing from ``gpu_utilization`` or ``gpu_used_memory``
counts 0; a node's figure is the mean over its GPUs and the job's the mean over *all* its nodes
(a node without GPUs adds 0). :func:`gpu_summary` keeps those rules, unrounded.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import json
import zlib
from dataclasses import dataclass
from typing import Any

PREFIX = "JS1:"
SHORT = "JS1:Short"


class JobstatsCommentError(ValueError):
    """An AdminComment that starts with ``JS1:`` but does not decode to jobstats JSON."""


@dataclass(frozen=True, slots=True)
class GpuReading:
    """One GPU's jobstats figures."""

    node: str
    index: str
    utilization_pct: float
    """Time-averaged utilisation (jobstats samples it from the GPU exporter)."""
    used_bytes: int
    """Peak memory used."""
    total_bytes: int


@dataclass(frozen=True, slots=True)
class JobstatsGpus:
    """A job's GPU use from its jobstats summary (reportseff's figures, unrounded)."""

    gpus: tuple[GpuReading, ...]
    utilization_pct: float
    """Mean over nodes of each node's mean over its GPUs (reportseff's GPUEff)."""
    memory_pct: float
    """Same mean of each GPU's peak memory over its total (reportseff's GPUMem)."""
    nodes: int

    @property
    def idle_gpus(self) -> int:
        return sum(1 for g in self.gpus if g.utilization_pct == 0)

    @property
    def peak_used_bytes(self) -> int:
        return max((g.used_bytes for g in self.gpus), default=0)

    @property
    def total_bytes_per_gpu(self) -> int:
        return max((g.total_bytes for g in self.gpus), default=0)


def decode_comment(comment: str | None) -> dict[str, Any] | None:
    """The jobstats JSON of an AdminComment; None for another comment or ``JS1:Short``.

    Raises :class:`JobstatsCommentError` for a ``JS1:`` comment that does not decode.
    """
    if not comment or not comment.startswith(PREFIX) or comment.startswith(SHORT):
        return None
    try:
        data = json.loads(gzip.decompress(base64.b64decode(comment[len(PREFIX) :])))
    except (binascii.Error, OSError, EOFError, zlib.error, ValueError) as exc:
        raise JobstatsCommentError(f"AdminComment {comment[:24]}... is not jobstats JSON") from exc
    if not isinstance(data, dict) or not isinstance(data.get("nodes"), dict):
        raise JobstatsCommentError(f"AdminComment {comment[:24]}... has no 'nodes'")
    return data


def gpu_summary(data: dict[str, Any] | None) -> JobstatsGpus | None:
    """The GPU figures of decoded jobstats JSON; None when it recorded no GPU."""
    if not data or not data.get("gpus"):
        return None
    nodes: dict[str, dict[str, Any]] = data["nodes"]
    readings: list[GpuReading] = []
    util_sum = memory_sum = 0.0
    for name, node in nodes.items():
        totals = node.get("gpu_total_memory") or {}
        if not totals:
            continue
        util = node.get("gpu_utilization") or {}
        used = node.get("gpu_used_memory") or {}
        mine = [
            GpuReading(
                node=name,
                index=str(index),
                utilization_pct=float(util.get(index, 0)),
                used_bytes=int(used.get(index, 0)),
                total_bytes=int(total),
            )
            for index, total in totals.items()
        ]
        readings.extend(mine)
        util_sum += sum(g.utilization_pct for g in mine) / len(mine)
        memory_sum += sum(
            100 * g.used_bytes / g.total_bytes if g.total_bytes else 0.0 for g in mine
        ) / len(mine)
    if not readings:
        return None
    return JobstatsGpus(
        gpus=tuple(readings),
        utilization_pct=util_sum / len(nodes),
        memory_pct=memory_sum / len(nodes),
        nodes=len(nodes),
    )


def comment_gpus(comment: str | None) -> JobstatsGpus | None:
    """:func:`gpu_summary` of an AdminComment (None when it holds no jobstats GPU figures)."""
    return gpu_summary(decode_comment(comment))
