"""``wass-chat bench --arrivals``: many workflows at once on a shared cluster, as load grows.

For each stream size ``N`` (say 10 to 150 workflows arriving as a Poisson process over one
window, or a replayed trace), each platform and each seed, every scheduler runs the whole
stream through the simulator as one merged workflow (:mod:`sim.arrivals`), and every resulting
schedule, copies included, is checked by the validator (a violation stops the bench). How each
name runs online:

* ``online-heft``, ``fifo-deft``, ``tdca``, ``lachesis`` (with its ablation
  ``lachesis-rank``) and ``decima`` (with ``decima-untrained``): :mod:`policy.online`,
  :mod:`policy.fifo_deft`, :mod:`policy.tdca`, :mod:`policy.learned.lachesis`,
  :mod:`policy.learned.decima` (all but the first run task copies);
* a classic list scheduler (``heft``, ``cpop``, ``peft``, ``minmin``...): on each arriving
  workflow on its own (:class:`policy.online.PerArrival`);
* a dynamic scheduler (``slurm``, ``wass``, ``random``, ``eft``) and the learned planners
  (``policy``, ``dqn``): as they are, deciding each task when it becomes ready.

Metrics (:func:`sim.metrics.stream_summary`, the one metrics module): the stream's makespan,
its speedup, and the SLR averaged over workflows; per (scheduler, N), geometric means over the
seeds with 95% bootstrap intervals (:mod:`policy.bench.stats`), and the scheduler's CPU time
per task placed (its decision latency; for dynamic ones the whole simulation's time, an upper
bound). Records are sorted, so results do not depend on ``--jobs``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from typing import Any

from policy.base import ListScheduler, Scheduler, StaticScheduler, plan_and_simulate
from policy.bench.matrix import PlatformSource
from policy.bench.stats import geometric_mean_bootstrap_ci
from policy.registry import (
    UnknownSchedulerError,
    canonical_name,
    get_scheduler,
    scheduler_names,
)
from policy.validate import check_schedule
from sim.arrivals import Stream, StreamSpec, merge_stream, poisson_stream, read_trace
from sim.engine import simulate
from sim.errors import InputError
from sim.metrics import stream_summary
from sim.model import Platform, Workflow
from sim.placement import EarliestFinishPlacement
from sim.schedule import NetworkModel, SimResult

STREAM_ONLY = (
    "online-heft",
    "fifo-deft",
    "eft",
    "lachesis",
    "lachesis-rank",
    "tdca",
    "decima",
    "decima-untrained",
)
"""Names the arrivals bench knows besides the registry's."""
DEFAULT_ARRIVAL_SCHEDULERS = (
    "online-heft",
    "fifo-deft",
    "heft",
    "peft",
    "minmin",
    "eft",
    "slurm",
    "policy",
    "dqn",
    "lachesis",
    "lachesis-rank",
    "tdca",
    "decima",
    "decima-untrained",
)
COPYING = ("fifo-deft", "tdca", "lachesis", "lachesis-rank", "decima", "decima-untrained")
"""Names whose plans run task copies (checked with ``copies=True``)."""
METRICS = ("makespan", "speedup", "slr")


@dataclass(frozen=True)
class ArrivalSpec:
    """What ``bench --arrivals`` runs: the streams and the schedulers."""

    counts: tuple[int, ...] = (10, 25, 50, 100, 150)
    """Stream sizes (workflows per stream); ignored with a trace."""
    stream: StreamSpec = field(default_factory=StreamSpec)
    """How each stream is drawn (its ``count`` is set per size)."""
    trace: str | None = None
    """A CSV trace to replay instead of drawing streams (``sim.arrivals.read_trace``)."""
    schedulers: tuple[str, ...] = DEFAULT_ARRIVAL_SCHEDULERS
    network_model: NetworkModel = "fair"


@dataclass(frozen=True, slots=True)
class ArrivalInstance:
    """One stream size on one platform under one seed."""

    count: int
    platform: PlatformSource
    seed: int

    @property
    def id(self) -> str:
        return f"{self.count}|{self.platform.label}|seed{self.seed}"


@dataclass(frozen=True, slots=True)
class StreamRecord:
    """One scheduler on one stream, as simulated (and validated)."""

    instance: str
    count: int
    platform: str
    seed: int
    scheduler: str
    workflows: int
    tasks: int
    makespan: float
    speedup: float
    slr: float
    stream_slr: float
    mean_response: float
    copies: int
    """Task copies run (FIFO-DEFT's, TDCA's, Lachesis' and Decima's duplication; 0 for the
    others)."""
    cpu_seconds: float
    """The scheduler's CPU time: planning, or the whole simulation for dynamic ones."""


def stream_of(instance: ArrivalInstance, spec: ArrivalSpec) -> Stream:
    """The instance's stream: the trace, or a Poisson stream of ``count`` workflows."""
    if spec.trace:
        return read_trace(spec.trace)
    return poisson_stream(replace(spec.stream, count=instance.count), instance.seed)


def check_scheduler_names(names: tuple[str, ...]) -> tuple[str, ...]:
    """Canonical names (aliases resolved); every unknown name in one error."""
    known, unknown = [], []
    for name in names:
        try:
            known.append(name if name in STREAM_ONLY else canonical_name(name))
        except UnknownSchedulerError:
            unknown.append(name)
    if unknown:
        every = ", ".join((*STREAM_ONLY, *scheduler_names()))
        raise InputError(
            ",".join(unknown), [f"unknown scheduler {n!r}; known: {every}" for n in unknown]
        )
    return tuple(known)


def run_on_stream(
    name: str, workflow: Workflow, platform: Platform, network_model: NetworkModel
) -> tuple[SimResult, int, float]:
    """(validated result, copies run, CPU seconds) of scheduler ``name`` on a merged stream.

    The seconds are the scheduler's own (planning, or the whole simulation for a dynamic one),
    not building it (loading a checkpoint)."""
    from policy.fifo_deft import FifoDeft
    from policy.online import OnlineHEFT, PerArrival

    if name in COPYING:
        plan_copies = FifoDeft().schedule_with_copies
        if name == "tdca":
            from policy.tdca import Tdca

            plan_copies = Tdca().schedule_with_copies
        if name.startswith("lachesis"):  # its checkpoint loaded before the clock starts
            from policy.learned.lachesis import Lachesis, PolicyScores, rank_order

            scores = PolicyScores(network_model) if name == "lachesis" else rank_order
            plan_copies = Lachesis(scores, network_model, name=name).schedule_with_copies
        if name.startswith("decima"):  # likewise
            from policy.learned.decima import Decima, shipped_net, untrained

            decima = Decima(shipped_net()) if name == "decima" else untrained()
            plan_copies = decima.schedule_with_copies
        start = time.process_time()
        run = plan_copies(workflow, platform)
        seconds = time.process_time() - start
        expanded = simulate(run.expanded, platform, run.schedule, network_model)
        result = run.original_result(expanded)
        check_schedule(workflow, platform, result, copies=True)
        return result, run.copies, seconds
    if name == "eft":
        scheduler: Scheduler = EarliestFinishPlacement()
    elif name == "online-heft":
        scheduler = OnlineHEFT()
    else:
        scheduler = get_scheduler(name, seed=0, network_model=network_model)
        if isinstance(scheduler, ListScheduler):
            scheduler = PerArrival(scheduler)
    start = time.process_time()
    if isinstance(scheduler, StaticScheduler):
        schedule = scheduler.schedule(workflow, platform)
        seconds = time.process_time() - start
        result = simulate(workflow, platform, schedule, network_model)
    else:
        result = plan_and_simulate(scheduler, workflow, platform, network_model)
        seconds = time.process_time() - start
    check_schedule(workflow, platform, result)
    return result, 0, seconds


def run_instance(instance: ArrivalInstance, spec: ArrivalSpec) -> list[StreamRecord]:
    """Every scheduler of ``spec`` on one instance (what a worker process runs)."""
    stream = stream_of(instance, spec)
    workflow = merge_stream(stream)
    platform = instance.platform.build(instance.seed)
    records = []
    for name in spec.schedulers:
        result, copies, seconds = run_on_stream(name, workflow, platform, spec.network_model)
        m = stream_summary(result, workflow, platform)
        records.append(
            StreamRecord(
                instance.id,
                instance.count,
                platform.name,
                instance.seed,
                name,
                m["workflows"],
                m["tasks"],
                m["makespan"],
                m["speedup"],
                m["slr"],
                m["stream_slr"],
                m["mean_response"],
                copies,
                seconds,
            )
        )
    return records


def run_arrivals(
    instances: list[ArrivalInstance],
    spec: ArrivalSpec,
    jobs: int = 1,
    progress: Callable[[int, int], None] | None = None,
) -> list[StreamRecord]:
    """Every instance (in worker processes when ``jobs`` > 1), records in a fixed order."""
    records: list[StreamRecord] = []
    done = 0
    if jobs <= 1:
        for instance in instances:
            records += run_instance(instance, spec)
            done += 1
            if progress:
                progress(done, len(instances))
    else:
        with ProcessPoolExecutor(jobs) as pool:
            futures = [pool.submit(run_instance, i, spec) for i in instances]
            for future in as_completed(futures):
                records += future.result()
                done += 1
                if progress:
                    progress(done, len(instances))
    order = {n: k for k, n in enumerate(spec.schedulers)}
    return sorted(records, key=lambda r: (r.count, r.platform, r.seed, order[r.scheduler]))


PAIRED = ("makespan", "slr")
"""Metrics also compared stream by stream with the reference scheduler."""


def summarize_arrivals(records: list[StreamRecord], reference: str = "eft") -> dict[str, Any]:
    """Per scheduler and stream size: each metric's geometric mean over the seeds with a 95%
    bootstrap interval, copies, and the CPU time per task placed (mean). With ``reference``
    among the schedulers, also the paired ratio of makespan and SLR to its own on the same
    streams (geometric mean, 95% interval, how many streams it beat the reference on)."""
    groups: dict[tuple[str, int], list[StreamRecord]] = {}
    for r in records:
        groups.setdefault((r.scheduler, r.count), []).append(r)
    base = {(r.instance, r.platform): r for r in records if r.scheduler == reference}
    rows = []
    for (scheduler, count), group in groups.items():
        row: dict[str, Any] = {
            "scheduler": scheduler,
            "count": count,
            "seeds": len(group),
            "tasks": sum(r.tasks for r in group) / len(group),
        }
        for metric in METRICS:
            row[metric] = geometric_mean_bootstrap_ci([getattr(r, metric) for r in group]).as_dict()
        row["copies"] = sum(r.copies for r in group) / len(group)
        row["ms_per_task"] = 1e3 * sum(r.cpu_seconds / r.tasks for r in group) / len(group)
        theirs = [base.get((r.instance, r.platform)) for r in group]
        if base and all(theirs):
            for metric in PAIRED:
                ratios = [
                    getattr(r, metric) / getattr(t, metric)
                    for r, t in zip(group, theirs, strict=True)
                ]
                estimate = geometric_mean_bootstrap_ci(ratios).as_dict()
                row[f"{metric}_ratio"] = {**estimate, "wins": sum(x < 1 - 1e-9 for x in ratios)}
        rows.append(row)
    return {
        "rows": rows,
        "schedulers": list(dict.fromkeys(r.scheduler for r in records)),
        "counts": sorted({r.count for r in records}),
        "reference": reference if base else None,
    }


def arrivals_markdown(summary: dict[str, Any], title: str) -> str:
    """One table per metric: a row per scheduler, a column per stream size."""
    by = {(row["scheduler"], row["count"]): row for row in summary["rows"]}
    counts, names = summary["counts"], summary["schedulers"]
    lines = [f"# {title}", ""]
    labels = {"makespan": "makespan (s)", "speedup": "speedup", "slr": "mean SLR"}
    for metric in METRICS:
        lines += [f"## {labels[metric]}, geometric mean (95% CI) by workflows in the stream", ""]
        lines.append("| scheduler | " + " | ".join(str(c) for c in counts) + " |")
        lines.append("| --- |" + " --- |" * len(counts))
        for name in names:
            cells = []
            for count in counts:
                e = by[(name, count)][metric] if (name, count) in by else None
                cells.append(_cell(e))
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
        lines.append("")
    if summary.get("reference"):
        reference = summary["reference"]
        for metric in PAIRED:
            lines += [
                f"## {labels[metric]} over {reference}'s on the same streams (paired "
                "geometric mean, 95% CI, streams where it is lower)",
                "",
            ]
            lines.append("| scheduler | " + " | ".join(str(c) for c in counts) + " |")
            lines.append("| --- |" + " --- |" * len(counts))
            for name in names:
                cells = []
                for count in counts:
                    e = by[(name, count)].get(f"{metric}_ratio") if (name, count) in by else None
                    cells.append(
                        f"{e['value']:.3f} ({e['low']:.3f}-{e['high']:.3f}), {e['wins']}/"
                        f"{e['count']}"
                        if e
                        else ""
                    )
                lines.append(f"| {name} | " + " | ".join(cells) + " |")
            lines.append("")
    lines += ["## CPU time per task placed (ms) and copies run (mean per stream)", ""]
    lines.append("| scheduler | " + " | ".join(str(c) for c in counts) + " |")
    lines.append("| --- |" + " --- |" * len(counts))
    for name in names:
        cells = []
        for count in counts:
            row = by.get((name, count))
            extra = f", {row['copies']:.0f} copies" if row and row["copies"] else ""
            cells.append(f"{row['ms_per_task']:.3f}{extra}" if row else "")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _cell(estimate: dict[str, float] | None) -> str:
    if estimate is None:
        return ""
    value, low, high = estimate["value"], estimate["low"], estimate["high"]
    digits = 0 if value >= 100 else 2
    return f"{value:.{digits}f} ({low:.{digits}f}-{high:.{digits}f})"
