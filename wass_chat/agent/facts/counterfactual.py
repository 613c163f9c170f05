"""Counterfactual placements: what if this one task had run on another node?

The grounded "why" of a placement compares the node a task ran on with every other node by
re-simulating the run with only that task moved: the same placements and per-node start order for
every other task, the moved task inserted into the other node's order at its original start time.
The difference in makespan is the alternative's cost; the simulated transfers say which file
would have crossed the network. Data locality (bytes of the task's inputs already on each node)
comes from where the run put the producers.

Pure functions over :mod:`sim.model` and the simulator; no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypedDict

from sim.engine import simulate
from sim.errors import InputError
from sim.model import Platform, Workflow, node_fits
from sim.schedule import SHARED_FS, NetworkModel, SimResult, StaticSchedule
from sim.uncertainty import planned_inputs
from wass_chat.answers.placement import Alternative, Locality, MovedFile, NodeLocality


@dataclass(frozen=True)
class RecordedRun:
    """What a run decided, enough to re-simulate it: placements and start times per task."""

    run_id: str
    workflow: Workflow
    platform: Platform
    scheduler: str
    placements: Mapping[str, str]
    start_times: Mapping[str, float]
    makespan: float
    source: str = "simulated"
    planned_on: Mapping[str, Mapping[str, float]] | None = None
    """The runtimes and node slowdowns a plan on the knowledge base's estimates assumed (see
    :func:`sim.uncertainty.planned_inputs`); re-simulations use them too."""

    def schedule(self, placements: Mapping[str, str] | None = None) -> StaticSchedule:
        """The run's decisions as a static schedule, optionally with some tasks moved."""
        return StaticSchedule.from_priorities(
            dict(placements or self.placements),
            self.start_times,
            self.scheduler,
            tie_break={t: i for i, t in enumerate(self.workflow.topological_order)},
        )


class Counterfactuals(TypedDict):
    baseline_makespan_s: float
    network_model: str
    alternatives: list[Alternative]
    """Fastest first."""
    unfit_nodes: list[str]


def locality(run: RecordedRun, task: str) -> Locality:
    """Bytes of ``task``'s inputs already on each node when it became ready.

    An input produced by another task is on the producer's node; workflow inputs are on the
    shared filesystem, equally far from every node.
    """
    wf = run.workflow
    inputs = wf.task_by_id[task].inputs
    by_node: dict[str, int] = {n: 0 for n in run.platform.node_names}
    shared = 0
    for file in inputs:
        producer = wf.producer.get(file)
        size = wf.file_by_id[file].size
        if producer is None:
            shared += size
        else:
            by_node[run.placements[producer]] = by_node.get(run.placements[producer], 0) + size
    chosen = run.placements[task]
    return Locality(
        input_bytes=sum(wf.file_by_id[f].size for f in inputs),
        shared_fs_input_bytes=shared,
        local_on_chosen_bytes=by_node.get(chosen, 0),
        by_node=[NodeLocality(node=n, local_input_bytes=b) for n, b in by_node.items()],
    )


def _moved_files(
    result: SimResult, workflow: Workflow, task: str, node: str
) -> list[tuple[str, int]]:
    """Files the task's move made cross the network: its inputs to ``node``, its outputs from it."""
    t = workflow.task_by_id[task]
    moved = {
        tr.file: tr.size
        for tr in result.transfers
        if tr.source != SHARED_FS
        and (
            (tr.file in t.inputs and tr.destination == node)
            or (tr.file in t.outputs and tr.source == node)
        )
    }
    return sorted(moved.items(), key=lambda item: (-item[1], item[0]))


def counterfactuals(
    run: RecordedRun, task: str, network_model: NetworkModel = "fair"
) -> Counterfactuals:
    """Re-simulate ``run`` with ``task`` forced onto each other node that can host it (on the
    runtimes its plan assumed)."""
    wf, platform = planned_inputs(run.workflow, run.platform, run.planned_on)
    if task not in wf.task_by_id:
        raise InputError(run.run_id, [f"run has no task {task!r}"])
    chosen = run.placements[task]
    baseline = simulate(wf, platform, run.schedule(), network_model)
    alternatives: list[Alternative] = []
    unfit: list[str] = []
    for node in platform.nodes:
        if node.name == chosen:
            continue
        if not node_fits(wf.task_by_id[task], node):
            unfit.append(node.name)
            continue
        moved = {**run.placements, task: node.name}
        result = simulate(wf, platform, run.schedule(moved), network_model)
        files = _moved_files(result, wf, task, node.name)
        delta = result.makespan - baseline.makespan
        alternatives.append(
            Alternative(
                node=node.name,
                makespan_s=result.makespan,
                delta_s=delta,
                delta_pct=100.0 * delta / baseline.makespan if baseline.makespan else 0.0,
                moved_bytes=sum(size for _f, size in files),
                largest_moved_file=MovedFile(file=files[0][0], bytes=files[0][1])
                if files
                else None,
            )
        )
    alternatives.sort(key=lambda a: (a["makespan_s"], a["node"]))
    return Counterfactuals(
        baseline_makespan_s=baseline.makespan,
        network_model=network_model,
        alternatives=alternatives,
        unfit_nodes=unfit,
    )
