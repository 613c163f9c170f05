"""A small knowledge base over the embedded demo, shipped ready-made so a first answer is quick.

The agent and the TUI retrieve from it offline: the shipped demo workflows under every
registered scheduler, plus small synthetic shapes under the schedulers the paper compares, all
on the demo platform. Simulating them takes about a minute on two cores (the search-based
learned schedulers dominate), so the finished cases ship in the package (``demo-cases.npz``,
written by ``scripts/make-demo-kb``) and a fresh data home only loads them. Anything the asset
lacks (a scheduler added since it was written) is still seeded, resumably like any seed.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import numpy as np

from kb.codec import case_from_bytes
from kb.decisions import decisions_from_case
from kb.seed import (
    SeedConfig,
    SeedJob,
    SeedReport,
    WorkflowSpec,
    pending_jobs,
    run_job,
    run_seed_jobs,
)
from kb.store import KnowledgeBase
from sim.model import Workflow

DEMO_SHAPES = ("chain", "fan-out", "fan-in", "fork-join", "layered", "genomics")
DEMO_SHAPE_SIZES = (10, 20, 30)
DEMO_SEEDS = 3
DEMO_SHAPE_SCHEDULERS = ("heft", "wass", "slurm", "random")
DEMO_ASSET = "demo-cases.npz"
DEMO_SEED_CONFIG = SeedConfig(count=0, jobs=1, platforms=("demo",))
"""How the demo cases are simulated (the asset holds exactly these)."""


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


def demo_asset_path() -> Path:
    return Path(str(resources.files("kb").joinpath(DEMO_ASSET)))


def write_demo_asset(path: Path) -> int:
    """Simulate every demo case (about a minute) and save them as ``path``; returns the count.

    The file holds each case's encoded body (concatenated, with offsets) and its structural
    embedding: plain arrays, so loading it needs no pickle.
    """
    bodies: list[bytes] = []
    embeddings = []
    for job in demo_jobs():
        done = run_job(job, DEMO_SEED_CONFIG.network_model, DEMO_SEED_CONFIG.decisions_per_case)
        bodies += done.bodies
        embeddings.append(done.embeddings)
    offsets = np.cumsum([0, *(len(b) for b in bodies)])
    np.savez_compressed(
        path,
        bodies=np.frombuffer(b"".join(bodies), dtype=np.uint8),
        offsets=offsets.astype(np.int64),
        embeddings=np.concatenate(embeddings).astype(np.float32),
    )
    return len(bodies)


def read_demo_asset(path: Path | None = None) -> tuple[list[bytes], np.ndarray]:
    """The shipped demo cases: encoded bodies and their embeddings (one row each)."""
    with np.load(path or demo_asset_path(), allow_pickle=False) as data:
        blob, offsets = data["bodies"].tobytes(), data["offsets"]
        embeddings = np.asarray(data["embeddings"])
    bodies = [blob[offsets[i] : offsets[i + 1]] for i in range(len(offsets) - 1)]
    return bodies, embeddings


def load_demo_asset(kb: KnowledgeBase, path: Path | None = None) -> int:
    """Store the shipped demo cases (and their decisions) in ``kb``; returns cases added."""
    bodies, embeddings = read_demo_asset(path)
    workflows: dict[str, Workflow] = {}  # one parse per workflow, not per case
    cases = [case_from_bytes(body, workflows) for body in bodies]
    decisions = [
        d for case in cases for d in decisions_from_case(case, DEMO_SEED_CONFIG.decisions_per_case)
    ]
    return kb.add_cases(cases, embeddings=embeddings, decisions=decisions, bodies=bodies)


def ensure_demo_kb(path: Path) -> SeedReport:
    """Fill the demo knowledge base at ``path`` unless every demo case is already there: load
    the shipped cases, then seed whatever the asset lacks."""
    kb = KnowledgeBase(path)
    try:
        jobs = demo_jobs()
        loaded = load_demo_asset(kb) if pending_jobs(kb, jobs) else 0
        report = run_seed_jobs(kb, jobs, DEMO_SEED_CONFIG)
        report.added += loaded
        report.skipped = report.planned - report.added  # every other planned case was there
        return report
    finally:
        kb.close()
