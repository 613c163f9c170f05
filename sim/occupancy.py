"""A busy cluster's starting point: which cores other jobs hold, and until when.

Planning on an empty machine is wrong on a shared cluster: other jobs hold cores when the
workflow arrives. An :class:`Occupancy` lists those holds (``cores`` of a node held from the
plan's time 0 until ``until`` seconds); it is the one mechanism every consumer reads:

* the planners' timelines (:class:`policy.plan.Plan`) start with each hold reserved over
  ``[0, until)``, so HEFT, PEFT, CPOP, Min-Min... place tasks around them;
* the simulator (:func:`sim.engine.simulate`) starts with those cores taken and frees them at
  ``until``, so dynamic schedulers (the WASS heuristic, the learned policy) see them through the
  engine's view, and makespans are measured on the busy machine.

Holds take cores only: a node's memory and GPUs are left to the workflow (a job that held them
all would hold its cores too). The bench draws a seeded occupancy (:mod:`sim.background`);
``submit`` reads it from the live cluster (:mod:`wass_chat.slurm.occupancy`).
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
    """``cores`` cores of ``node`` held by another job from time 0 until ``until`` (s)."""

    node: str
    cores: int
    until: float
    job: str = ""
    """Who holds them: a Slurm job id on a live cluster, ``background`` in the bench."""


@dataclass(frozen=True)
class Occupancy:
    """Every hold on the cluster when the workflow arrives; empty: an idle machine."""

    holds: tuple[Hold, ...] = ()

    def __bool__(self) -> bool:
        """Whether anything is held at time 0 (holds ending at 0 change nothing)."""
        return any(h.until > 0 and h.cores > 0 for h in self.holds)

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
        """The holds that matter: some cores, ending after time 0."""
        return tuple(h for h in self.holds if h.until > 0 and h.cores > 0)

    def check(self, platform: Platform) -> None:
        """Raise :class:`OccupancyError` listing every hold that does not fit ``platform``."""
        nodes = platform.node_by_name
        problems = []
        held: dict[str, int] = {}
        for h in self.holds:
            if h.node not in nodes:
                problems.append(f"hold on unknown node {h.node!r}")
                continue
            if not (math.isfinite(h.until) and h.until >= 0):
                problems.append(f"hold on {h.node!r} ends at {h.until} (need a finite time >= 0)")
            if h.cores < 0:
                problems.append(f"hold on {h.node!r} takes {h.cores} cores (need >= 0)")
            held[h.node] = held.get(h.node, 0) + max(h.cores, 0)
        for name, cores in held.items():
            if cores > nodes[name].cores:
                problems.append(
                    f"holds on {name!r} take {cores} cores; the node has {nodes[name].cores}"
                )
        if problems:
            raise OccupancyError(platform.name, problems)

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
        cores = sum(h.cores for h in active)
        jobs = len({h.job for h in active if h.job})
        who = f" by {jobs} running job{'s' * (jobs != 1)}" if jobs else ""
        return (
            f"the cluster was busy: {cores} of {platform.total_cores} cores on {len(ends)} of "
            f"{len(platform.nodes)} nodes held{who}, the last freed {max(ends.values()):.0f} s "
            "after the plan starts"
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (what bench and submit output carry)."""
        return {"holds": [asdict(h) for h in self.holds]}


NO_OCCUPANCY = Occupancy()
"""The idle cluster every planner and simulation assumes unless told otherwise."""
