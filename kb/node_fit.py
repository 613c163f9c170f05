"""Each task's runtime and each node's slowdown from a cluster's recurring runs.

A recurring workflow's earlier runs say how long each of its tasks takes and how fast each
node it used really is (:func:`kb.estimates.recurring_fit`). Its runs alone leave most nodes
unseen: HEFT on loose requests keeps to the nominally fastest nodes, and on the development
instances 420 of 648 nodes had no task of the workflow's runs on them. What a node's slowdown
mostly is, though, is its hardware class's (a generation that runs below its specification,
the same on every platform), and every other recurring workflow in the store measured its
class, on other platforms. So the fit is hierarchical, one least-squares problem over all the
recurring runs it is given:

``log observed = task + class(node) + node``

- ``task``: each task's own log runtime, free, keyed by its run group (``platform hash:workflow
  hash:task``: a workflow's realised work on one cluster is not the same on another);
- ``class``: the log slowdown of a node class, shared by every platform, held to nominal
  speed with a prior of sigma :data:`CLASS_SIGMA`;
- ``node``: one node's own deviation from its class (keyed by its platform, ``hash:node``),
  held to 0 with a prior of sigma :data:`NODE_SIGMA`;
- each observation with the run-to-run sigma :data:`RUN_SIGMA`.

A task seen once fits exactly and says nothing; a task that moved between nodes across its
runs ties their slowdowns together, and through the classes, platforms together. A node no run
reached gets its class's slowdown; a class no run reached stays at nominal speed. Sparse (three
nonzeros per observation), so a store of many runs stays cheap.

The three sigmas are the simulator's defaults (:class:`sim.uncertainty.UncertaintyConfig`,
whose ``class_sigma`` and ``node_sigma`` are our reading of published figures on node
variability, and ``run_sigma`` an assumption); a site would estimate them from its own runs.
On the 54 development instances (seeds 3-11; docs/results-log.md, the class-aware fit) the
fit over the store's recurring runs took the mean per-node error from 0.125 to 0.083 in log,
and ``kb`` estimates' MAPE from 16.5% to 13.1%.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kb.records import CaseRecord
from sim.model import REFERENCE_SPEED
from sim.uncertainty import node_class, task_category

RUN_SIGMA = 0.1
"""Sigma of one observation around its task + node value (log): a task's run-to-run
variation (``UncertaintyConfig.run_sigma``)."""
NODE_SIGMA = 0.08
"""Prior sigma of one node's own slowdown around its class's (``UncertaintyConfig.node_sigma``)."""
CLASS_SIGMA = 0.15
"""Prior sigma of a node class's slowdown around nominal (``UncertaintyConfig.class_sigma``)."""


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
    node's slowdown is what the fits separate from that.
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


@dataclass(frozen=True)
class NodeFit:
    """The fitted logs: ``tasks`` by ``platform hash:workflow hash:task``, ``nodes`` (own
    deviations) by ``platform hash:node``, ``classes`` by node class."""

    tasks: dict[str, float]
    nodes: dict[str, float]
    classes: dict[str, float]
    precision: Any = field(default=None, repr=False, compare=False)
    """The posterior precision of the nodes' and classes' logs, the tasks integrated out
    (a sparse matrix, rows in :attr:`index` order); None for an empty fit."""
    index: dict[str, int] = field(default_factory=dict, repr=False, compare=False)
    """Node key or class -> its row in :attr:`precision`."""

    def covariance(self, platform: str, nodes: Sequence[tuple[str, str]]) -> np.ndarray:
        """The posterior covariance of the log slowdowns of ``nodes`` (name, class) of
        ``platform``: how well the runs compared them. A node or class no run reached
        contributes its prior variance (:data:`NODE_SIGMA`, :data:`CLASS_SIGMA`), and two
        nodes of such a class share its."""
        from scipy.sparse.linalg import splu

        picks = np.zeros((len(self.index), len(nodes)))
        extra = np.zeros((len(nodes), len(nodes)))
        for j, (name, klass) in enumerate(nodes):
            key = f"{platform}:{name}"
            if key in self.index:
                picks[self.index[key], j] = 1.0
            else:
                extra[j, j] += NODE_SIGMA**2
            if klass in self.index:
                picks[self.index[klass], j] = 1.0
            else:
                for k, (_, other) in enumerate(nodes):
                    extra[j, k] += CLASS_SIGMA**2 if other == klass else 0.0
        if self.precision is None or not self.index:
            return extra
        solved = splu(self.precision.tocsc()).solve(picks)
        return picks.T @ solved + extra

    def task_log(self, platform: str, workflow: str, task: str) -> float:
        """A task's fitted log runtime in its run group (KeyError if no run had it)."""
        return self.tasks[f"{platform}:{workflow}:{task}"]

    def node_log(self, platform: str, node: str, klass: str) -> float:
        """A node's log slowdown: its class's plus its own (0 for a node no run reached, 0 for
        its class too when no run reached that)."""
        return self.classes.get(klass, 0.0) + self.nodes.get(f"{platform}:{node}", 0.0)


def hierarchical_fit(cases: Sequence[CaseRecord]) -> NodeFit:
    """The least-squares ``task + class + node`` fit (module docstring) over every task of
    ``cases``; each case's tasks are keyed by its platform and workflow, its nodes by its
    platform."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.linalg import lsqr

    rows = [
        (f"{p}:{c.workflow_hash}:{o.task}", f"{p}:{o.node}", o.node_class, o.log_runtime)
        for c in cases
        for p in (c.platform_hash,)
        for o in observations(c)
    ]
    if not rows:
        return NodeFit({}, {}, {})
    tasks = sorted({r[0] for r in rows})
    nodes = sorted({r[1] for r in rows})
    classes = sorted({r[2] for r in rows})
    column = {key: i for i, key in enumerate([*tasks, *nodes, *classes])}
    n_obs, n_nodes, n_classes = len(rows), len(nodes), len(classes)
    # one row per observation (task, class, node), then a prior row per node and per class
    obs_cols = np.array([(column[t], column[c], column[n]) for t, n, c, _ in rows]).ravel()
    prior_cols = np.array([column[k] for k in [*nodes, *classes]])
    row_index = np.concatenate(
        [np.repeat(np.arange(n_obs), 3), n_obs + np.arange(n_nodes + n_classes)]
    )
    values = np.concatenate(
        [
            np.full(3 * n_obs, 1.0 / RUN_SIGMA),
            np.full(n_nodes, 1.0 / NODE_SIGMA),
            np.full(n_classes, 1.0 / CLASS_SIGMA),
        ]
    )
    design = coo_matrix(
        (values, (row_index, np.concatenate([obs_cols, prior_cols]))),
        shape=(n_obs + n_nodes + n_classes, len(column)),
    )
    target = np.concatenate(
        [np.array([r[3] for r in rows]) / RUN_SIGMA, np.zeros(n_nodes + n_classes)]
    )
    design = design.tocsr()
    solution = lsqr(design, target, atol=1e-12, btol=1e-12, iter_lim=100_000)[0]
    return NodeFit(
        {t: float(solution[column[t]]) for t in tasks},
        {n: float(solution[column[n]]) for n in nodes},
        {c: float(solution[column[c]]) for c in classes},
        _node_precision(design, len(tasks)),
        {key: i for i, key in enumerate([*nodes, *classes])},
    )


def _node_precision(design: Any, n_tasks: int) -> Any:
    """The Schur complement of the tasks in ``design``'s normal matrix: the posterior
    precision of the other parameters with every task's runtime integrated out. Each
    observation names one task, so the task block is diagonal and the complement is cheap."""
    from scipy.sparse import diags

    normal = (design.T @ design).tocsc()
    tasks_block = normal[:n_tasks, :n_tasks].diagonal()
    cross = normal[:n_tasks, n_tasks:]
    rest = normal[n_tasks:, n_tasks:]
    return (rest - cross.T @ diags(1.0 / tasks_block) @ cross).tocsc()
