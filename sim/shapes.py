"""Synthetic workflow shapes from the WASS-RAG evaluation, with a target CCR.

Shapes: ``chain`` (a linear pipeline), ``fan-out`` (one task scattering to many), ``fan-in``
(many tasks gathered by one), ``fork-join`` (scatter then gather), ``layered`` (a random DAG
built level by level) and ``genomics`` (a fixed 49-task variant-calling pipeline: split, 12
lanes of align/sort/mark-duplicates, merge, 8 haplotype callers, joint genotyping, annotation,
report).

Task runtimes on the reference machine are log-normal around ``mean_runtime``; each edge
carries one file whose size is log-normal too, then every size is scaled so the workflow's
communication-to-computation ratio on the reference platform equals ``ccr`` (see
:mod:`sim.workflow_stats`). Entry tasks read a workflow input from the shared filesystem and
exit tasks write a result. All randomness comes from one ``numpy.random.Generator(seed)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import fmean

import numpy as np

from sim.errors import InputError
from sim.model import REFERENCE_SPEED, File, Task, Workflow
from sim.workflow_stats import REFERENCE_BANDWIDTH

GiB = 2**30

SHAPES = ("chain", "fan-out", "fan-in", "fork-join", "layered", "genomics")
GENOMICS_TASKS = 49
_MINIMUM_TASKS = {
    "chain": 1,
    "fan-out": 2,
    "fan-in": 2,
    "fork-join": 3,
    "layered": 2,
    "genomics": GENOMICS_TASKS,
}


@dataclass(frozen=True)
class Stage:
    """A kind of task: its resources and how long it runs relative to the mean runtime."""

    category: str
    cores: int = 1
    memory: int = 2 * GiB
    runtime_factor: float = 1.0


@dataclass(frozen=True)
class ShapeConfig:
    """Cost parameters shared by every shape."""

    ccr: float = 1.0
    """Target communication-to-computation ratio on the reference platform."""
    mean_runtime: float = 60.0
    """Mean task runtime in seconds on the reference machine (before stage factors)."""
    runtime_sigma: float = 0.5
    """Sigma of the log-normal runtime distribution (0: every task takes the mean)."""
    size_sigma: float = 0.5
    """Sigma of the log-normal file size distribution, before scaling to the CCR."""


# A skeleton is the graph before costs: (task id, stage, parent ids) in topological order.
Skeleton = list[tuple[str, Stage, tuple[str, ...]]]


def generate_shape(
    shape: str, num_tasks: int | None, seed: int, config: ShapeConfig | None = None
) -> Workflow:
    """A ``shape`` workflow of ``num_tasks`` tasks (None: 20, or 49 for genomics)."""
    config = config or ShapeConfig()
    if shape not in SHAPES:
        raise InputError(shape, [f"unknown shape {shape!r} (shapes: {', '.join(SHAPES)})"])
    if num_tasks is None:
        num_tasks = GENOMICS_TASKS if shape == "genomics" else 20
    problems = _parameter_problems(shape, num_tasks, config)
    if problems:
        raise InputError(shape, problems)
    rng = np.random.default_rng(seed)
    skeleton = _SKELETONS[shape](num_tasks, rng)
    return _with_costs(shape, f"{shape}-{num_tasks}", skeleton, rng, config, seed)


def _parameter_problems(shape: str, num_tasks: int, config: ShapeConfig) -> list[str]:
    problems = []
    minimum = _MINIMUM_TASKS[shape]
    if shape == "genomics" and num_tasks != GENOMICS_TASKS:
        problems.append(
            f"the genomics pipeline has exactly {GENOMICS_TASKS} tasks, not {num_tasks}"
        )
    elif num_tasks < minimum:
        problems.append(f"{shape} needs at least {minimum} tasks, got {num_tasks}")
    if config.ccr < 0:
        problems.append(f"CCR must be >= 0, got {config.ccr}")
    if config.mean_runtime <= 0:
        problems.append(f"mean runtime must be > 0, got {config.mean_runtime}")
    if config.runtime_sigma < 0 or config.size_sigma < 0:
        problems.append("log-normal sigmas must be >= 0")
    return problems


# --- skeletons ----------------------------------------------------------------------------


def _ids(prefix: str, count: int, start: int = 0) -> list[str]:
    return [f"{prefix}_{i:03d}" for i in range(start, start + count)]


def _chain(n: int, rng: np.random.Generator) -> Skeleton:
    ids = _ids("stage", n)
    stage = Stage("stage")
    return [(tid, stage, (ids[i - 1],) if i else ()) for i, tid in enumerate(ids)]


def _fan_out(n: int, rng: np.random.Generator) -> Skeleton:
    return [("scatter_000", Stage("scatter"), ())] + [
        (tid, Stage("work"), ("scatter_000",)) for tid in _ids("work", n - 1, 1)
    ]


def _fan_in(n: int, rng: np.random.Generator) -> Skeleton:
    workers = _ids("work", n - 1)
    return [(tid, Stage("work"), ()) for tid in workers] + [
        (f"gather_{n - 1:03d}", Stage("gather"), tuple(workers))
    ]


def _fork_join(n: int, rng: np.random.Generator) -> Skeleton:
    workers = _ids("work", n - 2, 1)
    return (
        [("fork_000", Stage("fork", runtime_factor=0.5), ())]
        + [(tid, Stage("work"), ("fork_000",)) for tid in workers]
        + [(f"join_{n - 1:03d}", Stage("join", runtime_factor=0.5), tuple(workers))]
    )


def _layered(n: int, rng: np.random.Generator) -> Skeleton:
    """Levels of random width; each task has 1-3 parents on the level above and, one time in
    five, one more from any earlier level."""
    num_levels = max(2, min(n, round(n**0.5)))
    widths = np.ones(num_levels, dtype=int) + rng.multinomial(
        n - num_levels, [1 / num_levels] * num_levels
    )
    levels: list[list[str]] = []
    skeleton: Skeleton = []
    index = 0
    for level, width in enumerate(widths):
        ids = _ids(f"L{level}", int(width), index)
        index += int(width)
        for tid in ids:
            parents: list[str] = []
            if level:
                above = levels[-1]
                count = int(rng.integers(1, min(3, len(above)) + 1))
                parents = [above[i] for i in sorted(rng.choice(len(above), count, replace=False))]
                if level > 1 and rng.random() < 0.2:
                    earlier = [t for lvl in levels[:-1] for t in lvl]
                    parents.append(earlier[int(rng.integers(len(earlier)))])
            skeleton.append((tid, Stage(f"level{level}"), tuple(parents)))
        levels.append(ids)
    return skeleton


_SPLIT = Stage("fastq_split", cores=1, memory=2 * GiB, runtime_factor=0.5)
_ALIGN = Stage("bwa_align", cores=4, memory=8 * GiB, runtime_factor=3.0)
_SORT = Stage("sort_sam", cores=2, memory=4 * GiB, runtime_factor=0.8)
_MARKDUP = Stage("mark_duplicates", cores=1, memory=8 * GiB, runtime_factor=1.0)
_MERGE = Stage("merge_bams", cores=2, memory=4 * GiB, runtime_factor=1.0)
_CALL = Stage("haplotype_caller", cores=2, memory=16 * GiB, runtime_factor=2.5)
_GENOTYPE = Stage("genotype_gvcfs", cores=4, memory=16 * GiB, runtime_factor=1.5)
_ANNOTATE = Stage("annotate_variants", cores=1, memory=4 * GiB, runtime_factor=0.7)
_REPORT = Stage("report", cores=1, memory=1 * GiB, runtime_factor=0.2)


def _genomics(n: int, rng: np.random.Generator) -> Skeleton:
    lanes, chromosome_groups = 12, 8
    skeleton: Skeleton = [("fastq_split", _SPLIT, ())]
    marked = []
    for lane in range(lanes):
        align, sort, markdup = f"align_{lane:02d}", f"sort_{lane:02d}", f"markdup_{lane:02d}"
        skeleton += [
            (align, _ALIGN, ("fastq_split",)),
            (sort, _SORT, (align,)),
            (markdup, _MARKDUP, (sort,)),
        ]
        marked.append(markdup)
    skeleton.append(("merge_bams", _MERGE, tuple(marked)))
    calls = [f"call_chr_group_{g}" for g in range(chromosome_groups)]
    skeleton += [(c, _CALL, ("merge_bams",)) for c in calls]
    skeleton += [
        ("genotype_gvcfs", _GENOTYPE, tuple(calls)),
        ("annotate_variants", _ANNOTATE, ("genotype_gvcfs",)),
        ("report", _REPORT, ("annotate_variants",)),
    ]
    return skeleton


_SKELETONS = {
    "chain": _chain,
    "fan-out": _fan_out,
    "fan-in": _fan_in,
    "fork-join": _fork_join,
    "layered": _layered,
    "genomics": _genomics,
}

# Workflow inputs read by many tasks of the genomics pipeline (the reference genome).
_SHARED_INPUTS = {"genomics": ("reference_genome.fa", ("bwa_align", "haplotype_caller"))}


# --- costs --------------------------------------------------------------------------------


def _lognormal(rng: np.random.Generator, sigma: float, size: int) -> np.ndarray:
    """Samples with mean 1 (mu = -sigma^2 / 2)."""
    return rng.lognormal(-(sigma**2) / 2, sigma, size) if sigma else np.ones(size)


def _with_costs(
    shape: str,
    name: str,
    skeleton: Skeleton,
    rng: np.random.Generator,
    config: ShapeConfig,
    seed: int,
) -> Workflow:
    """Draw runtimes and file sizes for ``skeleton`` and scale the sizes to the target CCR."""
    runtimes = _lognormal(rng, config.runtime_sigma, len(skeleton)) * config.mean_runtime
    has_children = {p for _, _, parents in skeleton for p in parents}
    inputs: dict[str, list[str]] = {tid: [] for tid, _, _ in skeleton}
    outputs: dict[str, list[str]] = {tid: [] for tid, _, _ in skeleton}
    edge_files: list[str] = []
    other_files: list[str] = []
    for tid, _, parents in skeleton:
        for parent in parents:
            file_id = f"{parent}.to.{tid}"
            outputs[parent].append(file_id)
            inputs[tid].append(file_id)
            edge_files.append(file_id)
        if not parents:
            inputs[tid].append(f"{tid}.input")
            other_files.append(f"{tid}.input")
        if tid not in has_children:
            outputs[tid].append(f"{tid}.result")
            other_files.append(f"{tid}.result")
    shared = _SHARED_INPUTS.get(shape)
    if shared:
        shared_id, readers = shared
        other_files.append(shared_id)
        for tid, stage, _ in skeleton:
            if stage.category in readers:
                inputs[tid].append(shared_id)

    tasks = []
    for (tid, stage, _), runtime in zip(skeleton, runtimes, strict=True):
        seconds = round(float(runtime) * stage.runtime_factor, 3)
        tasks.append(
            Task(
                id=tid,
                work=seconds * (stage.cores * REFERENCE_SPEED),
                category=stage.category,
                cores=stage.cores,
                memory=stage.memory,
                inputs=tuple(inputs[tid]),
                outputs=tuple(outputs[tid]),
            )
        )
    raw = _lognormal(rng, config.size_sigma, len(edge_files) + len(other_files))
    mean_compute = fmean(t.runtime for t in tasks)
    mean_edge_raw = fmean(raw[: len(edge_files)]) if edge_files else 1.0
    bytes_per_unit = config.ccr * mean_compute * REFERENCE_BANDWIDTH / mean_edge_raw
    files = tuple(
        File(fid, round(float(r) * bytes_per_unit))
        for fid, r in zip(edge_files + other_files, raw, strict=True)
    )
    description = f"synthetic {shape} workflow, seed {seed}, target CCR {config.ccr:g}"
    return Workflow(name, tuple(tasks), files, description)
