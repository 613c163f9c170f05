"""Realisations a planner can imagine: actual executions drawn from retrieved predictions.

A scheduler under uncertainty (:mod:`sim.uncertainty`) never sees the actual execution; what
it can know is what past executions predict (:class:`~sim.uncertainty.RuntimePredictions`):
per task category a runtime and the spread of observed runtimes around it (with the number
of samples behind it), per node class a slowdown; and the user's requests.
:func:`predicted_realisation` draws one execution consistent with those, from the *calibrated*
workflow (the requests re-timed by the predictions), so candidate plans can be compared on many
such draws instead of on one point estimate that cannot rank them. It reads nothing but the views it
is given and the predictions: it cannot peek at the truth.

The draw, per category ``c`` with retrieved spread ``s_c`` from ``n_c`` samples:
``work *= exp(shift_c + noise_t)``, ``shift_c ~ N(0, s_c / sqrt(n_c))`` (the prediction's own
error, shared by the category's tasks) and ``noise_t ~ N(0, s_c)`` per task (the spread around
it, which already holds the per-task noise and the per-node deviations the fit could not
separate). A category the history never saw gets the widest retrieved spread and a whole
``s`` of shift (its runtime is the request times a global ratio, the crudest guess). When the
history holds earlier runs of this very workflow (a recurring one), each task's own runtime is
known up to the run-to-run spread, and its category is drawn from that alone.

**The request's tail.** A request covers its category's *longest* task, the prediction is a
median: when the request times the history's actual/request ratio exceeds the prediction
(montage's ``mBgModel``: predicted 10 s, requested 24 h, one task really runs 4.9 h), one task
of the category, drawn uniformly (which one is unknown), runs that long instead. Only runtimes
are drawn: the predictions carry nothing about file sizes' spread, and their per-class node
slowdowns are left out (the caller runs the draws on the nodes it chooses; the guard uses the
planning view's, see :mod:`policy.learned.rag_guarded`).

**The nodes.** When a recurring workflow's runs measured this platform's nodes, their fit
knows how well it compared each pair (:attr:`RuntimePredictions.node_covariance`):
:func:`draw_nodes` draws the slowdowns jointly from it, and moves each measured task's value
with the nodes it was measured on, so only runtimes nobody measured are uncertain.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np

from sim.model import Platform, Workflow
from sim.uncertainty import RuntimePredictions, task_category


@dataclass(frozen=True)
class CategoryDraw:
    """How one category's runtimes are drawn around its calibrated value."""

    shift_sigma: float
    """Sigma of the lognormal factor all the category's tasks share (the prediction's error)."""
    noise_sigma: float
    """Sigma of each task's own lognormal factor."""
    tail: float = 1.0
    """One task of the category runs this many times the calibrated value (1: none)."""


def draw_model(
    calibrated: Workflow, predictions: RuntimePredictions, request: Workflow | None = None
) -> dict[str, CategoryDraw]:
    """Category -> how its runtimes are drawn. ``request``: the user's requests for the same
    tasks (the planning view under ``user`` estimates), which give each category's tail; None
    when only the calibrated view is known (``kb`` estimates)."""
    known = predictions.categories
    widest = max((p.log_spread for p in known.values()), default=0.0)
    planned = {task_category(t): t.runtime for t in calibrated.tasks}
    requested = {task_category(t): t.runtime for t in request.tasks} if request else {}
    own = _predicted_per_task(calibrated, predictions)
    model: dict[str, CategoryDraw] = {}
    for c, runtime in planned.items():
        if c in own:
            model[c] = own[c]
            continue
        if c not in known:
            model[c] = CategoryDraw(widest, widest)
            continue
        p = known[c]
        longest = requested.get(c, 0.0) * predictions.request_ratio
        tail = longest / runtime if runtime > 0 and longest > runtime else 1.0
        model[c] = CategoryDraw(p.log_spread / math.sqrt(max(p.samples, 1)), p.log_spread, tail)
    return model


def _predicted_per_task(
    calibrated: Workflow, predictions: RuntimePredictions
) -> dict[str, CategoryDraw]:
    """Categories whose every task earlier runs of this workflow predict, and their draw: no
    shared shift (each task's value is its own), a task's noise is the run-to-run spread plus
    the error of a value fitted from ``runs`` runs, and no tail (the long task is known)."""
    if not predictions.runs:
        return {}
    sigma = predictions.task_log_spread * math.sqrt(1.0 + 1.0 / predictions.runs)
    covered: dict[str, bool] = {}
    for t in calibrated.tasks:
        c = task_category(t)
        covered[c] = covered.get(c, True) and t.id in predictions.tasks
    return {c: CategoryDraw(0.0, sigma) for c, every in covered.items() if every}


def predicted_realisation(
    workflow: Workflow, model: Mapping[str, CategoryDraw], rng: np.random.Generator
) -> Workflow:
    """One execution of the calibrated ``workflow`` drawn by ``model`` (pure in ``rng``).

    Draw order is fixed: the categories' shifts in sorted order, one noise per task in
    declaration order, then each tailed category's long task in sorted order, so a seed gives
    the same draw in every process.
    """
    categories = sorted(model)
    shifts = rng.standard_normal(len(categories))
    factor = {
        c: math.exp(model[c].shift_sigma * float(z))
        for c, z in zip(categories, shifts, strict=True)
    }
    noise = rng.standard_normal(len(workflow.tasks))
    members: dict[str, list[int]] = {}
    for i, t in enumerate(workflow.tasks):
        members.setdefault(task_category(t), []).append(i)
    long_tasks = {
        members[c][int(rng.integers(len(members[c])))]: model[c].tail
        for c in categories
        if model[c].tail > 1.0 and c in members
    }
    tasks = tuple(
        replace(
            t,
            work=t.work
            * factor[c]
            * math.exp(model[c].noise_sigma * float(z))
            * long_tasks.get(i, 1.0),
        )
        for i, (t, z) in enumerate(zip(workflow.tasks, noise, strict=True))
        for c in (task_category(t),)
    )
    return Workflow(workflow.name, tasks, workflow.files, workflow.description, workflow.meta)


@dataclass(frozen=True)
class NodeDraw:
    """How the nodes' slowdowns are drawn around the predicted ones: jointly, with the
    posterior covariance of the recurring fit (:attr:`RuntimePredictions.node_covariance`)."""

    names: tuple[str, ...]
    factor: np.ndarray
    """``F`` with ``F @ F.T`` the covariance (rows and columns in ``names`` order)."""
    weights: Mapping[str, np.ndarray]
    """Task id -> the share of its earlier runs on each node (``names`` order)."""


def node_draw_model(predictions: RuntimePredictions) -> NodeDraw | None:
    """The node draw of ``predictions``, or None when no recurring fit compared the nodes."""
    cov_map = predictions.node_covariance
    if not cov_map:
        return None
    names = tuple(cov_map)
    cov = np.array([[cov_map[a][b] for b in names] for a in names])
    values, vectors = np.linalg.eigh((cov + cov.T) / 2)
    factor = vectors * np.sqrt(np.clip(values, 0.0, None))
    weights = {
        t: np.array([shares.get(n, 0.0) for n in names])
        for t, shares in predictions.task_nodes.items()
    }
    return NodeDraw(names, factor, weights)


def draw_nodes(
    model: NodeDraw, workflow: Workflow, platform: Platform, rng: np.random.Generator
) -> tuple[Workflow, Platform]:
    """``workflow`` and ``platform`` with one draw of the nodes' log slowdowns ``d`` (pure in
    ``rng``): each node runs ``exp(d)`` slower, and each task the earlier runs measured runs
    ``exp(-w . d)`` faster, ``w`` its shares of those runs on each node, since what was
    measured is its runtime there (its own value is that less those nodes' slowdowns). A task
    that always ran on one node is thus as fast there in every draw, and only where it never
    ran is it uncertain: how well the runs compared two nodes is what decides a choice."""
    shift = model.factor @ rng.standard_normal(len(model.names))
    by_name = dict(zip(model.names, shift.tolist(), strict=True))
    nodes = tuple(
        replace(n, speed=n.speed / math.exp(by_name.get(n.name, 0.0))) for n in platform.nodes
    )
    tasks = tuple(
        replace(t, work=t.work * math.exp(-float(model.weights[t.id] @ shift)))
        if t.id in model.weights
        else t
        for t in workflow.tasks
    )
    drawn = Workflow(workflow.name, tasks, workflow.files, workflow.description, workflow.meta)
    return drawn, replace(platform, nodes=nodes)


def view_seed(workflow: Workflow, platform: Platform) -> int:
    """A seed fixed by the planning view alone (crc32 of its tasks, files and nodes), so an
    instance always gets the same draws, in any process, without any hidden state."""
    text = repr(
        (
            workflow.name,
            [(t.id, t.work, t.cores) for t in workflow.tasks],
            [(f.id, f.size) for f in workflow.files],
            [(n.name, n.speed, n.cores, n.gpus) for n in platform.nodes],
        )
    )
    return zlib.crc32(text.encode())
