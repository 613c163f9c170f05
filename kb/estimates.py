"""Calibrated runtime estimates from past executions: retrieval as the source of ``kb`` estimates.

The knowledge base holds *realised* executions: each case records the workflow as it was
submitted (every task's work set from the user's walltime request, which is all a submitter
knows), the nominal platform, and the timeline the (noisy) execution actually produced. From
the cases retrieved for a new workflow, :func:`predict_runtimes` fits a two-way multiplicative
model on the observed compute times: ``observed = runtime[category] * slowdown[node class]``
(in log space, alternating medians, which resists outliers), with the per-category spread of the
residuals. :mod:`sim.uncertainty` turns that into the workflow and platform a scheduler plans on.

**Recurring workflows.** When the platform's own recent cases (found by lookup on its content
hash, :meth:`KnowledgeBase.cases_on`) include earlier runs of *this very* workflow (the same
content hash of the submitted graph), the fit goes one step further (:func:`recurring_fit`):
a least-squares task + class + node fit (:mod:`kb.node_fit`) over those runs, the platform's
other runs and the store's recurring runs elsewhere gives each task's own runtime, each node's
own slowdown (its class's where no run reached it), how well the runs compared the nodes, and
the run-to-run spread. Which tasks and which nodes come out slow is what per-category
predictions cannot carry and what decides a choice between close plans (docs/learned.md,
"Recurring workflows").

**Real history first.** Where the retrieved cases, or the platform's own, include runs the cluster
really executed (``slurm:<run id>``, :mod:`kb.real_runs`), the fit reads those alone
(:func:`real_first`): a real run measured the tasks and nodes; a simulated one assumed them. The
predictions name the sources of the cases they rest on.

:func:`seed_history` fills a store with such executions (HEFT planned on the user requests and
replayed on the realised values, the situation a cluster records day to day).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace

import numpy as np

from kb.node_fit import hierarchical_fit, observations
from kb.provenance import confirmed_ids
from kb.records import (
    REAL_PREFIX,
    CaseRecord,
    case_from_result,
    is_real,
    platform_hash,
    workflow_hash,
)
from kb.store import KnowledgeBase
from policy.heft import HEFT
from policy.planning_views import instance_views, replay
from sim.background import BackgroundConfig
from sim.model import Platform, Workflow
from sim.schedule import NetworkModel
from sim.uncertainty import CategoryPrediction, RuntimePredictions, UncertaintyConfig, node_class

REALISED = "simulated-realised"
"""Source of the cases :func:`seed_history` stores (simulated, with realised noise)."""
RUN_LOAD_SEED = 100
"""A recurring workflow's run ``r`` >= 1 meets the background load of seed ``100 + r`` (apart
from the bench's ``--load seed=K`` draws, which use small seeds)."""
FIT_ROUNDS = 6
"""Alternations of the two-way median fit (it settles within a few)."""
PLATFORM_HISTORY = 32
"""The platform's own most recent cases read for a recurring workflow's fit (its earlier runs
and other workflows' runs on the same nodes)."""
RECURRING_HISTORY = 256
"""The store's most recent runs of recurring workflows on other platforms read for the same
fit (they measure the node classes, :mod:`kb.node_fit`)."""


def predict_runtimes(
    cases: Sequence[CaseRecord],
    min_samples: int = 2,
    request: Workflow | None = None,
    platform: Platform | None = None,
    history: Sequence[CaseRecord] | None = None,
    wider: Sequence[CaseRecord] = (),
) -> RuntimePredictions:
    """Per-category runtime and spread, per-class slowdown, from realised ``cases``.

    Categories seen fewer than ``min_samples`` times are left out (the caller falls back to
    the user request times :attr:`RuntimePredictions.request_ratio`). Given the ``request``
    (as submitted) and its ``platform``, earlier runs of that same workflow on that same
    platform add per-task runtimes and per-node slowdowns (:func:`recurring_fit`); they are
    looked for in ``history`` (the platform's own cases, :meth:`KnowledgeBase.cases_on`), else
    among ``cases``; the platform's runs of other workflows help pin down its nodes, and
    ``wider`` (recurring runs on other platforms, :meth:`KnowledgeBase.recurring_cases`) their
    classes.
    """
    obs = [o for c in cases for o in observations(c)]
    if not obs:
        return RuntimePredictions(cases=len(cases))
    log_class = {o.node_class: 0.0 for o in obs}
    log_cat: dict[str, float] = {}
    for _ in range(FIT_ROUNDS):
        log_cat = _medians((o.category, o.log_runtime - log_class[o.node_class]) for o in obs)
        log_class = _medians((o.node_class, o.log_runtime - log_cat[o.category]) for o in obs)
    residuals: dict[str, list[float]] = defaultdict(list)
    for o in obs:
        residuals[o.category].append(o.log_runtime - log_cat[o.category] - log_class[o.node_class])
    categories = {
        c: CategoryPrediction(math.exp(log_cat[c]), float(np.std(r)), len(r))
        for c, r in residuals.items()
        if len(r) >= min_samples
    }
    ratio = float(np.median([o.log_runtime - o.log_request for o in obs]))
    predictions = RuntimePredictions(
        categories=categories,
        node_classes={k: math.exp(v) for k, v in log_class.items()},
        request_ratio=math.exp(ratio),
        cases=len(cases),
    )
    if request is None or platform is None:
        return predictions
    here, wanted = platform_hash(platform), workflow_hash(request)
    local = [c for c in (cases if history is None else history) if c.platform_hash == here]
    if not any(c.workflow_hash == wanted for c in local):
        return predictions
    elsewhere = [c for c in wider if c.platform_hash != here]
    return recurring_fit(predictions, request, platform, local + elsewhere)


def recurring_fit(
    predictions: RuntimePredictions,
    request: Workflow,
    platform: Platform,
    cases: Sequence[CaseRecord],
) -> RuntimePredictions:
    """``predictions`` plus per-task runtimes and per-node slowdowns for ``request`` on
    ``platform``, from ``cases``: its earlier runs there, the platform's runs of other
    workflows and recurring runs on other platforms (for the node classes).

    The hierarchical fit (:func:`kb.node_fit.hierarchical_fit`) gives each task its own
    runtime and each node its class's slowdown plus its own; a node no run reached gets its
    class's, which recurring runs on other platforms measure. The tasks' runtimes and the
    slowdowns are in one frame (the fit's), so they multiply back to the observed times.
    The spread is the standard deviation of the residuals of this workflow's tasks seen in at
    least two runs (one degree of freedom per task).
    """
    here, wanted = platform_hash(platform), workflow_hash(request)
    runs = [observations(c) for c in cases if c.workflow_hash == wanted and c.platform_hash == here]
    if not any(runs):
        return predictions
    fit = hierarchical_fit(cases)
    slowdown = {n.name: fit.node_log(here, n.name, node_class(n)) for n in platform.nodes}
    squares: dict[str, list[float]] = defaultdict(list)
    for o in (o for run in runs for o in run):
        own = fit.task_log(here, wanted, o.task)
        squares[o.task].append((o.log_runtime - own - slowdown[o.node]) ** 2)
    repeated = [v for v in squares.values() if len(v) > 1]
    dof = sum(len(v) - 1 for v in repeated)
    names = [n.name for n in platform.nodes]
    covariance = fit.covariance(here, [(n.name, node_class(n)) for n in platform.nodes])
    where: dict[str, dict[str, float]] = defaultdict(dict)
    for o in (o for run in runs for o in run):
        where[o.task][o.node] = where[o.task].get(o.node, 0.0) + 1.0 / len(squares[o.task])
    return replace(
        predictions,
        tasks={t: math.exp(fit.task_log(here, wanted, t)) for t in squares},
        nodes={n: math.exp(v) for n, v in slowdown.items()},
        task_log_spread=math.sqrt(sum(map(sum, repeated)) / dof) if dof else 0.0,
        runs=len(runs),
        node_covariance={
            a: dict(zip(names, map(float, row), strict=True))
            for a, row in zip(names, covariance, strict=True)
        },
        task_nodes=dict(where),
    )


def _medians(pairs: Iterable[tuple[str, float]]) -> dict[str, float]:
    """Key -> median of its values."""
    groups: dict[str, list[float]] = defaultdict(list)
    for key, value in pairs:
        groups[key].append(value)
    return {k: float(np.median(v)) for k, v in groups.items()}


def retrieve_predictions(
    kb: KnowledgeBase,
    request: Workflow,
    platform: Platform,
    k: int = 8,
    wider: Sequence[CaseRecord] | None = None,
) -> RuntimePredictions:
    """Predictions from the ``k`` stored executions most similar to ``request`` on ``platform``.

    ``request`` is the workflow as submitted (user walltimes), the same view the stored cases
    were recorded with, so the query compares like with like. The platform's own recent cases
    (:data:`PLATFORM_HISTORY`, by lookup) are where a recurring workflow's earlier runs are
    found, however many other similar cases the store holds; ``wider`` (the store's recurring
    runs, :data:`RECURRING_HISTORY`; read here when None) measure the node classes.
    """
    hits = kb.query(request, platform, k)
    records = [r for r in (h.record for h in hits) if r is not None]
    history = kb.cases_on(platform, PLATFORM_HISTORY)
    if wider is None:  # read only for a workflow that recurs here (a few hundred records)
        recurs = any(c.workflow_hash == workflow_hash(request) for c in history)
        wider = kb.recurring_cases(RECURRING_HISTORY) if recurs else []
    # a real run's case is used only as far as sacct confirms it (one sacct call for all)
    ok = confirmed_ids([*records, *history, *wider], kb.accounting)
    records, history, wider = (
        [c for c in cases if c.case_id in ok] for cases in (records, history, wider)
    )
    records, history, wider = real_first(records), real_first(history), real_first(wider)
    predictions = predict_runtimes(
        records, request=request, platform=platform, history=history, wider=wider
    )
    used = {c.case_id: c.source for c in records}
    if predictions.runs:  # the recurring fit read the platform's history too
        used |= {c.case_id: c.source for c in history if c.platform_hash == platform_hash(platform)}
    return replace(predictions, sources=tuple(sorted(used.values())))


def history_words(predictions: RuntimePredictions) -> str:
    """Which history a plan's runtimes came from, in words (what ``submit --estimates kb``
    prints and the decision log keeps): the real runs by id, else how many simulated cases."""
    real = sorted(s.removeprefix(REAL_PREFIX) for s in predictions.sources if is_real(s))
    simulated = len(predictions.sources) - len(real)
    if not predictions.sources:
        return "kb: no similar case stored, runtimes as the workflow states them"
    what = (
        f"{len(real)} real run{'s' * (len(real) != 1)} ({', '.join(real)})"
        if real
        else f"{simulated} simulated case{'s' * (simulated != 1)} (no real run matched)"
    )
    if predictions.runs:
        what += f"; this workflow's own {predictions.runs} earlier run(s) give each task's runtime"
    return "kb: " + what


def real_first(cases: Sequence[CaseRecord]) -> list[CaseRecord]:
    """The real runs among ``cases`` when there is one (what the cluster measured beats what
    the simulator assumed), else every case."""
    real = [c for c in cases if is_real(c.source)]
    return real or list(cases)


def realised_case(
    workflow: Workflow,
    platform: Platform,
    seed: int,
    cfg: UncertaintyConfig,
    workflow_key: str,
    network_model: NetworkModel = "fair",
    run: int = 0,
) -> CaseRecord:
    """One day-to-day execution: HEFT plans on the user's requests, the realised values run.

    The realisation is the bench's for ``seed`` (:func:`policy.planning_views.instance_views`),
    so history and bench draw from the same model; history uses seeds the bench never does,
    or, for a recurring workflow, the bench's own instance in runs the bench never measures
    (``run`` >= 1; the bench measures run 0). Each such run meets its own day's load (half
    the nodes held for a while, :mod:`sim.background` seeded by the run), so, as on a shared
    cluster, the runs use different nodes, which is what lets a node's own slowdown be told
    from its tasks' own runtimes.
    """
    load = BackgroundConfig(seed=RUN_LOAD_SEED + run) if run else None
    views = instance_views(workflow, platform, seed, "user", cfg, background=load, run=run)
    request, _ = views.planning
    schedule = HEFT().schedule(request, platform, views.occupancy)
    result, _ = replay(schedule, views, network_model)
    return case_from_result(
        request,
        platform,
        result,
        workflow_key=workflow_key,
        source=REALISED,
        recorded_at="1970-01-01T00:00:00+00:00",
        scheduler_name="heft",
    )


Progress = Callable[[int], None]


def seed_history(
    kb: KnowledgeBase,
    instances: Sequence[tuple[str, Workflow, Platform, int]],
    cfg: UncertaintyConfig,
    progress: Progress | None = None,
    runs: Sequence[int] = (0,),
) -> int:
    """Store realised executions of every ``(key, workflow, platform, seed)``, one per run in
    ``runs`` (run 0 keeps the bare key, run r the key ``KEY;runR``); returns cases added."""
    added = 0
    for key, workflow, platform, seed in instances:
        for run in runs:
            run_key = f"{key};run{run}" if run else key
            case = realised_case(workflow, platform, seed, cfg, run_key, run=run)
            added += kb.add_cases([case])
            if progress:
                progress(1)
    return added
