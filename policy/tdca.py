"""TDCA: clusters grown along critical-predecessor trails, duplicating a trail's tasks that
other clusters already hold, one node per cluster, insertion into the shared timelines.

He, Meng, Pan, Yuan, Zhou: "A Novel Task-Duplication Based Clustering Algorithm for
Heterogeneous Computing Environments", IEEE TPDS, 2019, one of the seed paper's
multi-workflow baselines. The paper itself was not reachable here; what is known of it comes
from public reading notes (a post summarising it, found with the search tools). It refines
TANH (Bajaj and Agrawal, TPDS 2004) in four phases: initial clustering, task duplication,
cluster merging, and insertion into idle time. What the notes give, and this module follows:

* **Parameters** (:func:`estimates`), on an idle cluster: ``est(i, p)`` is the latest, over
  parents ``j``, of the earliest ``ect(j, q) + delta(j, i, q, p)`` over nodes ``q`` (delta: the
  edge's transfer time, 0 when ``q == p``), ``ect = est + T(i, p)``; the *favorite* node of a
  task is where its ``ect`` is least; its *critical predecessor* ``cpred`` is the parent whose
  data lands last when every task runs on its favorite node; priority is the b-level with the
  task's slowest compute time, ``level(i) = max_k (level(k) + c(i, k)) + max_p T(i, p)``.
* **Initial clustering** (:func:`clusters`): tasks by increasing level (exit tasks first);
  each unclustered one seeds a cluster on its favorite node ``p`` and the cluster grows up the
  critical-predecessor trail: ``j = cpred(i)`` joins when ``ect(j, p) <= ect(j, fav(j)) +
  c(j, i)`` (running it here is no later than receiving it); else the unclustered parent
  meeting that test with the least ``ect(k, p)`` joins; else, or at an entry task, the cluster
  is complete. When no unoccupied processor is left, clustering stops and the remaining tasks
  go where they start earliest.
* **Insertion**: tasks go into idle gaps of their node's timeline (``insertion=True``).

What the notes leave open or this module does not reproduce: the duplication phase (filling
the idle time before a cluster task whose ``cpred`` is not the task before it, and
duplicating the trail above a cluster's first task), the cluster-merging phase, and the
"chain reaction" rule that keeps a duplicate which becomes useful only later.

Ours:

* **Online** (as :class:`policy.fifo_deft.FifoDeft`): each arrival batch is clustered and
  placed when it arrives, against everything already placed, never revisited; nothing starts
  before its workflow's arrival (``plan.now``, the tasks' ``release``).
* **Mapping**: the paper gives each cluster an unoccupied processor and, when none is left,
  stops clustering and places the remaining tasks at their earliest start. Here nodes are
  multi-core and shared by every workflow, so "unoccupied" means holding no other cluster of
  the same arrival: a cluster's node is chosen when its first task (by level) is placed, among
  the unoccupied nodes able to host the whole cluster, as the one where that task finishes
  earliest on the shared plan (cores, memory, GPUs, earlier arrivals' tasks), its duplicates
  included; the cluster's other tasks follow it there. With no such node left, each task of
  the cluster goes where it finishes earliest (the paper: starts), duplicates still tried.
  Clusters are never merged. Communication costs are this platform's (per node pair, largest
  file of the edge); ``c(i, k)`` in the level is the mean over node pairs (:mod:`sim.ranks`).
* **Duplicates**: a ``cpred`` that another cluster already holds joins the trail as a
  *duplicate* (the only duplication here), run as a copy on the cluster's node just before the
  task below it, and kept only when it makes that task finish strictly earlier.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from policy.costs import shared_fs_read_time, transfer_time
from policy.duplication import CopyPlan, CopySchedule
from policy.plan import Slot
from sim.arrivals import arrival_batches
from sim.model import Node, Platform, Workflow, check_fits, compute_time, hosts, node_fits
from sim.occupancy import Occupancy
from sim.ranks import communication_means, mean_edge_time

Estimates = dict[str, dict[str, float]]
"""Task -> node -> earliest completion time (the paper's ``ect(i, p)``)."""


@dataclass
class Cluster:
    """Tasks kept on one node: a critical-predecessor trail, top down."""

    tasks: list[str]
    duplicates: set[str]
    """Tasks of the trail that another cluster already holds: copies here."""
    hosts: tuple[Node, ...]
    """Nodes able to host every task of the cluster."""
    node: Node | None = None
    """Chosen when its first task is placed (None after: no unoccupied node was left)."""
    mapped: bool = False
    """Whether its first task is placed (its node chosen, or none left for it)."""


def edge_time(
    workflow: Workflow, platform: Platform, parent: str, child: str, a: Node, b: Node
) -> float:
    """``delta``: seconds the edge's files take from node ``a`` to ``b`` (they move in
    parallel; 0 on one node or for a control edge)."""
    files = workflow.edge_files[(parent, child)]
    size = max((workflow.file_by_id[f].size for f in files), default=None)
    return 0.0 if size is None else transfer_time(size, platform, a, b)


def estimates(plan: CopyPlan, batch: tuple[str, ...]) -> Estimates:
    """The paper's ``ect(i, p)`` of every task of ``batch`` (in topological order) on every
    node able to host it, on an idle cluster; parents from earlier batches count as placed."""
    wf, platform = plan.workflow, plan.platform
    nodes = platform.node_by_name
    ect: Estimates = {}
    for task in batch:
        t = wf.task_by_id[task]
        ect[task] = {}
        for p in hosts(t, platform):
            est = t.release + max(
                (
                    shared_fs_read_time(wf.file_by_id[f].size, platform, p)
                    for f in t.inputs
                    if f not in wf.producer
                ),
                default=0.0,
            )
            for j in wf.parents[task]:
                done = ect[j].items() if j in ect else plan.versions(j)
                landed = min(end + edge_time(wf, platform, j, task, nodes[q], p) for q, end in done)
                est = max(est, landed)
            ect[task][p.name] = est + compute_time(t, p)
    return ect


def favorite(ect: Estimates, task: str) -> str:
    """The node where ``task`` completes earliest (ties: the node listed first)."""
    return min(ect[task], key=ect[task].__getitem__)


def critical_predecessor(plan: CopyPlan, ect: Estimates, task: str) -> str | None:
    """The parent (of this batch) whose data lands last on ``task``'s favorite node when every
    task runs on its own favorite node; None for an entry task."""
    wf, nodes = plan.workflow, plan.platform.node_by_name
    here = nodes[favorite(ect, task)]
    best: tuple[float, str] | None = None
    for j in wf.parents[task]:
        if j not in ect:
            continue
        fav = favorite(ect, j)
        landed = ect[j][fav] + edge_time(wf, plan.platform, j, task, nodes[fav], here)
        if best is None or landed > best[0]:
            best = (landed, j)
    return None if best is None else best[1]


def levels(workflow: Workflow, platform: Platform, batch: tuple[str, ...]) -> dict[str, float]:
    """The paper's priority: b-level with each task's slowest compute time over its hosts."""
    means = communication_means(platform)
    level: dict[str, float] = {}
    for task in reversed(batch):
        t = workflow.task_by_id[task]
        tail = max(
            (
                level[k] + mean_edge_time(workflow, task, k, means)
                for k in workflow.children[task]
                if k in level
            ),
            default=0.0,
        )
        level[task] = tail + max(compute_time(t, n) for n in hosts(t, platform))
    return level


def clusters(
    plan: CopyPlan, batch: tuple[str, ...], ect: Estimates, level: dict[str, float]
) -> list[Cluster]:
    """The paper's initial clustering of ``batch`` (see the module docstring)."""
    wf, platform = plan.workflow, plan.platform
    nodes = platform.node_by_name
    position = {t: i for i, t in enumerate(batch)}
    held: set[str] = set()
    found: list[Cluster] = []

    def worth(j: str, i: str, p: Node) -> bool:  # running j on p is no later than receiving it
        if p.name not in ect[j]:
            return False
        fav = favorite(ect, j)
        return ect[j][p.name] <= ect[j][fav] + edge_time(wf, platform, j, i, nodes[fav], p)

    for seed in sorted(batch, key=lambda t: (level[t], -position[t])):
        if seed in held:
            continue
        p = nodes[favorite(ect, seed)]
        trail, duplicates, task = [seed], set(), seed
        held.add(seed)
        while True:
            j = critical_predecessor(plan, ect, task)
            if j is None:
                break
            if not worth(j, task, p):
                options = [
                    k for k in wf.parents[task] if k in ect and k not in held and worth(k, task, p)
                ]
                if not options:
                    break
                j = min(options, key=lambda k: (ect[k][p.name], position[k]))
            if j in held:
                duplicates.add(j)
            held.add(j)
            trail.append(j)
            task = j
        able = tuple(n for n in platform.nodes if all(n.name in ect[t] for t in trail))
        found.append(Cluster(trail[::-1], duplicates, able))
    return found


@dataclass(frozen=True)
class Tdca:
    """Task Duplication-based Clustering Algorithm, planned per arrival (see the module doc)."""

    duplicate: bool = True
    """Run a cluster's duplicates as copies (False: the same clusters, no copies)."""
    name: str = "tdca"
    description: ClassVar[str] = "clusters along critical-predecessor trails, with copies"
    cluster_sizes: list[int] = field(default_factory=list, compare=False, repr=False)
    """Tasks per cluster of the last plan, duplicates included (for reports and tests)."""

    def plan(
        self, workflow: Workflow, platform: Platform, occupancy: Occupancy | None = None
    ) -> CopyPlan:
        """The complete plan, copies included."""
        check_fits(workflow, platform)
        plan = CopyPlan(workflow, platform, insertion=True, occupancy=occupancy)
        self.cluster_sizes.clear()
        for time, batch in arrival_batches(workflow):
            plan.now = time
            self._plan_batch(plan, batch)
        return plan

    def schedule_with_copies(
        self, workflow: Workflow, platform: Platform, occupancy: Occupancy | None = None
    ) -> CopySchedule:
        """What the simulator runs: the expanded workflow and its static schedule."""
        return self.plan(workflow, platform, occupancy).to_copy_schedule(self.name)

    def _plan_batch(self, plan: CopyPlan, batch: tuple[str, ...]) -> None:
        """Cluster one arrival batch, then place its tasks by decreasing level."""
        ect = estimates(plan, batch)
        level = levels(plan.workflow, plan.platform, batch)
        found = clusters(plan, batch, ect, level)
        self.cluster_sizes.extend(len(c.tasks) for c in found)
        home: dict[str, Cluster] = {}
        copies_before: dict[str, list[str]] = {}  # a task -> the duplicates just above it
        for cluster in found:
            above: list[str] = []
            for task in cluster.tasks:
                if task in cluster.duplicates:
                    above.append(task)
                    continue
                home[task], copies_before[task], above = cluster, above, []
        position = {t: i for i, t in enumerate(batch)}
        occupied: set[str] = set()  # nodes holding a cluster of this batch
        for task in sorted(batch, key=lambda t: (-level[t], position[t])):
            cluster = home[task]
            if not cluster.mapped:
                free = tuple(n for n in cluster.hosts if n.name not in occupied)
                candidates = free or hosts(plan.workflow.task_by_id[task], plan.platform)
            else:
                candidates = (
                    (cluster.node,)
                    if cluster.node
                    else hosts(plan.workflow.task_by_id[task], plan.platform)
                )
            best: tuple[Slot, list[Slot]] | None = None
            for node in candidates:
                choice = self._with_copies(plan, task, node, copies_before[task])
                if best is None or choice[0].finish < best[0].finish:
                    best = choice
            assert best is not None, "check_fits guarantees a host"
            slot, copies = best
            if not cluster.mapped:
                cluster.mapped = True
                if free:
                    cluster.node = plan.platform.node_by_name[slot.node]
                    occupied.add(slot.node)
            for copy in copies:
                plan.place_copy(copy)
            plan.place(slot)

    def _with_copies(
        self, plan: CopyPlan, task: str, node: Node, duplicates: list[str]
    ) -> tuple[Slot, list[Slot]]:
        """``task``'s earliest slot on ``node``, and the copies of ``duplicates`` (top down) it
        needs there: none unless they make it finish strictly earlier. Nothing is committed."""
        alone = plan.slot(task, node)
        if not self.duplicate:
            return alone, []
        copies: list[Slot] = []
        for d in duplicates:
            if not node_fits(plan.workflow.task_by_id[d], node):
                continue  # a cluster left without a node of its own: its task may go elsewhere
            if plan.placement[d] != node.name and node.name not in plan.copies.get(d, {}):
                copies.append(plan.copy_slot(d, node))
                plan.place_copy(copies[-1])
        helped = plan.slot(task, node)
        for copy in reversed(copies):
            plan.remove_copy(copy.task, copy.node)
        return (helped, copies) if copies and helped.finish < alone.finish else (alone, [])
