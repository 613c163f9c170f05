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
a least-squares task + node fit over those runs and the platform's other runs gives each
task's own runtime, each node's own slowdown and the run-to-run spread. Which tasks and which
nodes come out slow is what per-category predictions cannot carry and what decides a choice
between close plans (docs/learned.md, "Recurring workflows").

:func:`seed_history` fills a store with such executions (HEFT planned on the user requests and
replayed on the realised values, the situation a cluster records day to day).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from kb.records import CaseRecord, case_from_result, platform_hash, workflow_hash
from kb.store import KnowledgeBase
from policy.bench.uncertain import instance_views, replay
from policy.heft import HEFT
from sim.background import BackgroundConfig
from sim.model import REFERENCE_SPEED, Platform, Workflow
from sim.schedule import NetworkModel
from sim.uncertainty import (
    CategoryPrediction,
    RuntimePredictions,
    UncertaintyConfig,
    node_class,
    task_category,
)

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
PRIOR_WEIGHT = 1.0
"""How many observations a node's nominal speed counts as in the per-task fit (chosen on
development seeds 3-5: the nominal speed at weights 0.1-1 against the category fit's
slowdown, HEFT on the predictions 1.077-1.078x HEFT on the actual values against 1.102x)."""


@dataclass(frozen=True, slots=True)
class Observation:
    """One task's compute time in a past execution, in reference-machine seconds."""

    category: str
    node_class: str
    log_runtime: float
    log_request: float
    task: str = ""
    node: str = ""


def observations(case: CaseRecord) -> list[Observation]:
    """Every task of ``case`` with a positive recorded compute time.

    A task that ran ``d`` seconds on a node of nominal per-core speed ``s`` would have taken
    ``d * s / REFERENCE_SPEED`` on the reference machine if the node met its specification; the
    node class's slowdown is what the fit separates from that.
    """
    nodes = case.platform.node_by_name
    tasks = case.workflow.task_by_id
    found = []
    for task_id, (_ready, start, end) in case.timeline.items():
        task = tasks.get(task_id)
        node = nodes.get(case.placements.get(task_id, ""))
        if task is None or node is None or end <= start or task.runtime <= 0:
            continue
        runtime = (end - start) * node.speed / REFERENCE_SPEED
        found.append(
            Observation(
                task_category(task),
                node_class(node),
                math.log(runtime),
                math.log(task.runtime),
                task_id,
                node.name,
            )
        )
    return found


def predict_runtimes(
    cases: Sequence[CaseRecord],
    min_samples: int = 2,
    request: Workflow | None = None,
    platform: Platform | None = None,
    history: Sequence[CaseRecord] | None = None,
) -> RuntimePredictions:
    """Per-category runtime and spread, per-class slowdown, from realised ``cases``.

    Categories seen fewer than ``min_samples`` times are left out (the caller falls back to
    the user request times :attr:`RuntimePredictions.request_ratio`). Given the ``request``
    (as submitted) and its ``platform``, earlier runs of that same workflow on that same
    platform add per-task runtimes and per-node slowdowns (:func:`recurring_fit`); they are
    looked for in ``history`` (the platform's own cases, :meth:`KnowledgeBase.cases_on`), else
    among ``cases``, and the platform's runs of other workflows help pin down its nodes.
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
    runs = [observations(c) for c in local if c.workflow_hash == wanted]
    if not runs:
        return predictions
    others = [_keyed(observations(c), c.workflow_hash) for c in local if c.workflow_hash != wanted]
    return recurring_fit(predictions, runs, [n.name for n in platform.nodes], others)


def _keyed(obs: list[Observation], workflow: str) -> list[Observation]:
    """``obs`` with task keys of their workflow's (``hash:task``): another workflow's task ids
    are not the request's, and its runs share them."""
    return [replace(o, task=f"{workflow}:{o.task}") for o in obs]


def recurring_fit(
    predictions: RuntimePredictions,
    runs: Sequence[list[Observation]],
    node_names: Sequence[str],
    others: Sequence[list[Observation]] = (),
) -> RuntimePredictions:
    """``predictions`` plus per-task runtimes and per-node slowdowns from earlier ``runs`` of
    the same workflow on the same platform (each run: its observations), with the platform's
    runs of ``others`` workflows (task keys of their own) in the fit for the nodes only.

    A task-by-node fit on these runs and the others (:func:`_task_node_fit`) gives each
    task's own runtime and each node's own slowdown; the runs meet different loads, so tasks
    move between nodes and tie the nodes together. The nodes these runs never used stay at their
    nominal speed: the tasks' runtimes are measured in this fit's frame, so the class
    slowdowns of the wider fit (another frame, and unreliable on these platforms,
    docs/learned.md) would mis-scale them. The spread is the standard deviation of the
    residuals of tasks seen in at least two runs (one degree of freedom per task).
    """
    obs = [o for run in runs for o in run]
    if not obs:
        return predictions
    task_log, own = _task_node_fit(obs + [o for run in others for o in run])
    squares: dict[str, list[float]] = defaultdict(list)
    for o in obs:
        squares[o.task].append((o.log_runtime - task_log[o.task] - own[o.node]) ** 2)
    repeated = [v for v in squares.values() if len(v) > 1]
    dof = sum(len(v) - 1 for v in repeated)
    return replace(
        predictions,
        tasks={o.task: math.exp(task_log[o.task]) for o in obs},
        nodes={n: math.exp(own.get(n, 0.0)) for n in node_names},
        task_log_spread=math.sqrt(sum(map(sum, repeated)) / dof) if dof else 0.0,
        runs=len(runs),
    )


def _task_node_fit(obs: Sequence[Observation]) -> tuple[dict[str, float], dict[str, float]]:
    """Least squares ``log observed = task + node`` over ``obs``, each node held to its
    nominal speed (log slowdown 0) with the weight of :data:`PRIOR_WEIGHT` observations.

    Sparse (two nonzeros per observation), so a large pipeline with many runs stays cheap. A
    task that ran on several nodes across the runs ties those nodes' slowdowns together; a
    node no moving task reaches stays near nominal (its tasks' runtimes then carry its
    slowdown, exact on that node), and the prior fixes the one free constant of the sum.
    Medians cannot do this: the tasks seen on one node only fit it exactly and outvote the
    few that moved; nor can a category fit's node slowdowns, which absorb which categories
    each node happened to run.
    """
    from scipy.sparse import coo_matrix
    from scipy.sparse.linalg import lsqr

    tasks = sorted({o.task for o in obs})
    nodes = sorted({o.node for o in obs})
    t_index = {t: i for i, t in enumerate(tasks)}
    n_index = {n: len(tasks) + i for i, n in enumerate(nodes)}
    # one row per observation (its task and its node), then one prior row per node
    pairs = np.array([(t_index[o.task], n_index[o.node]) for o in obs]).reshape(-1, 2)
    rows = np.concatenate([np.repeat(np.arange(len(obs)), 2), len(obs) + np.arange(len(nodes))])
    cols = np.concatenate([pairs.ravel(), len(tasks) + np.arange(len(nodes))])
    values = np.concatenate([np.ones(2 * len(obs)), np.full(len(nodes), PRIOR_WEIGHT**0.5)])
    shape = (len(obs) + len(nodes), len(tasks) + len(nodes))
    design = coo_matrix((values, (rows, cols)), shape=shape)
    target = np.concatenate([[o.log_runtime for o in obs], np.zeros(len(nodes))])
    solution = lsqr(design.tocsr(), target, atol=1e-12, btol=1e-12, iter_lim=100_000)[0]
    return (
        {t: float(solution[t_index[t]]) for t in tasks},
        {n: float(solution[n_index[n]]) for n in nodes},
    )


def _medians(pairs: Iterable[tuple[str, float]]) -> dict[str, float]:
    """Key -> median of its values."""
    groups: dict[str, list[float]] = defaultdict(list)
    for key, value in pairs:
        groups[key].append(value)
    return {k: float(np.median(v)) for k, v in groups.items()}


def retrieve_predictions(
    kb: KnowledgeBase, request: Workflow, platform: Platform, k: int = 8
) -> RuntimePredictions:
    """Predictions from the ``k`` stored executions most similar to ``request`` on ``platform``.

    ``request`` is the workflow as submitted (user walltimes), the same view the stored cases
    were recorded with, so the query compares like with like. The platform's own recent cases
    (:data:`PLATFORM_HISTORY`, by lookup) are where a recurring workflow's earlier runs are
    found, however many other similar cases the store holds.
    """
    hits = kb.query(request, platform, k)
    records = [h.record for h in hits]
    history = kb.cases_on(platform, PLATFORM_HISTORY)
    return predict_runtimes(
        [r for r in records if r is not None], request=request, platform=platform, history=history
    )


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

    The realisation is the bench's for ``seed`` (:func:`policy.bench.uncertain.instance_views`),
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
        request, platform, result, workflow_key=workflow_key, source=REALISED,
        recorded_at="1970-01-01T00:00:00+00:00", scheduler_name="heft",
    )  # fmt: skip


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
