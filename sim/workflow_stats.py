"""Shape and cost figures of a workflow: levels, width, communication-to-computation ratio.

The communication-to-computation ratio (CCR) follows the scheduling literature (Topcuoglu et
al., HEFT, 2002): mean edge transfer time over mean task compute time. Here both are measured
on one platform: an edge moves its bytes at the mean NIC bandwidth, a task runs on ``cores``
cores of the mean core speed. On the *reference* platform (``REFERENCE_SPEED`` per core,
``REFERENCE_BANDWIDTH``) the CCR depends on the workflow alone; generators target it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from statistics import fmean

from sim.errors import InputError
from sim.model import REFERENCE_SPEED, File, Platform, Workflow

REFERENCE_BANDWIDTH = 1.25e9
"""Bytes/s of the reference network (10 Gb/s), the default NIC of :class:`sim.model.Node`."""


def task_levels(wf: Workflow) -> dict[str, int]:
    """Task id -> level: 0 without parents, else one more than its deepest parent (WfFormat)."""
    level: dict[str, int] = {}
    for tid in wf.topological_order:
        level[tid] = max((level[p] + 1 for p in wf.parents[tid]), default=0)
    return level


def level_widths(wf: Workflow) -> list[int]:
    """Number of tasks on each level, from the entry level down."""
    levels = task_levels(wf)
    widths = [0] * (max(levels.values()) + 1)
    for lvl in levels.values():
        widths[lvl] += 1
    return widths


def communication_to_computation_ratio(
    wf: Workflow, platform: Platform | None = None
) -> float | None:
    """Mean edge transfer time / mean task compute time; None without edges or work.

    Without ``platform`` the reference platform is used.
    """
    if platform is None:
        speed, bandwidth = REFERENCE_SPEED, REFERENCE_BANDWIDTH
    else:
        speed = fmean(n.speed for n in platform.nodes)
        bandwidth = fmean(n.bandwidth for n in platform.nodes)
    edges = list(wf.edge_files)
    compute = fmean(t.work / (speed * t.cores) for t in wf.tasks)
    if not edges or compute <= 0:
        return None
    transfer = fmean(wf.edge_bytes(p, c) for p, c in edges) / bandwidth
    return transfer / compute


def scale_to_ccr(wf: Workflow, ccr: float) -> Workflow:
    """``wf`` with every file size multiplied so its reference CCR becomes ``ccr``.

    Scaling all files (workflow inputs too) keeps their proportions. Sizes stay integers, so
    the result is within rounding of the target.
    """
    if ccr < 0:
        raise InputError(wf.name or "workflow", [f"CCR must be >= 0, got {ccr}"])
    current = communication_to_computation_ratio(wf)
    if not current:
        raise InputError(
            wf.name or "workflow",
            ["cannot reach a CCR: no data flows along the edges (or the tasks have no work)"],
        )
    factor = ccr / current
    files = tuple(File(f.id, round(f.size * factor)) for f in wf.files)
    return replace(wf, files=files)


@dataclass(frozen=True)
class WorkflowSummary:
    """What ``wass-chat workflow show`` prints."""

    name: str
    tasks: int
    files: int
    edges: int
    depth: int
    """Number of levels (longest path, in tasks)."""
    width: int
    """Most tasks on one level."""
    categories: int
    total_work: float
    """Flop."""
    total_bytes: int
    input_bytes: int
    """Bytes of workflow inputs, read from the shared filesystem."""
    sequential_runtime: float
    """Seconds to run every task one after another on the reference machine."""
    ccr_reference: float | None
    ccr_platform: float | None
    platform: str | None

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def summarize(wf: Workflow, platform: Platform | None = None) -> WorkflowSummary:
    """The headline figures of ``wf``; the CCR also on ``platform`` when given."""
    widths = level_widths(wf)
    return WorkflowSummary(
        name=wf.name,
        tasks=len(wf.tasks),
        files=len(wf.files),
        edges=len(wf.edge_files),
        depth=len(widths),
        width=max(widths),
        categories=len({t.category for t in wf.tasks}),
        total_work=wf.total_work,
        total_bytes=wf.total_bytes,
        input_bytes=sum(wf.file_by_id[f].size for f in wf.input_files),
        sequential_runtime=sum(t.runtime for t in wf.tasks),
        ccr_reference=communication_to_computation_ratio(wf),
        ccr_platform=None if platform is None else communication_to_computation_ratio(wf, platform),
        platform=None if platform is None else platform.name,
    )
