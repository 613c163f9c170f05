"""A small knowledge base over the embedded demo, seeded on first use in a few seconds.

The agent and the TUI retrieve from it offline: the shipped demo workflows under every
registered scheduler, plus small synthetic shapes under the schedulers the paper compares, all
on the demo platform. Seeding is resumable like any seed, so an interrupted first start simply
finishes on the next.
"""

from __future__ import annotations

from pathlib import Path

from kb.seed import SeedConfig, SeedJob, SeedReport, WorkflowSpec, run_seed_jobs
from kb.store import KnowledgeBase

DEMO_SHAPES = ("chain", "fan-out", "fan-in", "fork-join", "layered", "genomics")
DEMO_SHAPE_SIZES = (10, 20, 30)
DEMO_SEEDS = 3
DEMO_SHAPE_SCHEDULERS = ("heft", "wass", "slurm", "random")


def demo_jobs() -> list[SeedJob]:
    """The demo knowledge base's seed plan (about 250 cases)."""
    from policy.registry import scheduler_names
    from sim.demo import demo_workflow, demo_workflow_names

    jobs = [
        SeedJob(WorkflowSpec(f"demo:{name}", len(demo_workflow(name)), 0), "demo",
                scheduler_names())
        for name in demo_workflow_names()
    ]  # fmt: skip
    shapes = {
        WorkflowSpec.sized(shape, size, seed)
        for shape in DEMO_SHAPES
        for size in DEMO_SHAPE_SIZES
        for seed in range(DEMO_SEEDS)
    }
    jobs += [
        SeedJob(spec, "demo", DEMO_SHAPE_SCHEDULERS) for spec in sorted(shapes, key=lambda s: s.key)
    ]
    return jobs


def ensure_demo_kb(path: Path) -> SeedReport:
    """Seed the demo knowledge base at ``path`` unless every demo case is already there."""
    kb = KnowledgeBase(path)
    try:
        return run_seed_jobs(kb, demo_jobs(), SeedConfig(count=0, jobs=1, platforms=("demo",)))
    finally:
        kb.close()
