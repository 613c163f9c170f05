"""Runtime uncertainty: schedulers plan on *estimates*, the simulator runs the *actual* values.

The exact model (every task's work and every node's speed known to the scheduler) is the
``oracle`` setting. Real clusters know neither: users request walltimes, nodes of one type
differ, files vary. This module makes both sides explicit, seeded and pure:

* :func:`realise` draws the actual execution: per-task lognormal noise on the work, per-node
  slowdowns (a persistent factor per node class times a per-node factor, so nodes of one type
  differ), lognormal noise on file sizes.
* :func:`estimate` gives what a scheduler plans on: ``user`` walltime requests, ``mean``
  per-category means of the nominal runtimes, ``kb`` runtimes predicted from past executions
  (:class:`RuntimePredictions`, which the knowledge base computes; this floor only applies them),
  or ``oracle`` (the values given, unchanged).

**User requests** follow what trace studies report. Estimates are *modal*: "only 20 different
values are used as estimates for about 90% of the jobs" (Tsafrir, Etsion and Feitelson,
"Modeling User Runtime Estimates", JSSPP 2005, abstract), so a request is rounded up to one of
:data:`MODAL_WALLTIMES` (round minutes and hours; the list itself is our assumption, not a trace
figure). Within that, the request inflates the runtime by a factor uniform in ``[1, 1 + f]``, the
"badness factor" model of Mu'alem and Feitelson (IEEE TPDS 12(6), 2001) as restated by Tsafrir
and Feitelson ("The Dynamics of Backfilling", 2006: estimate uniform in ``[r, (f + 1) r]``), who
note it alone misses the modality, hence both. A workflow user writes one walltime per task
*category* (one job script per step), so the request covers the category's longest nominal
runtime. The default ``f = 3`` is an assumption, not a figure we could verify from a trace. Jobs
that outrun their request are not killed here (the simulator has no kill-time).

**Actual values**: the default spreads (``task_sigma`` 0.3, ``file_sigma`` 0.2, ``class_sigma``
0.15, ``node_sigma`` 0.08) are assumptions chosen to be visible but not dominant; no published
per-task runtime-variability figure for these WfCommons recipes was verified here.

**Recurring workflows.** Production pipelines run again and again on the same cluster (Jockey,
Ferguson et al., EuroSys 2012, predicts recurring production jobs from their earlier runs).
Run ``r`` of an instance meets the same persistent draw (its tasks' inputs, its nodes) and its
own run-to-run variation, lognormal with ``run_sigma`` (0.1: our assumption). Run 0 is what
:func:`realise` returns, which stands for the persistent draw times run 0's own variation, so
:func:`rerun` gives run ``r`` as run 0 times ``exp(run_sigma * (z_r - z_0))``: every run,
run 0 included, varies alike around the persistent value, and run 0 (the one the bench
measures) is unchanged by the existence of the others.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

import numpy as np

from sim.errors import InputError
from sim.model import REFERENCE_SPEED, File, Node, Platform, Task, Workflow

EstimateMode = Literal["user", "mean", "kb", "oracle"]
ESTIMATE_MODES: tuple[str, ...] = ("user", "mean", "kb", "oracle")

MODAL_WALLTIMES: tuple[float, ...] = tuple(
    60.0 * m
    for m in (1, 2, 5, 10, 15, 20, 30, 45, 60, 90, 120, 180, 240, 360, 480, 720, 1440, 2880)
)
"""Round walltimes (seconds) a request is rounded up to: 1 min ... 48 h (our assumption)."""


@dataclass(frozen=True)
class UncertaintyConfig:
    """Every parameter of the estimate / actual split; ``seed`` fixes what is persistent."""

    seed: int = 0
    """Seeds the persistent draws: per node-class slowdowns and per-category request factors."""
    task_sigma: float = 0.3
    """Lognormal sigma of a task's actual work over its nominal work (median 1)."""
    file_sigma: float = 0.2
    """Lognormal sigma of a file's actual size over its nominal size (median 1)."""
    class_sigma: float = 0.15
    """Lognormal sigma of the persistent slowdown of a node class (the same on every platform:
    a hardware generation that runs below its specification); learnable from history."""
    node_sigma: float = 0.08
    """Lognormal sigma of one node's own slowdown on top of its class's."""
    request_factor: float = 3.0
    """``f``: a user request inflates the category's longest runtime by U[1, 1 + f]."""
    modal_walltimes: tuple[float, ...] = MODAL_WALLTIMES
    run_sigma: float = 0.1
    """Lognormal sigma of a task's run-to-run variation when the same workflow runs again on
    the same cluster (:func:`rerun`; it never changes run 0)."""

    def scaled(self, noise: float) -> UncertaintyConfig:
        """The same config with every actual-value spread multiplied by ``noise`` (0: exact)."""
        if not noise >= 0:
            raise InputError("--noise", [f"noise must be a non-negative number, got {noise}"])
        return replace(
            self,
            task_sigma=self.task_sigma * noise,
            file_sigma=self.file_sigma * noise,
            class_sigma=self.class_sigma * noise,
            node_sigma=self.node_sigma * noise,
            run_sigma=self.run_sigma * noise,
        )

    @property
    def exact(self) -> bool:
        """Whether actual values equal the nominal ones (every spread is zero)."""
        return not (self.task_sigma or self.file_sigma or self.class_sigma or self.node_sigma)


def node_class(node: Node) -> str:
    """The hardware type a node belongs to: GPU or CPU, and its core count (``cpu-16c``)."""
    return f"{'gpu' if node.gpus else 'cpu'}-{node.cores}c"


def _stable_rng(*parts: object) -> np.random.Generator:
    """A generator keyed by names (crc32), so a draw never depends on iteration order."""
    key = [zlib.crc32(str(p).encode()) for p in parts]
    return np.random.default_rng(key)


def class_slowdown(cfg: UncertaintyConfig, node_type: str) -> float:
    """The persistent slowdown (actual time over nominal) of every node of ``node_type``."""
    if cfg.class_sigma == 0:
        return 1.0
    return float(math.exp(cfg.class_sigma * _stable_rng(cfg.seed, "class", node_type).normal()))


def node_slowdown(cfg: UncertaintyConfig, platform: Platform, node: Node) -> float:
    """The persistent slowdown of ``node`` on ``platform``: its class's times its own, the
    latter keyed by the platform's and the node's names (not by the workflow that runs), as a
    machine is as slow for one job as for the next; what the knowledge base's node fit
    assumes when it pools a platform's runs of different workflows."""
    own = 1.0
    if cfg.node_sigma:
        draw = _stable_rng(cfg.seed, "node", platform.name, node.name).standard_normal()
        own = float(math.exp(cfg.node_sigma * draw))
    return class_slowdown(cfg, node_class(node)) * own


def realise(
    workflow: Workflow, platform: Platform, cfg: UncertaintyConfig, rng: np.random.Generator
) -> tuple[Workflow, Platform]:
    """The actual workflow and platform one execution meets (pure in ``rng``'s state).

    Draw order is fixed (tasks, then files, in declaration order). The nodes are not drawn
    from ``rng``: a node's slowdown belongs to the machine (:func:`node_slowdown`), so every
    workflow that runs on the platform meets the same nodes. With every spread at zero the
    inputs come back unchanged, so the exact setting is reproduced.
    """
    if cfg.exact:
        return workflow, platform
    task_noise = np.exp(cfg.task_sigma * rng.standard_normal(len(workflow.tasks)))
    file_noise = np.exp(cfg.file_sigma * rng.standard_normal(len(workflow.files)))
    tasks = tuple(
        replace(t, work=t.work * float(k)) for t, k in zip(workflow.tasks, task_noise, strict=True)
    )
    files = tuple(
        File(f.id, max(0, round(f.size * float(k))))
        for f, k in zip(workflow.files, file_noise, strict=True)
    )
    nodes = tuple(
        replace(n, speed=n.speed / node_slowdown(cfg, platform, n)) for n in platform.nodes
    )
    actual_wf = Workflow(workflow.name, tasks, files, workflow.description, workflow.meta)
    return actual_wf, replace(platform, nodes=nodes)


def rerun(actual: Workflow, cfg: UncertaintyConfig, seed: int, run: int) -> Workflow:
    """Run ``run`` of the instance whose run 0 is ``actual`` (:func:`realise`'s, for ``seed``).

    Each task's work is multiplied by ``exp(run_sigma * (z_run - z_0))``, one standard normal
    per task and run keyed by the instance seed, ``cfg.seed`` and the run, so a run is the same
    in every process. Files and nodes are the same in every run (the same inputs, the same
    machines). Run 0 is ``actual`` itself.
    """
    if run == 0 or cfg.run_sigma == 0:
        return actual
    n = len(actual.tasks)
    return _scaled(
        actual,
        np.exp(cfg.run_sigma * (_run_normals(cfg, seed, run, n) - _run_normals(cfg, seed, 0, n))),
    )


def typical_run(actual: Workflow, cfg: UncertaintyConfig, seed: int) -> Workflow:
    """What every run of the instance whose run 0 is ``actual`` varies around: run 0 less its
    own run-to-run draw, i.e. each task's work divided by ``exp(run_sigma * z_0)``.

    The most any number of earlier runs could tell about a task (:func:`rerun` draws run
    ``r`` as this times ``exp(run_sigma * z_r)``); ``actual`` itself when ``run_sigma`` is 0.
    """
    if cfg.run_sigma == 0:
        return actual
    return _scaled(actual, np.exp(-cfg.run_sigma * _run_normals(cfg, seed, 0, len(actual.tasks))))


def _run_normals(cfg: UncertaintyConfig, seed: int, run: int, n: int) -> np.ndarray:
    """One standard normal per task for ``run`` of the instance ``seed`` (keyed, not stateful)."""
    return _stable_rng(seed, cfg.seed, "run", run).standard_normal(n)


def _scaled(workflow: Workflow, factor: np.ndarray) -> Workflow:
    """``workflow`` with each task's work multiplied by its entry of ``factor``."""
    tasks = tuple(
        replace(t, work=t.work * float(k)) for t, k in zip(workflow.tasks, factor, strict=True)
    )
    return Workflow(workflow.name, tasks, workflow.files, workflow.description, workflow.meta)


@dataclass(frozen=True)
class CategoryPrediction:
    """A predicted runtime (seconds on the reference machine) and its spread."""

    runtime: float
    log_spread: float
    """Standard deviation of log(observed / predicted) among the samples."""
    samples: int


@dataclass(frozen=True)
class RuntimePredictions:
    """What past executions predict: runtime per task category, slowdown per node class.

    Computed by the knowledge base (``kb.estimates``) from retrieved realised executions; plain
    data so it travels to bench worker processes.
    """

    categories: Mapping[str, CategoryPrediction] = field(default_factory=dict)
    node_classes: Mapping[str, float] = field(default_factory=dict)
    """Node class -> predicted slowdown (actual time over nominal time)."""
    request_ratio: float = 1.0
    """Median actual runtime over request, for categories the history never saw."""
    cases: int = 0
    tasks: Mapping[str, float] = field(default_factory=dict)
    """Task id -> runtime (s on the reference machine) in earlier runs of this very workflow
    (a recurring one); empty when none was retrieved. Overrides the task's category."""
    nodes: Mapping[str, float] = field(default_factory=dict)
    """Node name -> slowdown measured in earlier runs on this very platform (its class's, as
    recurring runs elsewhere measured it, where no run reached the node); overrides
    ``node_classes``."""
    task_log_spread: float = 0.0
    """Run-to-run standard deviation of a task's log runtime around its value in ``tasks``."""
    runs: int = 0
    """Earlier runs of this workflow behind ``tasks``."""
    node_covariance: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    """Node -> node -> posterior covariance of the two nodes' log slowdowns in ``nodes``: how
    well the runs compared them (a node's own variance where it ran alone)."""
    task_nodes: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    """Task id in ``tasks`` -> node -> the share of its earlier runs it ran there: its value
    in ``tasks`` is what it took there less those nodes' slowdowns, so it moves with them."""
    sources: tuple[str, ...] = ()
    """Where the cases behind the predictions came from, one per case (``simulated...`` or
    ``slurm:<run id>`` for a real run), so a plan can say which history it used."""

    def runtime_of(self, task: Task) -> float | None:
        """The predicted reference runtime of ``task`` (its own, else its category's), or None."""
        if task.id in self.tasks:
            return self.tasks[task.id]
        known = self.categories.get(task_category(task))
        return known.runtime if known is not None else None

    def slowdown_of(self, node: Node) -> float:
        """The predicted slowdown of ``node`` (its own, else its class's, else 1)."""
        if node.name in self.nodes:
            return self.nodes[node.name]
        return self.node_classes.get(node_class(node), 1.0)


def user_request(cfg: UncertaintyConfig, category: str, longest_runtime: float) -> float:
    """The walltime (s) a user requests for a category whose longest nominal runtime is given."""
    factor = 1.0 + cfg.request_factor * float(_stable_rng(cfg.seed, "request", category).random())
    wanted = longest_runtime * factor
    for value in cfg.modal_walltimes:
        if value >= wanted:
            return value
    return max(wanted, cfg.modal_walltimes[-1]) if cfg.modal_walltimes else wanted


def user_requests(workflow: Workflow, cfg: UncertaintyConfig) -> dict[str, float]:
    """Category -> requested walltime (s) for every category of ``workflow``."""
    longest: dict[str, float] = {}
    for t in workflow.tasks:
        c = task_category(t)
        longest[c] = max(longest.get(c, 0.0), t.runtime)
    return {c: user_request(cfg, c, r) for c, r in longest.items()}


def task_category(task: Task) -> str:
    """The category a task is estimated by (its name when it has no category)."""
    return task.category or task.name or task.id


def _with_runtimes(workflow: Workflow, runtime: Mapping[str, float]) -> Workflow:
    """``workflow`` with each task's work set so it runs ``runtime[category]`` on the reference."""
    tasks = tuple(
        replace(t, work=runtime[task_category(t)] * REFERENCE_SPEED * t.cores)
        for t in workflow.tasks
    )
    return Workflow(workflow.name, tasks, workflow.files, workflow.description, workflow.meta)


def estimate(
    workflow: Workflow,
    cfg: UncertaintyConfig,
    mode: EstimateMode,
    predictions: RuntimePredictions | None = None,
) -> Workflow:
    """The workflow a scheduler plans on (files keep their nominal sizes).

    ``oracle`` returns ``workflow`` itself: pass the *actual* workflow for clairvoyant planning.
    ``kb`` needs ``predictions``: a task takes its own predicted runtime (earlier runs of this
    workflow), else its category's; a category they lack falls back to the user request times
    the predictions' ``request_ratio``.
    """
    if mode == "oracle":
        return workflow
    if mode == "mean":
        sums: dict[str, list[float]] = {}
        for t in workflow.tasks:
            sums.setdefault(task_category(t), []).append(t.runtime)
        return _with_runtimes(workflow, {c: float(np.mean(v)) for c, v in sums.items()})
    requests = user_requests(workflow, cfg)
    if mode == "user":
        return _with_runtimes(workflow, requests)
    if mode == "kb":
        if predictions is None:
            raise InputError("--estimates kb", ["kb estimates need predictions from a kb"])
        known = predictions

        def runtime(task: Task) -> float:
            found = known.runtime_of(task)
            return requests[task_category(task)] * known.request_ratio if found is None else found

        tasks = tuple(
            replace(t, work=runtime(t) * REFERENCE_SPEED * t.cores) for t in workflow.tasks
        )
        return Workflow(workflow.name, tasks, workflow.files, workflow.description, workflow.meta)
    raise InputError(
        "--estimates", [f"unknown estimate mode {mode!r}: {', '.join(ESTIMATE_MODES)}"]
    )


def estimate_from_history(workflow: Workflow, predictions: RuntimePredictions) -> Workflow:
    """The workflow a real submission plans on: each task's runtime as ``predictions`` give
    it (its own from earlier runs, else its category's), else the runtime the workflow states
    times the history's ``request_ratio`` (1 without history).

    Unlike :func:`estimate` (the bench's ``kb`` mode, which first draws a synthetic user
    request), the stated runtime *is* the submitter's request here, as the knowledge base
    recorded it with every run of the workflow.
    """
    tasks = tuple(
        replace(t, work=found * REFERENCE_SPEED * t.cores)
        if (found := predictions.runtime_of(t)) is not None
        else replace(t, work=t.work * predictions.request_ratio)
        for t in workflow.tasks
    )
    return Workflow(workflow.name, tasks, workflow.files, workflow.description, workflow.meta)


def planning_platform(platform: Platform, predictions: RuntimePredictions | None) -> Platform:
    """``platform`` with each node slowed by its predicted slowdown (kb estimates): its own
    when earlier runs on this platform measured it, else its class's."""
    if predictions is None or not (predictions.node_classes or predictions.nodes):
        return platform
    nodes = tuple(replace(n, speed=n.speed / predictions.slowdown_of(n)) for n in platform.nodes)
    return replace(platform, nodes=nodes)


def planned_inputs(
    workflow: Workflow, platform: Platform, planned_on: Mapping[str, Mapping[str, float]] | None
) -> tuple[Workflow, Platform]:
    """The workflow and platform a run was planned on: as submitted, or with the runtimes and
    node slowdowns of its ``planned_on`` (a plan on the knowledge base's estimates), so a
    re-simulation of the run (an explanation, a what-if) assumes what the plan assumed."""
    if not planned_on:
        return workflow, platform
    runtimes, slowdowns = planned_on.get("runtimes", {}), planned_on.get("slowdowns", {})
    tasks = tuple(
        replace(t, work=runtimes[t.id] * REFERENCE_SPEED * t.cores) if t.id in runtimes else t
        for t in workflow.tasks
    )
    nodes = tuple(replace(n, speed=n.speed / slowdowns.get(n.name, 1.0)) for n in platform.nodes)
    return (
        Workflow(workflow.name, tasks, workflow.files, workflow.description, workflow.meta),
        replace(platform, nodes=nodes),
    )


def runtime_matrix(workflow: Workflow, platform: Platform) -> np.ndarray:
    """(tasks, nodes) compute seconds of every task on every node (``work / (speed * cores)``)."""
    work = np.array([t.work / t.cores for t in workflow.tasks])
    speed = np.array([n.speed for n in platform.nodes])
    return work[:, None] / speed[None, :]


def estimate_error(
    planned: tuple[Workflow, Platform], actual: tuple[Workflow, Platform]
) -> dict[str, float]:
    """MAPE and median |log ratio| of planned over actual compute time, over (task, node) pairs.

    Both sides must list the same tasks and nodes in the same order (as :func:`estimate` and
    :func:`realise` keep them).
    """
    est = runtime_matrix(*planned)
    act = runtime_matrix(*actual)
    keep = act > 0
    ratio = est[keep] / act[keep]
    return {
        "mape": float(np.mean(np.abs(ratio - 1.0))),
        "median_abs_log_ratio": float(np.median(np.abs(np.log(ratio)))) if ratio.size else 0.0,
        "bias": float(np.exp(np.mean(np.log(ratio)))) if ratio.size else 1.0,
        "pairs": int(ratio.size),
    }
