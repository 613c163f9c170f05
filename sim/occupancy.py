"""A busy cluster's starting point: which cores and memory other jobs hold, and when.

Planning on an empty machine is wrong on a shared cluster: other jobs hold cores and memory
when the workflow arrives, and jobs queued ahead of it will take more. An :class:`Occupancy`
lists those holds (``cores`` and ``memory`` bytes of a node held over ``[start, until)``
seconds of the plan's time; a running job's hold starts at 0, a pending job's where the queue
would start it); it is the one mechanism every consumer reads:

* the planners' timelines (:class:`policy.plan.Plan`) start with each hold reserved over
  ``[start, until)``, so HEFT, PEFT, CPOP, Min-Min... place tasks around them (a task whose
  memory does not fit beside a hold waits for it, or goes to another node);
* the simulator (:func:`sim.engine.simulate`) takes each hold's cores and memory at ``start``
  and frees them at ``until``, so dynamic schedulers (the WASS heuristic, the learned policy)
  see them through the engine's view, and makespans are measured on the busy machine.

GPUs are left to the workflow. The bench draws a seeded occupancy of cores from time 0
(:mod:`sim.background`); ``submit`` reads it from the live queue
(:mod:`wass_chat.slurm.queue_holds`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from sim.errors import InputError
from sim.model import Platform


class OccupancyError(InputError):
    """Holds that do not fit the platform (unknown node, more cores than it has, bad time)."""

    kind = "occupancy"


@dataclass(frozen=True, slots=True)
class Hold:
    """``cores`` cores and ``memory`` bytes of ``node`` held by another job over
    ``[start, until)`` (s; a running job's from 0)."""

    node: str
    cores: int
    until: float
    job: str = ""
    """Who holds them: a Slurm job id on a live cluster, ``background`` in the bench."""
    memory: int = 0
    """Bytes of the node's memory held (0: the job's memory is not counted)."""
    start: float = 0.0
    """When the hold begins: 0 for a running job, the predicted start of a queued one."""

    @property
    def from_start(self) -> bool:
        """Whether the hold is cores only, from time 0 (all the compiled core takes)."""
        return self.start <= 0 and self.memory == 0


@dataclass(frozen=True)
class Occupancy:
    """Every hold on the cluster when the workflow arrives; empty: an idle machine."""

    holds: tuple[Hold, ...] = ()

    def __bool__(self) -> bool:
        """Whether anything is held at all (holds ending at 0 change nothing)."""
        return bool(self.active())

    @classmethod
    def whole_nodes(cls, platform: Platform, busy_until: dict[str, float]) -> Occupancy:
        """Every core of each named node held until its time (the bench's background load)."""
        nodes = platform.node_by_name
        return cls(
            tuple(
                Hold(name, nodes[name].cores, until, "background")
                for name, until in busy_until.items()
                if name in nodes
            )
        )

    def active(self) -> tuple[Hold, ...]:
        """The holds that matter: some cores or memory, ending after they start and after 0."""
        return tuple(
            h for h in self.holds if h.until > max(h.start, 0.0) and (h.cores > 0 or h.memory > 0)
        )

    @property
    def from_start(self) -> bool:
        """Whether every hold is cores only from time 0 (what the compiled core replays)."""
        return all(h.from_start for h in self.active())

    def check(self, platform: Platform) -> None:
        """Raise :class:`OccupancyError` listing every hold that does not fit ``platform``."""
        nodes = platform.node_by_name
        problems = []
        for h in self.holds:
            if h.node not in nodes:
                problems.append(f"hold on unknown node {h.node!r}")
                continue
            if not (math.isfinite(h.until) and h.until >= 0):
                problems.append(f"hold on {h.node!r} ends at {h.until} (need a finite time >= 0)")
            if not (math.isfinite(h.start) and h.start >= 0):
                problems.append(f"hold on {h.node!r} starts at {h.start} (need a finite time >= 0)")
            if h.cores < 0 or h.memory < 0:
                problems.append(
                    f"hold on {h.node!r} takes {h.cores} cores and {h.memory} B memory (need >= 0)"
                )
        for name, (cores, memory) in self._peaks().items():
            if name not in nodes:
                continue  # said above
            if cores > nodes[name].cores:
                problems.append(
                    f"holds on {name!r} take {cores} cores; the node has {nodes[name].cores}"
                )
            if memory > nodes[name].memory:
                problems.append(
                    f"holds on {name!r} take {memory} B memory; the node has {nodes[name].memory}"
                )
        if problems:
            raise OccupancyError(platform.name, problems)

    def _peaks(self) -> dict[str, tuple[int, int]]:
        """Per node, the most cores and the most memory its holds take at one instant."""
        by_node: dict[str, list[Hold]] = {}
        for h in self.holds:
            if h.cores >= 0 and h.memory >= 0:
                by_node.setdefault(h.node, []).append(h)
        peaks = {}
        for name, holds in by_node.items():
            overlapping = [
                [x for x in holds if x.start <= h.start < x.until or x is h] for h in holds
            ]
            peaks[name] = (
                max(sum(x.cores for x in o) for o in overlapping),
                max(sum(x.memory for x in o) for o in overlapping),
            )
        return peaks

    def busy_until(self) -> dict[str, float]:
        """Per node with a hold, when its last hold ends."""
        ends: dict[str, float] = {}
        for h in self.active():
            ends[h.node] = max(ends.get(h.node, 0.0), h.until)
        return ends

    def summary(self, platform: Platform) -> str:
        """One line for a person: how busy the cluster is, e.g. before approving a plan."""
        active = self.active()
        if not active:
            return "the cluster was idle: every node free at once"
        ends = self.busy_until()
        now = [h for h in active if h.start <= 0]
        cores = sum(h.cores for h in now)
        jobs = len({h.job for h in now if h.job})
        who = f" by {jobs} running job{'s' * (jobs != 1)}" if jobs else ""
        memory = sum(h.memory for h in now) / 2**20
        total_memory = sum(n.memory for n in platform.nodes) / 2**20
        mem = f" and {memory:.0f} of {total_memory:.0f} MB memory" if memory else ""
        queued = len({h.job for h in active if h.start > 0})
        ahead = (
            f"; {queued} queued job{'s' * (queued != 1)} ahead of it take nodes later"
            if queued
            else ""
        )
        return (
            f"the cluster was busy: {cores} of {platform.total_cores} cores{mem} on "
            f"{len({h.node for h in now})} of {len(platform.nodes)} nodes held{who}{ahead}, the "
            f"last freed {max(ends.values()):.0f} s after the plan starts"
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (what bench and submit output carry)."""
        return {"holds": [asdict(h) for h in self.holds]}


NO_OCCUPANCY = Occupancy()
"""The idle cluster every planner and simulation assumes unless told otherwise."""
