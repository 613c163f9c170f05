"""Stage 1 seeding: fill the knowledge base with simulated executions, in parallel, resumably.

A seed is a deterministic *plan*: workflow specs (recipe or shape, size, seed) paired round-robin
with platforms, each run under every requested scheduler. Every case's id is derived from
(workflow spec, platform hash, scheduler) before anything runs, so a second run of the same plan
skips the cases already stored: resuming after an interruption, even a SIGKILL, adds no
duplicates (the sidecar is the source of truth; see :mod:`kb.store`).

Workers (separate processes, ``spawn``ed so no Chroma thread is ever forked) generate the
workflow, simulate each scheduler, and return finished records with their embedding and encoded
body; the parent inserts them in batches.
"""

from __future__ import annotations

import multiprocessing
import re
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import numpy as np

from kb.codec import case_to_bytes
from kb.decisions import DecisionRecord, decisions_from_case
from kb.embedding import StructuralEmbedder
from kb.records import CaseRecord, case_from_result, make_case_id, platform_hash
from kb.store import KnowledgeBase
from sim.errors import InputError
from sim.model import Platform, Workflow
from sim.schedule import NetworkModel
from sim.wfformat import workflow_to_dict

DEFAULT_RECIPES = (
    "montage",
    "epigenomics",
    "genome",
    "seismology",
    "soykb",
    "srasearch",
    "blast",
    "bwa",
    "cycles",
)
"""Every WfCommons recipe :mod:`sim.recipes` offers (the learned policy trains on all nine)."""
DEFAULT_SHAPES = ("chain", "fan-out", "fan-in", "fork-join", "layered", "genomics")
DEFAULT_SCHEDULERS = ("heft", "wass", "slurm", "random")


@dataclass(frozen=True, slots=True)
class WorkflowSpec:
    """How to generate one workflow: a WfCommons recipe or a synthetic shape, size and seed."""

    kind: str
    """A recipe (``montage``...) or shape (``fork-join``...) of :mod:`sim.generators`, or a
    shipped demo workflow (``demo:genomics-49``; tasks and seed are then only labels)."""
    tasks: int
    seed: int

    @classmethod
    def sized(cls, kind: str, size: int, seed: int) -> WorkflowSpec:
        """The spec closest to ``size`` tasks the generator accepts for ``kind``."""
        from sim.recipes import RECIPES, recipe_minimum_tasks
        from sim.shapes import GENOMICS_TASKS

        if kind in RECIPES:
            size = max(size, recipe_minimum_tasks(kind))
        elif kind == "genomics":
            size = GENOMICS_TASKS
        return cls(kind, size, seed)

    @property
    def key(self) -> str:
        return f"{self.kind};tasks={self.tasks};seed={self.seed}"

    def build(self) -> Workflow:
        from sim.demo import resolve_workflow
        from sim.generators import generate_workflow

        if self.kind.startswith("demo:"):
            return resolve_workflow(self.kind)
        return generate_workflow(self.kind, self.tasks, self.seed)


@dataclass(frozen=True, slots=True)
class SeedJob:
    """One workflow on one platform, run under each scheduler: ``len(schedulers)`` cases."""

    spec: WorkflowSpec
    platform: str
    schedulers: tuple[str, ...]


@dataclass(frozen=True)
class SeedConfig:
    """What ``wass-chat kb seed`` plans."""

    count: int
    """Cases to plan (rounded up to a whole number of jobs)."""
    recipes: tuple[str, ...] = DEFAULT_RECIPES
    shapes: tuple[str, ...] = DEFAULT_SHAPES
    platforms: tuple[str, ...] = ("demo",)
    schedulers: tuple[str, ...] = DEFAULT_SCHEDULERS
    sizes: tuple[int, ...] = (50, 100, 200)
    """Task counts drawn from (recipes are raised to their WfCommons minimum)."""
    seed: int = 0
    jobs: int = 2
    """Worker processes (1: run in this process)."""
    network_model: NetworkModel = "fair"
    decisions_per_case: int = 4
    """Decision records kept per case, spread over the run."""
    batch: int = 1000
    """Cases per insert (at most 5000)."""


@dataclass(frozen=True, slots=True)
class SeededJob:
    """What a worker returns for one job."""

    cases: list[CaseRecord]
    bodies: list[bytes]
    embeddings: np.ndarray
    decisions: list[DecisionRecord]


@dataclass
class SeedReport:
    """How a seed went."""

    planned: int
    skipped: int
    added: int = 0
    seconds: float = 0.0
    failures: list[str] = field(default_factory=list)

    @property
    def rate(self) -> float:
        """Cases added per second."""
        return self.added / self.seconds if self.seconds > 0 else 0.0


_GENERATED = re.compile(r"^(homo|hetero)-(\d+)(?:@(\d+))?$")
_SEED_RANGE = re.compile(r"^((?:homo|hetero)-\d+)@(\d+)\.\.(\d+)$")


def expand_platforms(names: Sequence[str]) -> tuple[str, ...]:
    """``names`` with each generated-platform seed range ``hetero-16@0..4`` spelled out
    (``hetero-16@0`` ... ``hetero-16@4``); other names unchanged."""
    out: list[str] = []
    for name in names:
        ranged = _SEED_RANGE.match(name)
        if ranged is None:
            out.append(name)
            continue
        first, last = int(ranged[2]), int(ranged[3])
        if last < first:
            raise InputError(name, [f"empty seed range {first}..{last}"])
        out += [f"{ranged[1]}@{seed}" for seed in range(first, last + 1)]
    return tuple(out)


@cache
def resolve_platform(name: str) -> Platform:
    """The platform ``name`` stands for.

    ``demo`` is the bundled demo platform; ``homo-N`` / ``hetero-N`` a generated cluster of N
    nodes (seed 0), ``hetero-N@S`` the one of seed S (what
    ``generate_platform(ClusterSpec(N, heterogeneous=True), S)`` builds, as the learned policy's
    training instances do); anything else a platform file (YAML or JSON).
    """
    from sim import platforms

    if name == "demo":
        from sim.demo import demo_platform

        return demo_platform()
    generated = _GENERATED.match(name)
    if generated:
        spec = platforms.ClusterSpec(
            nodes=int(generated[2]), heterogeneous=generated[1] == "hetero", name=name
        )
        return platforms.generate_platform(spec, seed=int(generated[3] or 0))
    if not Path(name).exists():
        raise InputError(
            name, ["not a platform: use demo, homo-N, hetero-N[@seed] or a platform file"]
        )
    return platforms.load_platform(name)


def plan_seed(config: SeedConfig) -> list[SeedJob]:
    """The deterministic job list for ``config``.

    Job i generates kind i mod K (K recipes and shapes) on platform (i div K) mod P, so every
    (kind, platform) pair occurs once per K x P jobs whatever K and P are.
    """
    kinds = [*config.recipes, *config.shapes]
    problems = []
    if not kinds:
        problems.append("no recipes and no shapes to generate workflows from")
    if not config.platforms:
        problems.append("no platforms")
    if not config.schedulers:
        problems.append("no schedulers")
    if problems:
        raise InputError("seed plan", problems)
    jobs_needed = -(-config.count // len(config.schedulers))
    rng = np.random.default_rng(config.seed)
    jobs = []
    for i in range(jobs_needed):
        size = int(rng.choice(config.sizes))
        spec = WorkflowSpec.sized(kinds[i % len(kinds)], size, config.seed * 1_000_003 + i)
        platform = config.platforms[(i // len(kinds)) % len(config.platforms)]
        jobs.append(SeedJob(spec, platform, config.schedulers))
    return jobs


def job_case_ids(job: SeedJob) -> list[str]:
    """The ids the job's cases will have (known before it runs)."""
    digest = platform_hash(resolve_platform(job.platform))
    return [make_case_id(job.spec.key, digest, s) for s in job.schedulers]


def run_job(
    job: SeedJob, network_model: NetworkModel, decisions_per_case: int, by: str | None = None
) -> SeededJob:
    """Generate, simulate under each scheduler, embed and encode one job (in a worker).

    Its cases are signed ``by`` (default: the worker's ``user@host``)."""
    from kb.provenance import signed, writer
    from policy.base import plan_and_simulate
    from policy.registry import canonical_name, get_scheduler

    by = by or writer()  # seeded cases say who made them too
    workflow = job.spec.build()
    platform = resolve_platform(job.platform)
    vector = StructuralEmbedder().embed_cases([(workflow, platform)])[0]
    cases, decisions = [], []
    for name, case_id in zip(job.schedulers, job_case_ids(job), strict=True):
        scheduler = get_scheduler(name, seed=job.spec.seed)
        result = plan_and_simulate(scheduler, workflow, platform, network_model)
        case = signed(
            case_from_result(
                workflow, platform, result, job.spec.key, scheduler_name=canonical_name(name)
            ),
            by,
        )
        assert case.case_id == case_id, "case id must match the plan's"
        cases.append(case)
        decisions += decisions_from_case(case, decisions_per_case)
    embeddings = np.repeat(vector[None, :], len(cases), axis=0)
    document = workflow_to_dict(workflow)
    return SeededJob(cases, [case_to_bytes(c, document) for c in cases], embeddings, decisions)


def _run_jobs(
    jobs: Sequence[SeedJob], network_model: NetworkModel, decisions: int
) -> list[SeededJob]:
    return [run_job(job, network_model, decisions) for job in jobs]


def pending_jobs(kb: KnowledgeBase, jobs: Sequence[SeedJob]) -> list[SeedJob]:
    """The jobs with at least one case not yet stored."""
    ids = {job: job_case_ids(job) for job in jobs}
    stored = kb.sidecar.existing(i for case_ids in ids.values() for i in case_ids)
    return [job for job in jobs if not set(ids[job]) <= stored]


def seeded_chunks(config: SeedConfig, jobs: Sequence[SeedJob]) -> Iterator[list[SeededJob]]:
    """Finished jobs as they complete: in this process for ``jobs == 1``, else in workers."""
    chunk = 4
    chunks = [list(jobs[i : i + chunk]) for i in range(0, len(jobs), chunk)]
    args = (config.network_model, config.decisions_per_case)
    if config.jobs <= 1:
        for c in chunks:
            yield _run_jobs(c, *args)
        return
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(config.jobs, mp_context=context) as pool:
        todo = iter(chunks)
        running: set[Future[list[SeededJob]]] = set()
        for c in todo:
            running.add(pool.submit(_run_jobs, c, *args))
            if len(running) >= 4 * config.jobs:
                break
        while running:
            done, running = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                yield future.result()
                following = next(todo, None)
                if following is not None:
                    running.add(pool.submit(_run_jobs, following, *args))


def seed_knowledge_base(
    kb: KnowledgeBase, config: SeedConfig, progress: Callable[[int], None] | None = None
) -> SeedReport:
    """Run the plan of ``config`` into ``kb``, skipping cases already stored."""
    return run_seed_jobs(kb, plan_seed(config), config, progress)


def run_seed_jobs(
    kb: KnowledgeBase,
    jobs: Sequence[SeedJob],
    config: SeedConfig,
    progress: Callable[[int], None] | None = None,
) -> SeedReport:
    """Run ``jobs`` (with ``config``'s workers, network model, batch) into ``kb``, resumably."""
    todo = pending_jobs(kb, jobs)
    planned = sum(len(job.schedulers) for job in jobs)
    report = SeedReport(planned=planned, skipped=planned - sum(len(j.schedulers) for j in todo))
    started = time.perf_counter()
    buffer: list[SeededJob] = []

    def flush() -> None:
        if not buffer:
            return
        cases = [c for job in buffer for c in job.cases]
        added = kb.add_cases(
            cases,
            embeddings=np.concatenate([job.embeddings for job in buffer]),
            decisions=[d for job in buffer for d in job.decisions],
            bodies=[b for job in buffer for b in job.bodies],
        )
        report.added += added
        if progress:
            progress(len(cases))
        buffer.clear()

    for finished in seeded_chunks(config, todo):
        buffer += finished
        if sum(len(job.cases) for job in buffer) >= min(config.batch, 5000):
            flush()
    flush()
    report.seconds = time.perf_counter() - started
    return report
