"""Every scheduler by name: what the CLI, the bench harness and the test suite iterate over.

The learned schedulers (``policy``, ``policy-norag``, ``rag-guarded``, ``dqn``) simulate while
they plan, so they take the ``network_model`` the caller evaluates under.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from policy.base import Scheduler
from policy.cpop import CPOP
from policy.heft import HEFT
from policy.ljf import LJF
from policy.maxmin import MaxMin
from policy.minmin import MinMin
from policy.peft import PEFT
from policy.random_policy import RandomPolicy
from policy.sjf import SJF
from policy.traditional_slurm import TraditionalSlurm
from policy.wass_heuristic import WassHeuristic
from sim.errors import UnknownName


class UnknownSchedulerError(UnknownName):
    """A scheduler name that no registered scheduler answers to (the nearest ones offered)."""

    kind = "scheduler"


@dataclass(frozen=True)
class SchedulerEntry:
    """A registered scheduler: how to build it and one line saying what it does."""

    name: str
    factory: Callable[..., Scheduler]
    description: str
    seeded: bool = False
    """Whether the factory takes a ``seed`` keyword (its result depends on it)."""
    network_aware: bool = False
    """Whether the factory takes ``network_model`` (it simulates while planning)."""


_REGISTRY: dict[str, SchedulerEntry] = {}
_ALIASES: dict[str, str] = {}


def register_scheduler(entry: SchedulerEntry, aliases: tuple[str, ...] = ()) -> None:
    """Add (or replace) a scheduler under ``entry.name`` and its aliases."""
    _REGISTRY[entry.name] = entry
    for alias in aliases:
        _ALIASES[alias] = entry.name


for _cls, _aliases in (
    (HEFT, ()),
    (CPOP, ()),
    (PEFT, ()),
    (MinMin, ("min-min",)),
    (MaxMin, ("max-min",)),
    (SJF, ()),
    (LJF, ()),
    (TraditionalSlurm, ("traditional-slurm", "traditional_slurm")),
    (WassHeuristic, ("wass-heuristic", "wass_heuristic")),
):
    register_scheduler(SchedulerEntry(_cls.name, _cls, _cls.description), _aliases)
register_scheduler(
    SchedulerEntry(RandomPolicy.name, RandomPolicy, RandomPolicy.description, seeded=True)
)


def _learned_policy(**kwargs: Any) -> Scheduler:
    from policy.learned.planner import LearnedPlanner

    return LearnedPlanner(**kwargs)


def _learned_policy_norag(**kwargs: Any) -> Scheduler:
    from policy.learned.planner import NoRagPlanner

    return NoRagPlanner(**kwargs)


def _learned_policy_sampled(**kwargs: Any) -> Scheduler:
    from policy.learned.planner import SampledPlanner

    return SampledPlanner(**kwargs)


def _learned_policy_lookahead(**kwargs: Any) -> Scheduler:
    from policy.learned.lookahead import LookaheadPlanner

    return LookaheadPlanner(**kwargs)


def _dqn(**kwargs: Any) -> Scheduler:
    from policy.learned.dqn_agent import DQNPlanner

    return DQNPlanner(**kwargs)


def _rag_guarded(**kwargs: Any) -> Scheduler:
    from policy.learned.rag_guarded import RagGuarded

    return RagGuarded(**kwargs)


def _classic_chooser(**kwargs: Any) -> Scheduler:
    from policy.learned.rag_guarded import ClassicChooser

    return ClassicChooser(**kwargs)


def _lookahead_guarded(**kwargs: Any) -> Scheduler:
    from policy.learned.rag_guarded import LookaheadGuarded

    return LookaheadGuarded(**kwargs)


# The learned schedulers import torch only when built (keeps the registry import light).
for _name, _factory, _description, _aliases in (
    ("policy", _learned_policy, "learned GNN + PPO policy (RAG teacher)", ("wass-rag", "rag")),
    ("policy-norag", _learned_policy_norag, "learned policy, sparse reward only", ("drl",)),
    ("policy-sample", _learned_policy_sampled, "learned policy, best of 9 rollouts", ()),
    ("policy-lookahead", _learned_policy_lookahead, "learned policy + one-step lookahead", ()),
    ("rag-guarded", _rag_guarded, "learned policy guarded by HEFT and PEFT", ("guarded",)),
    ("rag-guarded-lookahead", _lookahead_guarded, "policy-lookahead guarded by HEFT and PEFT", ()),
    ("heft-or-peft", _classic_chooser, "HEFT or PEFT, whichever the guard's draws favour", ()),
    ("dqn", _dqn, "DQN with prioritized replay over the same graph encoder", ()),
):
    register_scheduler(SchedulerEntry(_name, _factory, _description, network_aware=True), _aliases)


DEFAULT_COMPARISON = (
    "heft",
    "cpop",
    "peft",
    "minmin",
    "wass",
    "slurm",
    "policy",
    "rag-guarded",
)
"""What a comparison ranks unless schedulers are named (the chat's ``/compare``, the report's
runs): the classic list heuristics, the WASS heuristic, the Slurm-like baseline, and the
learned policy with its guarded form. The lookahead and sampling variants simulate many
rollouts per decision, so they cost the most of all: name them to include them."""


def scheduler_names() -> tuple[str, ...]:
    """Canonical names of every registered scheduler, in registration order."""
    return tuple(_REGISTRY)


def canonical_name(name: str) -> str:
    """The registered name ``name`` refers to (aliases resolved, case-insensitive)."""
    key = name.strip().lower()
    key = _ALIASES.get(key, key)
    if key not in _REGISTRY:
        raise UnknownSchedulerError("scheduler", name, scheduler_names())
    return key


def describe(name: str) -> str:
    return _REGISTRY[canonical_name(name)].description


def get_scheduler(name: str, **kwargs: Any) -> Scheduler:
    """A fresh scheduler; ``seed=`` is passed on only to seeded schedulers."""
    entry = _REGISTRY[canonical_name(name)]
    if not entry.seeded:
        kwargs.pop("seed", None)
    if not entry.network_aware:
        kwargs.pop("network_model", None)
    return entry.factory(**kwargs)
