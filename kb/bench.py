"""``wass-chat kb bench``: insert rate, top-k latency, recall against exact search, disk, reopen.

The vectors follow the real embedder's distribution: the v0 raw features of generated workflows
(WfCommons recipes and synthetic shapes, several sizes) on several platforms are the *base*;
the store is filled with perturbations of them (Gaussian noise of ``noise`` times each feature's
scale added to the raw features before normalising), which is how a large store of similar but
distinct executions looks. Queries are fresh perturbations, so none is stored verbatim.
Recall@k compares Chroma's answer with an exact brute-force search (numpy) over the same vectors.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from kb.curate import directory_bytes
from kb.embedding import FEATURE_SCALE, StructuralEmbedder, raw_features
from kb.seed import DEFAULT_RECIPES, DEFAULT_SHAPES, WorkflowSpec, resolve_platform
from kb.store import MAX_BATCH, HnswSettings, KnowledgeBase


@dataclass(frozen=True)
class BenchConfig:
    """One benchmark run."""

    cases: int = 100_000
    recipes: tuple[str, ...] = DEFAULT_RECIPES
    shapes: tuple[str, ...] = DEFAULT_SHAPES
    sizes: tuple[int, ...] = (50, 100, 200, 400)
    seeds: int = 3
    """Workflows per (recipe or shape, size)."""
    platforms: tuple[str, ...] = ("demo",)
    noise: float = 0.05
    """Perturbation, in units of each raw feature's normalisation scale."""
    queries: int = 200
    k: int = 5
    seed: int = 0
    hnsw: HnswSettings = field(default_factory=HnswSettings)
    directory: Path | None = None
    """Where the store goes (a fresh temporary directory when None; must not exist)."""


def bench_specs(config: BenchConfig) -> list[WorkflowSpec]:
    """The distinct workflows the base vectors are made from."""
    specs = [
        WorkflowSpec.sized(kind, size, seed)
        for size in config.sizes
        for seed in range(config.seeds)
        for kind in (*config.recipes, *config.shapes)
    ]
    return list(dict.fromkeys(specs))


def base_features(
    config: BenchConfig, specs: list[WorkflowSpec], progress: Callable[[int], None]
) -> np.ndarray:
    """Raw v0 features of every generated (workflow, platform) pair."""
    platforms = [resolve_platform(p) for p in config.platforms]
    rows = []
    for spec in specs:
        workflow = spec.build()
        rows += [raw_features(workflow, p) for p in platforms]
        progress(1)
    return np.stack(rows)


def perturbed_vectors(
    base: np.ndarray, count: int, noise: float, rng: np.random.Generator
) -> np.ndarray:
    """``count`` unit vectors: random base rows plus noise, normalised by the v0 embedder."""
    embedder = StructuralEmbedder()
    out = np.empty((count, embedder.dim), dtype=np.float32)
    for start in range(0, count, 50_000):
        n = min(50_000, count - start)
        rows = base[rng.integers(0, len(base), n)]
        rows = rows + rng.normal(0.0, noise, rows.shape) * FEATURE_SCALE
        out[start : start + n] = embedder.normalise(rows)
    return out


def exact_top_k(vectors: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` most cosine-similar rows of ``vectors`` for each query (unit rows)."""
    result = np.empty((len(queries), k), dtype=np.int64)
    for i, q in enumerate(queries):
        sims = vectors @ q
        top = np.argpartition(-sims, k)[:k]
        result[i] = top[np.argsort(-sims[top])]
    return result


_REOPEN_SCRIPT = """
import json, sys, time
import numpy as np
started = time.perf_counter()
from kb.store import KnowledgeBase
kb = KnowledgeBase(sys.argv[1], repair=False)
kb.nearest(np.array(json.loads(sys.argv[2]), dtype=np.float32), 5)
print(json.dumps({"seconds": time.perf_counter() - started}))
"""


def measure_reopen(directory: Path, query: np.ndarray) -> float:
    """Seconds for a fresh process to open the store and answer one query (imports excluded)."""
    script = "import kb.store, chromadb, numpy\n" + _REOPEN_SCRIPT
    out = subprocess.run(
        [sys.executable, "-c", script, str(directory), json.dumps(query.tolist())],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    seconds: float = json.loads(out.stdout.strip().splitlines()[-1])["seconds"]
    return seconds


def run_bench(
    config: BenchConfig,
    on_stage: Callable[[str, int], Callable[[int], None]] | None = None,
) -> dict[str, Any]:
    """Run the benchmark; ``on_stage(name, total)`` returns a progress callback per stage."""
    stage = on_stage or (lambda name, total: lambda n: None)
    rng = np.random.default_rng(config.seed)
    specs = bench_specs(config)
    base = base_features(config, specs, stage("generating base workflows", len(specs)))
    vectors = perturbed_vectors(base, config.cases, config.noise, rng)
    queries = perturbed_vectors(base, config.queries, config.noise, rng)
    directory = config.directory or Path(tempfile.mkdtemp(prefix="kb-bench-")) / "kb"
    kb = KnowledgeBase(directory, hnsw=config.hnsw, repair=False)
    insert_progress = stage("inserting", config.cases)
    schedulers = np.array(["heft", "wass", "slurm", "random"])
    started = time.perf_counter()
    for start in range(0, config.cases, MAX_BATCH):
        stop = min(start + MAX_BATCH, config.cases)
        kb.cases.add(
            ids=[f"bench-{i}" for i in range(start, stop)],
            embeddings=vectors[start:stop],
            metadatas=[
                {
                    "scheduler": str(schedulers[i % 4]),
                    "makespan": float(i % 997),
                    "workflow": "bench",
                }
                for i in range(start, stop)
            ],
        )
        insert_progress(stop - start)
    insert_seconds = time.perf_counter() - started
    for q in queries[:10]:
        kb.nearest(q, config.k)  # warm-up: first queries load the index
    latencies, found = [], []
    for q in queries:
        t0 = time.perf_counter()
        ids, _, _ = kb.nearest(q, config.k)
        latencies.append(time.perf_counter() - t0)
        found.append([int(i.removeprefix("bench-")) for i in ids])
    kb.close()
    truth = exact_top_k(vectors, queries, config.k)
    recall = float(
        np.mean([len(set(f) & set(t)) / config.k for f, t in zip(found, truth, strict=True)])
    )
    lat = np.array(latencies) * 1000
    return {
        "cases": config.cases,
        "vectors": (
            f"{len(base)} base v0 embeddings of generated workflows ({', '.join(config.recipes)};"
            f" shapes {', '.join(config.shapes)}; sizes {list(config.sizes)}; {config.seeds} seeds)"
            f" on platforms {', '.join(config.platforms)}, extended to {config.cases} by Gaussian"
            f" noise of {config.noise} x feature scale on the raw features before normalising"
        ),
        "hnsw": asdict(config.hnsw),
        "insert_per_second": config.cases / insert_seconds,
        "insert_seconds": insert_seconds,
        "query_ms": {"p50": float(np.percentile(lat, 50)), "p95": float(np.percentile(lat, 95))},
        f"recall_at_{config.k}": recall,
        "queries": config.queries,
        "disk_bytes": directory_bytes(directory),
        "reopen_seconds": measure_reopen(directory, queries[0]),
        "directory": str(directory),
    }
