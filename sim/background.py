"""A seeded background load for the bench: other jobs hold some nodes from time 0.

Real clusters are shared, so a workflow's plan should start from the nodes' occupancy rather
than an empty machine. The bench draws one per instance (:func:`draw_occupancy`): a share of
the nodes, each held whole (every core) from 0 until a seeded time. It becomes an
:class:`~sim.occupancy.Occupancy`, which the planners and the simulator both start from.

Busy-until times are drawn relative to the instance's own ideal length (:func:`ideal_length`),
so the load matters equally for small and large workflows. The defaults (``share`` 0.5,
``horizon`` 1.0, ``seed`` 0) are assumptions, not trace figures. ``wass-chat bench --load``
takes them as ``share=S,horizon=H,seed=K,seen=1`` (:func:`parse_load`); ``seen=0`` hides the
load from the planners (they plan for an idle machine, the run is still busy): the baseline
that shows what seeing it is worth.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from sim.errors import InputError
from sim.model import Platform, Workflow
from sim.occupancy import Occupancy

BACKGROUND_STREAM = 0xB05
"""Mixed into the instance seed for the load's generator (apart from every other draw)."""


@dataclass(frozen=True)
class BackgroundConfig:
    """How much of the cluster is busy when the workflow arrives, and for how long."""

    share: float = 0.5
    """Share of the nodes busy at time 0 (rounded to a node count; 0: an idle cluster)."""
    horizon: float = 1.0
    """Busy-until times are uniform in ``[0, horizon]`` ideal lengths of the workflow."""
    seed: int = 0
    """Mixed with each instance's seed: another seed, another load on the same instances."""
    seen: bool = True
    """Whether planners are told the load (False: they plan as if the cluster were idle)."""

    @property
    def idle(self) -> bool:
        return self.share <= 0 or self.horizon <= 0


def parse_load(text: str) -> BackgroundConfig | None:
    """``share=S,horizon=H,seed=K,seen=0|1`` (any subset; the rest default) or ``none``/empty:
    no load.

    Raises :class:`InputError` listing every problem: unknown keys, bad numbers, values out
    of range (``share`` in [0, 1], ``horizon`` >= 0).
    """
    text = text.strip()
    if text.lower() in ("", "none"):
        return None
    known = {f.name: f.type for f in fields(BackgroundConfig)}
    values: dict[str, float | int | bool] = {}
    problems = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, sep, raw = (s.strip() for s in item.partition("="))
        if not sep or key not in known:
            problems.append(f"{item!r} is not one of {', '.join(f'{k}=...' for k in known)}")
            continue
        if key == "seen":
            if raw not in ("0", "1"):
                problems.append(f"seen={raw!r} is not 0 or 1")
            values[key] = raw != "0"
            continue
        try:
            values[key] = int(raw) if key == "seed" else float(raw)
        except ValueError:
            problems.append(f"{key}={raw!r} is not a number")
    cfg = BackgroundConfig(**values)  # type: ignore[arg-type]
    if not 0 <= cfg.share <= 1:
        problems.append(f"share must be in [0, 1], got {cfg.share}")
    if not cfg.horizon >= 0:
        problems.append(f"horizon must be >= 0, got {cfg.horizon}")
    if problems:
        raise InputError("--load", problems)
    return cfg


def ideal_length(workflow: Workflow, platform: Platform) -> float:
    """A lower bound on the workflow's makespan (s): the larger of total work over total
    capacity and the critical path on the fastest cores (data movement ignored)."""
    fastest = platform.fastest_core_speed
    longest: dict[str, float] = {}
    tasks = workflow.task_by_id
    for task in workflow.topological_order:
        before = max((longest[p] for p in workflow.parents[task]), default=0.0)
        longest[task] = before + tasks[task].work / (fastest * tasks[task].cores)
    path = max(longest.values(), default=0.0)
    return max(workflow.total_work / platform.total_capacity, path)


def draw_background(
    workflow: Workflow, platform: Platform, cfg: BackgroundConfig, rng: np.random.Generator
) -> dict[str, float]:
    """Node -> busy-until time (s) for a seeded choice of ``share`` of the nodes."""
    count = round(cfg.share * len(platform.nodes))
    if count <= 0:
        return {}
    chosen = sorted(int(i) for i in rng.choice(len(platform.nodes), count, replace=False))
    span = cfg.horizon * ideal_length(workflow, platform)
    untils = rng.uniform(0.0, span, size=count)
    return {platform.nodes[i].name: float(u) for i, u in zip(chosen, untils, strict=True)}


def draw_occupancy(
    workflow: Workflow, platform: Platform, cfg: BackgroundConfig, instance_seed: int
) -> Occupancy:
    """The instance's background load: whole nodes held until their seeded times."""
    if cfg.idle:
        return Occupancy()
    rng = np.random.default_rng([instance_seed, BACKGROUND_STREAM, cfg.seed])
    return Occupancy.whole_nodes(platform, draw_background(workflow, platform, cfg, rng))
