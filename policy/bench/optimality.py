"""The optimality-gap study: every scheduler against the CP-SAT optimum on small instances.

Instances are random DAGs of 6-10 tasks on 3 heterogeneous one-core nodes (ideal network, as the
exact solver assumes), drawn from one seeded Generator. The gap of a scheduler on an instance is
``makespan / optimum - 1``, both simulated under the ideal model (the optimum is the solver's
schedule replayed, which is at most the solver's rounded-up objective).
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np

from policy.base import plan_and_simulate
from policy.bench.instances import random_dag, random_platform
from policy.bench.runner import Progress
from policy.optimal import solve_optimal
from policy.registry import get_scheduler
from sim.engine import simulate
from sim.model import Platform, Workflow


@dataclass(frozen=True, slots=True)
class GapRecord:
    instance: int
    tasks: int
    optimum: float
    proven_optimal: bool
    makespans: dict[str, float]

    def gap(self, scheduler: str) -> float:
        return self.makespans[scheduler] / self.optimum - 1.0


def small_instances(count: int, seed: int) -> list[tuple[Workflow, Platform]]:
    """``count`` small random instances (6-10 tasks, 3 nodes), reproducible from ``seed``."""
    rng = np.random.default_rng(seed)
    instances = []
    for k in range(count):
        n_tasks = int(rng.integers(6, 11))
        workflow = random_dag(
            rng,
            n_tasks,
            float(rng.uniform(0.2, 0.5)),
            with_inputs=bool(k % 2),
            name=f"small-{k}",
        )
        platform = random_platform(rng, 3, latency=1e-4, name=f"small-{k}")
        instances.append((workflow, platform))
    return instances


def _solve_one(args: tuple[int, Workflow, Platform, tuple[str, ...], int]) -> GapRecord:
    index, workflow, platform, schedulers, seed = args
    solution = solve_optimal(workflow, platform)
    optimum = simulate(workflow, platform, solution.schedule, "ideal").makespan
    makespans = {}
    for name in schedulers:
        scheduler = get_scheduler(name, seed=seed)
        makespans[name] = plan_and_simulate(scheduler, workflow, platform, "ideal").makespan
    return GapRecord(index, len(workflow), optimum, solution.proven_optimal, makespans)


def optimality_study(
    schedulers: tuple[str, ...],
    count: int = 50,
    seed: int = 0,
    jobs: int = 1,
    progress: Progress | None = None,
) -> list[GapRecord]:
    """Solve ``count`` small instances exactly and simulate each scheduler on them."""
    work = [(k, w, p, schedulers, seed) for k, (w, p) in enumerate(small_instances(count, seed))]
    records: list[GapRecord] = []
    if jobs <= 1:
        for item in work:
            records.append(_solve_one(item))
            if progress:
                progress(len(records), count)
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            for record in pool.map(_solve_one, work):
                records.append(record)
                if progress:
                    progress(len(records), count)
    return records


def mean_gaps(records: list[GapRecord]) -> dict[str, float]:
    """Scheduler -> mean optimality gap (fraction) over ``records``."""
    if not records:
        return {}
    names = records[0].makespans
    return {n: float(np.mean([r.gap(n) for r in records])) for n in names}
