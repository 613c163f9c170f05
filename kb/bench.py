"""``wass-chat kb bench``: insert rate, top-k latency, recall against exact search, disk, reopen.

The vectors follow the real embedder's distribution: the v0 raw features of generated workflows
(WfCommons recipes and synthetic shapes, several sizes) on several platforms are the *base*;
the store is filled with perturbations of them (Gaussian noise of ``noise`` times each feature's
scale added to the raw features before normalising), which is how a large store of similar but
distinct executions looks. Queries are fresh perturbations, so none is stored verbatim.
Each vector belongs to the platform family of its base (:func:`kb.shards.platform_family`), so
the store is sharded as a real one is, and each query searches its own family, as
``KnowledgeBase.query`` does. Recall@k compares Chroma's answer with an exact brute-force search
(numpy) over the same family's vectors.
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

from kb.chroma_client import HnswSettings
from kb.curate import directory_bytes
from kb.embedding import FEATURE_SCALE, StructuralEmbedder, raw_features
from kb.seed import DEFAULT_RECIPES, DEFAULT_SHAPES, WorkflowSpec, resolve_platform
from kb.shards import platform_family
from kb.store import MAX_BATCH, KnowledgeBase


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
    ef_sweep: tuple[int, ...] = ()
    """Further ef_search values to measure latency and recall at, each in a fresh process
    (Chroma applies a changed ef_search only when the collection is reopened)."""


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
) -> tuple[np.ndarray, np.ndarray]:
    """Raw v0 features of every generated (workflow, platform) pair, and each pair's platform
    family."""
    platforms = [resolve_platform(p) for p in config.platforms]
    rows, families = [], []
    for spec in specs:
        workflow = spec.build()
        rows += [raw_features(workflow, p) for p in platforms]
        families += [platform_family(p) for p in platforms]
        progress(1)
    return np.stack(rows), np.array(families)


def perturbed_vectors(
    base: np.ndarray, count: int, noise: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """``count`` unit vectors (random base rows plus noise, normalised by the v0 embedder) and
    the base row each came from."""
    embedder = StructuralEmbedder()
    out = np.empty((count, embedder.dim), dtype=np.float32)
    origin = rng.integers(0, len(base), count)
    for start in range(0, count, 50_000):
        n = min(50_000, count - start)
        rows = base[origin[start : start + n]]
        rows = rows + rng.normal(0.0, noise, rows.shape) * FEATURE_SCALE
        out[start : start + n] = embedder.normalise(rows)
    return out, origin


SCHEDULERS = ("heft", "wass", "slurm", "random")
REOPENS = 3
"""Fresh processes timed for the reopen figure (the median is reported: the first one can meet
the operating system still writing the index out)."""


def bench_case_id(i: int) -> str:
    """Bench case ``i``'s id, as long as a real one (``case-`` and 24 hex digits), since Chroma
    keeps and reloads an id map whose size grows with the ids."""
    return f"case-{i:024x}"


def bench_row(case_id: str, i: int) -> tuple[object, ...]:
    """A synthetic sidecar row (see ``kb.sidecar_rows.CASE_COLUMNS``) for bench case ``i``: real
    columns a hit reads, an empty body (the bench measures retrieval, not decoding)."""
    makespan = float(i % 997)
    return (
        case_id,
        f"wf{i}",
        f"bench;{i}",
        "bench",
        "p",
        SCHEDULERS[i % 4],
        makespan,
        "",
        "",
        1,
        "bench",
        "",
        b"",
        "bench",
    )


def exact_top_k(
    vectors: np.ndarray,
    queries: np.ndarray,
    k: int,
    families: np.ndarray | None = None,
    query_families: np.ndarray | None = None,
) -> np.ndarray:
    """Indices of the ``k`` most cosine-similar rows of ``vectors`` for each query (unit rows),
    among the rows of the query's family when families are given."""
    members = (
        {f: np.flatnonzero(families == f) for f in np.unique(families)}
        if families is not None
        else {}
    )
    result = np.empty((len(queries), k), dtype=np.int64)
    for i, q in enumerate(queries):
        rows = members[query_families[i]] if query_families is not None else None
        sims = (vectors if rows is None else vectors[rows]) @ q
        top = np.argpartition(-sims, k)[:k]
        best = top[np.argsort(-sims[top])]
        result[i] = best if rows is None else rows[best]
    return result


_REOPEN_SCRIPT = """
import time
imported_at = time.time()
import json, sys
import chromadb, numpy as np
from kb.store import KnowledgeBase
imports_done = time.time()
kb = KnowledgeBase(sys.argv[1])
opened = time.time()
kb.nearest_cases(np.array(json.loads(sys.argv[2]), dtype=np.float32), 5, sys.argv[3])
answered = time.time()
print(json.dumps({"started": imported_at, "imports": imports_done, "opened": opened,
                  "answered": answered}))
"""


def measure_reopen(directory: Path, query: np.ndarray, family: str) -> dict[str, float]:
    """A fresh process opens the store (with its consistency check) and answers one query.

    ``seconds`` is the wall time from launching the process to the answer; the parts are the
    interpreter start, the imports (numpy, Chroma, ours), opening the store (Chroma client,
    collections, sidecar, sync check), and the first query (Chroma loads the HNSW index of the
    query's family shard).
    """
    launched = time.time()
    out = subprocess.run(
        [sys.executable, "-c", _REOPEN_SCRIPT, str(directory), json.dumps(query.tolist()), family],
        check=True,
        capture_output=True,
        text=True,
    )
    t = json.loads(out.stdout.strip().splitlines()[-1])
    return {
        "seconds": t["answered"] - launched,
        "interpreter": t["started"] - launched,
        "imports": t["imports"] - t["started"],
        "open": t["opened"] - t["imports"],
        "first_query": t["answered"] - t["opened"],
    }


_SWEEP_SCRIPT = """
import json, sys, time
import numpy as np
from kb.store import KnowledgeBase
kb = KnowledgeBase(sys.argv[1])
queries = np.load(sys.argv[2])
families = json.loads(open(sys.argv[4]).read())
k = int(sys.argv[3])
for q, f in zip(queries[:10], families):
    kb.nearest_cases(q, k, f)
latencies, found = [], []
for q, f in zip(queries, families):
    t0 = time.perf_counter()
    hits = kb.nearest_cases(q, k, f)
    latencies.append(time.perf_counter() - t0)
    found.append([int(h.case_id.removeprefix("case-"), 16) for h in hits])
print(json.dumps({"latencies": latencies, "found": found}))
"""


def recall_at_k(found: list[list[int]], truth: np.ndarray, k: int) -> float:
    """Mean share of the exact top ``k`` that the approximate answers contain."""
    return float(np.mean([len(set(f) & set(t)) / k for f, t in zip(found, truth, strict=True)]))


def latency_ms(latencies: list[float]) -> dict[str, float]:
    lat = np.array(latencies) * 1000
    return {"p50": float(np.percentile(lat, 50)), "p95": float(np.percentile(lat, 95))}


def sweep_ef_search(
    directory: Path,
    queries: np.ndarray,
    families: list[str],
    truth: np.ndarray,
    config: BenchConfig,
) -> list[dict[str, Any]]:
    """Latency and recall at each of ``config.ef_sweep``, set on the stored collection and
    measured by a fresh process; the collection is left at the last value."""
    kb = KnowledgeBase(directory)
    results = []
    with tempfile.TemporaryDirectory() as scratch:
        query_file = Path(scratch) / "queries.npy"
        np.save(query_file, queries)
        family_file = Path(scratch) / "families.json"
        family_file.write_text(json.dumps(families))
        for ef in config.ef_sweep:
            kb.cases.modify(configuration={"hnsw": {"ef_search": ef}})
            out = subprocess.run(
                [
                    sys.executable,
                    "-c",
                    _SWEEP_SCRIPT,
                    str(directory),
                    str(query_file),
                    str(config.k),
                    str(family_file),
                ],
                check=True,
                capture_output=True,
                text=True,
            )
            measured = json.loads(out.stdout.strip().splitlines()[-1])
            results.append(
                {
                    "ef_search": ef,
                    "query_ms": latency_ms(measured["latencies"]),
                    f"recall_at_{config.k}": recall_at_k(measured["found"], truth, config.k),
                }
            )
    kb.close()
    return results


def run_bench(
    config: BenchConfig,
    on_stage: Callable[[str, int], Callable[[int], None]] | None = None,
) -> dict[str, Any]:
    """Run the benchmark; ``on_stage(name, total)`` returns a progress callback per stage."""
    stage = on_stage or (lambda name, total: lambda n: None)
    rng = np.random.default_rng(config.seed)
    specs = bench_specs(config)
    base, base_families = base_features(
        config, specs, stage("generating base workflows", len(specs))
    )
    vectors, origin = perturbed_vectors(base, config.cases, config.noise, rng)
    queries, query_origin = perturbed_vectors(base, config.queries, config.noise, rng)
    families, query_families = base_families[origin], base_families[query_origin]
    directory = config.directory or Path(tempfile.mkdtemp(prefix="kb-bench-")) / "kb"
    kb = KnowledgeBase(directory, hnsw=config.hnsw, repair=False)
    insert_progress = stage("inserting", config.cases)
    started = time.perf_counter()
    for start in range(0, config.cases, MAX_BATCH):
        stop = min(start + MAX_BATCH, config.cases)
        ids = [bench_case_id(i) for i in range(start, stop)]
        kb.sidecar.insert_case_rows([bench_row(case_id, i) for i, case_id in enumerate(ids, start)])
        kb.cases.add(
            ids=ids,
            embeddings=vectors[start:stop],
            metadatas=[
                {
                    "scheduler": SCHEDULERS[i % 4],
                    "makespan": float(i % 997),
                    "workflow": "bench",
                    "family": str(families[i]),
                }
                for i in range(start, stop)
            ],
        )
        insert_progress(stop - start)
    kb.sidecar.mark_chroma_synced(kb.cases.name)
    insert_seconds = time.perf_counter() - started
    query_family_list = [str(f) for f in query_families]
    for family in sorted(set(query_family_list)):  # warm-up: first queries load the indexes
        kb.nearest_cases(queries[query_family_list.index(family)], config.k, family)
    latencies, found = [], []
    for q, family in zip(queries, query_family_list, strict=True):
        t0 = time.perf_counter()
        hits = kb.nearest_cases(q, config.k, family)
        latencies.append(time.perf_counter() - t0)
        found.append([int(h.case_id.removeprefix("case-"), 16) for h in hits])
    across = []  # the same queries without a family: every shard searched and merged
    for q in queries[: min(50, len(queries))]:
        t0 = time.perf_counter()
        kb.nearest_cases(q, config.k)
        across.append(time.perf_counter() - t0)
    kb.close()
    truth = exact_top_k(vectors, queries, config.k, families, query_families)
    recall = recall_at_k(found, truth, config.k)
    names, counts = np.unique(families, return_counts=True)
    shard_sizes = {str(f): int(n) for f, n in zip(names, counts, strict=True)}
    # Reopen with queries of the largest shard: the slowest first query a user can meet.
    largest = max(shard_sizes, key=lambda f: shard_sizes[f])
    reopen_queries = [q for q, f in zip(queries, query_family_list, strict=True) if f == largest]
    reopen_queries = reopen_queries or list(queries)  # tiny benches may draw none of it
    reopens = [measure_reopen(directory, q, largest) for q in reopen_queries[:REOPENS]]
    reopen = sorted(reopens, key=lambda r: r["seconds"])[len(reopens) // 2]
    sweep = (
        sweep_ef_search(directory, queries, query_family_list, truth, config)
        if config.ef_sweep
        else []
    )
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
        "shards": shard_sizes,
        "query_ms": latency_ms(latencies),
        f"recall_at_{config.k}": recall,
        "query_ms_all_shards": latency_ms(across),
        "queries": config.queries,
        "disk_bytes": directory_bytes(directory),
        "reopen": {**reopen, "family": largest, "shard_cases": shard_sizes[largest]},
        "reopen_seconds": reopen["seconds"],
        "reopen_runs": [round(r["seconds"], 3) for r in reopens],
        "ef_sweep": sweep,
        "directory": str(directory),
    }
