"""Decima-style: a small graph network, trained here with REINFORCE, chooses which executable
task of which arrived workflow goes next; DEFT places it with duplication.

Decima (Mao et al., "Learning Scheduling Algorithms for Data Processing Clusters", SIGCOMM
2019) scores the runnable stages of every job in the cluster from the whole current state with
a graph network (:mod:`policy.learned.decima_model`) and picks one by a masked softmax; it is
trained with REINFORCE against a time-based baseline. Here:

* **State** (:func:`graph_state`), at each event of the dispatcher of :mod:`policy.dispatch`
  (arrivals, planned finishes): the remaining (not yet placed) tasks of every arrived workflow,
  with their DAG edges and per task: its own work, its upward rank (the work below it), its
  workflow's remaining work and tasks and share already placed, whether it needs or prefers a
  GPU, the time since its workflow arrived, whether it is executable.
* **Selection** (:class:`DecimaBacklog`): one forward pass per event scores every executable
  task (a non-executable one is never a candidate: the softmax runs over executable rows only);
  the dispatcher tries them best first (greedy) or, in training, in an order drawn from the
  softmax one pick at a time (Gumbel top-k, the same distribution as picking by softmax, then
  by softmax over the rest...). Ours: one forward per event, not per pick (Decima re-runs the
  network after each pick).
* **Placement**: DEFT with duplication (:func:`policy.fifo_deft.deft_choice`), not Decima's
  parallelism limit or executor classes (its jobs are Spark stages of many tasks; ours are
  single tasks, and duplication is the seed paper's "with duplication").

``decima-untrained`` is the ablation: the same network at its seeded initialisation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import torch
from torch import Tensor

from policy.dispatch import dispatch_plan
from policy.duplication import CopyPlan, CopySchedule
from policy.learned.decima_config import CHECKPOINT
from policy.learned.decima_model import (
    DecimaNet,
    GraphState,
    batch_states,
    initial_net,
    load_decima,
)
from sim.arrivals import workflow_prefix
from sim.model import Platform, Workflow
from sim.occupancy import Occupancy
from sim.ranks import upward_rank

MINUTE = 60.0


def shipped_net(path: str | Path | None = None) -> DecimaNet:
    """The trained network (the shipped checkpoint unless ``path``)."""
    return load_decima(str(path or CHECKPOINT))[0]


@dataclass(frozen=True)
class Decision:
    """One sampled event: the state, the order drawn (indices of its executable rows) and how
    many of that order the dispatcher took."""

    time: float
    state: GraphState
    order: list[int]
    picks: int


def log_probs(net: DecimaNet, decisions: list[Decision]) -> Tensor:
    """(D,) log-probability of each decision's picks (Plackett-Luce: each pick a softmax over
    the executable tasks not yet picked), in one batched forward pass."""
    logits = net.logits(batch_states([d.state for d in decisions]))
    width = max(len(d.order) for d in decisions)
    ordered = torch.full((len(decisions), width), -1e9)
    taken = torch.zeros((len(decisions), width), dtype=torch.bool)
    offset = 0
    rows: list[int] = []
    columns: list[int] = []
    sources: list[int] = []
    for k, d in enumerate(decisions):
        rows += [k] * len(d.order)
        columns += range(len(d.order))
        sources += [offset + i for i in d.order]
        taken[k, : d.picks] = True
        offset += len(d.state.executable)
    ordered = ordered.index_put((torch.tensor(rows), torch.tensor(columns)), logits[sources])
    tail = torch.logcumsumexp(ordered.flip(1), 1).flip(1)
    return torch.where(taken, ordered - tail, torch.zeros(())).sum(1)


class DecimaBacklog:
    """The executable tasks, ordered at each event by the network's scores (see the module
    docstring); with ``sampler``, orders are drawn and their log-probabilities kept."""

    def __init__(
        self,
        net: DecimaNet,
        workflow: Workflow,
        platform: Platform,
        sampler: torch.Generator | None = None,
    ) -> None:
        self.net = net
        self.workflow = workflow
        self.sampler = sampler
        self.rank = upward_rank(workflow, platform)
        self.position = {t: i for i, t in enumerate(workflow.topological_order)}
        self.remaining: dict[str, list[str]] = {}  # per arrived workflow, topological order
        self.size: dict[str, int] = {}
        self.executable: set[str] = set()
        self.order: list[str] = []
        self.picks = 0
        self.pending: tuple[float, GraphState, list[int]] | None = None
        self.decisions: list[Decision] = []
        """The sampled events' decisions, when sampling."""

    def arrive(self, plan: CopyPlan, batch: tuple[str, ...]) -> None:
        for task in batch:
            self.remaining.setdefault(workflow_prefix(task), []).append(task)
        for prefix in {workflow_prefix(t) for t in batch}:
            self.size[prefix] = len(self.remaining[prefix])

    def add(self, task: str) -> None:
        self.executable.add(task)

    def begin(self, plan: CopyPlan) -> None:
        self.close()
        for prefix in list(self.remaining):
            left = [t for t in self.remaining[prefix] if t not in plan.placement]
            if left:
                self.remaining[prefix] = left
            else:
                del self.remaining[prefix]
        state, candidates = graph_state(self, plan.now)
        if len(candidates) == 1:
            self.order, self.picks = candidates, 0
            return
        logits = self.net.logits(state)
        if self.sampler is None:
            values = logits.tolist()
            keyed = sorted(
                range(len(candidates)),
                key=lambda k: (-values[k], -self.rank[candidates[k]], self.position[candidates[k]]),
            )
        else:
            uniform = torch.rand(len(candidates), generator=self.sampler).clamp(1e-12, 1 - 1e-7)
            gumbel = -torch.log(-torch.log(uniform))
            keyed = torch.argsort(logits.detach() + gumbel, descending=True).tolist()
            self.pending = (plan.now, state, keyed)
        self.order, self.picks = [candidates[k] for k in keyed], 0

    def pop(self) -> str:
        task = self.order[self.picks]
        self.picks += 1
        self.executable.discard(task)
        return task

    def close(self) -> None:
        """Keep the last event's decision (sampling only)."""
        if self.pending is not None and self.picks:
            self.decisions.append(Decision(*self.pending, self.picks))
        self.pending = None

    def __len__(self) -> int:
        return len(self.executable)


def graph_state(backlog: DecimaBacklog, clock: float) -> tuple[GraphState, list[str]]:
    """The network's input at ``clock`` and the executable tasks in its row order."""
    workflow = backlog.workflow
    rows: list[str] = []
    workflow_of: list[int] = []
    features: list[list[float]] = []
    for w, (prefix, tasks) in enumerate(backlog.remaining.items()):
        runtimes = [workflow.task_by_id[t].runtime for t in tasks]
        left_work = math.log1p(sum(runtimes) / (10 * MINUTE))
        left_tasks = math.log1p(len(tasks)) / 3
        done = 1 - len(tasks) / backlog.size[prefix]
        for task, runtime in zip(tasks, runtimes, strict=True):
            spec = workflow.task_by_id[task]
            waited = max(clock - spec.release, 0.0)
            features.append(
                [
                    math.log1p(runtime / MINUTE),
                    math.log1p(backlog.rank[task] / MINUTE),
                    left_work,
                    left_tasks,
                    float(spec.gpus > 0),
                    float(spec.prefers_gpu),
                    math.log1p(waited / MINUTE),
                    float(task in backlog.executable),
                    done,
                ]
            )
            rows.append(task)
            workflow_of.append(w)
    index = {t: i for i, t in enumerate(rows)}
    height = [0] * len(rows)
    by_level: dict[int, tuple[list[int], list[int], list[int]]] = {}
    for i in range(len(rows) - 1, -1, -1):  # each workflow's rows are in topological order
        children = [index[c] for c in workflow.children[rows[i]]]
        if not children:
            continue
        height[i] = 1 + max(height[c] for c in children)
        parents, edge_parents, edge_children = by_level.setdefault(height[i], ([], [], []))
        parents.append(i)
        edge_parents += [i] * len(children)
        edge_children += children
    candidates = [t for t in rows if t in backlog.executable]
    state = GraphState(
        torch.tensor(features, dtype=torch.float32),
        tuple(
            tuple(torch.tensor(part, dtype=torch.long) for part in by_level[level])  # type: ignore[misc]
            for level in sorted(by_level)
        ),
        torch.tensor(workflow_of, dtype=torch.long),
        len(backlog.remaining),
        torch.tensor([index[t] for t in candidates], dtype=torch.long),
    )
    return state, candidates


@dataclass
class Decima:
    """Learned task selection across arrived workflows (Decima-style), DEFT placement with
    duplication."""

    net: DecimaNet | None = None
    """The scoring network (None: the shipped checkpoint, loaded on first use)."""
    patience: int = 4
    """Executable tasks that would wait tried per event before the rest wait too."""
    name: str = "decima"
    description: ClassVar[str] = "Decima-style GNN task scores pick the next task, DEFT places it"
    sampler: torch.Generator | None = field(default=None, compare=False, repr=False)
    """Draw orders from the softmax (training) instead of taking the best first."""
    decisions: list[Decision] = field(default_factory=list, compare=False, repr=False)
    """The last plan's sampled decisions (for training)."""

    def plan(
        self, workflow: Workflow, platform: Platform, occupancy: Occupancy | None = None
    ) -> CopyPlan:
        """The complete plan, copies included; ``plan.placement`` keeps the dispatch order."""
        if self.net is None:
            self.net = shipped_net()
        backlog = DecimaBacklog(self.net, workflow, platform, self.sampler)
        threads = torch.get_num_threads()
        torch.set_num_threads(1)  # small graphs: one thread is faster on the shared machine
        try:
            with torch.no_grad():
                plan = dispatch_plan(workflow, platform, backlog, self.patience, occupancy)
        finally:
            torch.set_num_threads(threads)
        backlog.close()
        self.decisions = backlog.decisions
        return plan

    def schedule_with_copies(
        self, workflow: Workflow, platform: Platform, occupancy: Occupancy | None = None
    ) -> CopySchedule:
        """What the simulator runs: the expanded workflow and its static schedule."""
        return self.plan(workflow, platform, occupancy).to_copy_schedule(self.name)


def untrained(seed: int = 0) -> Decima:
    """The ``decima-untrained`` ablation: the network at its seeded initialisation."""
    return Decima(initial_net(seed), name="decima-untrained")
