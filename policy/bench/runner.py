"""Running the matrix: one worker task per instance, every scheduler simulated on it.

A worker builds the workflow and platform from the instance's seed, runs each scheduler (and
SAGA peer) through the simulator, and returns plain records. Records are sorted by instance
and scheduler, so the output does not depend on the number of processes or their timing.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from policy.base import Scheduler, StaticScheduler
from policy.bench.matrix import Instance, content_digest
from policy.planning_views import expected_makespan, instance_views, plan, replay, reruns
from policy.registry import get_scheduler
from sim.background import BackgroundConfig
from sim.engine import simulate
from sim.metrics import critical_path_bound, schedule_length_ratio, sequential_time, speedup
from sim.model import Workflow
from sim.occupancy import NO_OCCUPANCY, Hold
from sim.schedule import NetworkModel
from sim.uncertainty import RuntimePredictions, UncertaintyConfig


@dataclass(frozen=True, slots=True)
class RunRecord:
    """One scheduler on one instance, as simulated."""

    instance: str
    family: str
    workflow: str
    platform: str
    seed: int
    scheduler: str
    tasks: int
    nodes: int
    makespan: float
    planned_makespan: float | None
    slr: float
    speedup: float
    energy: float
    cross_node_bytes: int
    expected_makespan: float | None = None
    """The plan's mean makespan over :attr:`RunSpec.reruns` fresh runs of the instance (None
    without them, or for a scheduler that runs online)."""


@dataclass(frozen=True)
class InstanceOutcome:
    """What a worker returns for one instance."""

    instance: str
    workflow_sha256: str
    platform_sha256: str
    records: tuple[RunRecord, ...]
    seconds: dict[str, float] = field(default_factory=dict)
    """Wall-clock seconds per scheduler (informative only; never part of the results)."""
    load: tuple[Hold, ...] = ()
    """The background load's holds on this instance (empty: an idle cluster)."""


@dataclass(frozen=True)
class RunSpec:
    """What to run on each instance."""

    schedulers: tuple[str, ...]
    network_model: NetworkModel = "fair"
    peers: tuple[str, ...] = ()
    """SAGA scheduler short names (see :data:`policy.peers.saga.SAGA_SCHEDULERS`)."""
    estimates: str = ""
    """``""``: the exact setting (plan and run on the same values); else ``user``, ``mean``,
    ``kb`` or ``oracle``: plan on those estimates, replay on realised values
    (:mod:`policy.planning_views`)."""
    noise: float = 1.0
    """Multiplies every spread of the default :class:`~sim.uncertainty.UncertaintyConfig`."""
    uncertainty_seed: int = 0
    """Seeds the persistent draws (node-class slowdowns, request factors)."""
    load: BackgroundConfig | None = None
    """A seeded background load every scheduler plans around and runs on (None: idle)."""
    reruns: int = 0
    """Under estimates, also replay every plan on this many fresh runs of the instance (the
    run's own variation redrawn, :func:`policy.planning_views.reruns`): each record's
    ``expected_makespan``, what the plan gives on average rather than on one run's luck."""


def _schedulers(spec: RunSpec, seed: int) -> list[Scheduler]:
    chosen: list[Scheduler] = [
        get_scheduler(n, seed=seed, network_model=spec.network_model) for n in spec.schedulers
    ]
    if spec.peers:
        from policy.peers.saga import peer_schedulers

        chosen += peer_schedulers(spec.peers)
    return chosen


def run_instance(
    instance: Instance, spec: RunSpec, predictions: RuntimePredictions | None = None
) -> InstanceOutcome:
    """Simulate every scheduler of ``spec`` on ``instance`` (runs in a worker process).

    ``predictions`` (``kb`` estimates) come from the knowledge base, computed by the caller.
    """
    workflow = instance.workflow.build(instance.seed)
    platform = instance.platform.build(instance.seed)
    views = None
    runs: list[Workflow] = []  # the hindsight reruns (spec.reruns), under estimates only
    if spec.estimates or spec.load is not None:
        # A load alone keeps the exact setting: runtimes as planned, only the nodes are busy.
        noise = spec.noise if spec.estimates else 0.0
        cfg = UncertaintyConfig(seed=spec.uncertainty_seed).scaled(noise)
        mode = spec.estimates or "oracle"
        views = instance_views(
            workflow,
            platform,
            instance.seed,
            mode,  # type: ignore[arg-type]
            cfg,
            predictions,
            spec.load,
        )
        workflow, platform = views.actual
        if spec.reruns and spec.estimates:
            runs = reruns(views, cfg, instance.seed, spec.reruns)
    # A dynamic scheduler told the actual values (and the load, if any) runs online, as today.
    seen = spec.load is None or spec.load.seen
    run_directly = views is None or (spec.estimates in ("", "oracle") and seen)
    occupancy = views.occupancy if views is not None else None
    planning_views = views if views is None or seen else replace(views, occupancy=NO_OCCUPANCY)
    bound = critical_path_bound(workflow, platform)
    serial = sequential_time(workflow, platform)
    records, seconds = [], {}
    for scheduler in _schedulers(spec, instance.seed):
        began = time.perf_counter()
        planned = expected = replayed = None
        if views is not None and (isinstance(scheduler, StaticScheduler) or not run_directly):
            assert planning_views is not None
            replayed = plan(scheduler, planning_views, spec.network_model)
            planned = replayed.planned_makespan
            result, makespan = replay(replayed, views, spec.network_model)
        elif isinstance(scheduler, StaticScheduler):
            schedule = scheduler.schedule(workflow, platform)
            planned = schedule.planned_makespan
            result = simulate(workflow, platform, schedule, spec.network_model)
            makespan = result.makespan
        else:
            result = simulate(workflow, platform, scheduler, spec.network_model, occupancy)
            makespan = result.makespan
        seconds[scheduler.name] = time.perf_counter() - began  # the reruns are not its time
        if runs and replayed is not None and views is not None:
            expected = expected_makespan(replayed, views, runs, spec.network_model)
        records.append(
            RunRecord(
                instance=instance.id,
                family=instance.workflow.family,
                workflow=workflow.name,
                platform=platform.name,
                seed=instance.seed,
                scheduler=scheduler.name,
                tasks=len(workflow),
                nodes=len(platform),
                makespan=makespan,
                planned_makespan=planned,
                slr=schedule_length_ratio(makespan, bound),
                speedup=speedup(makespan, serial),
                energy=result.energy,
                cross_node_bytes=result.cross_node_bytes,
                expected_makespan=expected,
            )
        )
    return InstanceOutcome(
        instance.id,
        content_digest(workflow),
        content_digest(platform),
        tuple(records),
        seconds,
        views.occupancy.active() if views is not None else (),
    )


Progress = Callable[[int, int], None]
"""Called with (instances done, instances in total) as results come in."""


def run_matrix(
    instances: list[Instance],
    spec: RunSpec,
    jobs: int = 1,
    progress: Progress | None = None,
    predictions: Mapping[str, RuntimePredictions] | None = None,
    on_outcome: Callable[[InstanceOutcome], None] | None = None,
) -> list[InstanceOutcome]:
    """Run every instance, in ``jobs`` processes (1: in this process); sorted by instance id.

    ``predictions`` maps instance ids to their ``kb`` estimates (when ``spec.estimates`` is kb).
    ``on_outcome`` sees each outcome as it comes in (an array task writes it to its shard).
    """
    outcomes: list[InstanceOutcome] = []
    total = len(instances)
    known = predictions or {}
    if jobs <= 1:
        for instance in instances:
            outcomes.append(run_instance(instance, spec, known.get(instance.id)))
            if on_outcome:
                on_outcome(outcomes[-1])
            if progress:
                progress(len(outcomes), total)
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = [pool.submit(run_instance, i, spec, known.get(i.id)) for i in instances]
            for future in as_completed(futures):
                outcomes.append(future.result())
                if on_outcome:
                    on_outcome(outcomes[-1])
                if progress:
                    progress(len(outcomes), total)
    order = {i.id: k for k, i in enumerate(instances)}
    return sorted(outcomes, key=lambda o: order[o.instance])


def record_dict(record: RunRecord) -> dict[str, object]:
    return asdict(record)


def outcome_from_dict(data: dict[str, Any]) -> InstanceOutcome:
    """The inverse of ``asdict(outcome)`` (JSON keeps every float exactly)."""
    return InstanceOutcome(
        data["instance"],
        data["workflow_sha256"],
        data["platform_sha256"],
        tuple(RunRecord(**r) for r in data["records"]),
        dict(data["seconds"]),
        tuple(Hold(**h) for h in data["load"]),
    )


def spec_from_dict(data: dict[str, Any]) -> RunSpec:
    """The inverse of ``asdict(spec)``."""
    load = data.get("load")
    return RunSpec(
        tuple(data["schedulers"]),
        data["network_model"],
        tuple(data["peers"]),
        data["estimates"],
        data["noise"],
        data["uncertainty_seed"],
        BackgroundConfig(**load) if load is not None else None,
        data.get("reruns", 0),
    )
