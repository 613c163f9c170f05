"""``rag-guarded``: the learned policy, never worse than the classics (and its lookahead form).

Before committing, simulate the policy's schedule and those of HEFT and PEFT on the same
workflow, platform and network model, and keep the best. Every candidate is compared as the
static schedule it would be replayed as, which is also how the schedule is evaluated, so the
result can never be worse than min(HEFT, PEFT) on any instance. On a busy cluster every
candidate plans around, and is simulated on, the same ``occupancy``. :attr:`RagGuarded.last_choice`
keeps each candidate's makespan, so the agent can explain which won and why.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from policy.base import StaticScheduler
from policy.heft import HEFT
from policy.learned.planner import LearnedPlanner
from policy.peft import PEFT
from sim.model import Platform, Workflow, check_fits
from sim.occupancy import Occupancy
from sim.schedule import NetworkModel, StaticSchedule


@dataclass(frozen=True)
class GuardChoice:
    """Which candidate won, and every candidate's simulated makespan."""

    winner: str
    makespans: dict[str, float]


class RagGuarded(StaticScheduler):
    """Best of {learned policy, HEFT, PEFT} by simulated makespan."""

    name: str = "rag-guarded"
    description: ClassVar[str] = "learned policy guarded by HEFT and PEFT (best simulated wins)"

    def __init__(
        self, network_model: NetworkModel = "fair", checkpoint: str | Path | None = None
    ) -> None:
        self.network_model: NetworkModel = network_model
        self.checkpoint = checkpoint
        self.last_choice: GuardChoice | None = None

    def learned_planner(self) -> LearnedPlanner:
        """The learned contender (its registry name keys it in :meth:`candidates`)."""
        return LearnedPlanner(self.network_model, self.checkpoint)

    def candidates(
        self, workflow: Workflow, platform: Platform, occupancy: Occupancy | None = None
    ) -> dict[str, StaticSchedule]:
        """Each contender's schedule, as it would be replayed; the learned one first."""
        learned = self.learned_planner()
        return {
            learned.name: learned.schedule(workflow, platform, occupancy),
            "heft": HEFT().schedule(workflow, platform, occupancy),
            "peft": PEFT().schedule(workflow, platform, occupancy),
        }

    def schedule(
        self, workflow: Workflow, platform: Platform, occupancy: Occupancy | None = None
    ) -> StaticSchedule:
        from sim.engine import simulate

        check_fits(workflow, platform)
        schedules = self.candidates(workflow, platform, occupancy)
        makespans = {
            name: simulate(workflow, platform, s, self.network_model, occupancy).makespan
            for name, s in schedules.items()
        }
        learned = next(iter(schedules))  # the learned candidate comes first and wins ties
        winner = min(makespans, key=lambda n: (makespans[n], n != learned))
        self.last_choice = GuardChoice(winner, makespans)
        chosen = schedules[winner]
        return StaticSchedule(chosen.assignment, chosen.order, self.name, makespans[winner])


class LookaheadGuarded(RagGuarded):
    """Best of {``policy-lookahead``, HEFT, PEFT}: the lookahead's gains, never below the classics.

    Plans in seconds, not milliseconds (the lookahead simulates 3 completions per decision).
    """

    name: str = "rag-guarded-lookahead"
    description: ClassVar[str] = "policy-lookahead guarded by HEFT and PEFT (best simulated wins)"

    def learned_planner(self) -> LearnedPlanner:
        from policy.learned.lookahead import LookaheadPlanner

        return LookaheadPlanner(self.network_model, self.checkpoint)
