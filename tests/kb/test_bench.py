"""The benchmark end to end at a small size: real Chroma, real generated workflows."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from kb.bench import BenchConfig, run_bench


@pytest.mark.slow
def test_a_small_bench_reports_recall_reopen_and_an_ef_sweep(tmp_path: Path) -> None:
    config = BenchConfig(
        cases=3000,
        recipes=("epigenomics",),
        shapes=("chain", "fork-join"),
        sizes=(20, 50),
        seeds=2,
        platforms=("homo-4", "hetero-8@1"),
        queries=20,
        ef_sweep=(32,),
        directory=tmp_path / "kb",
    )
    stages: list[str] = []

    def on_stage(name: str, total: int) -> Callable[[int], None]:
        stages.append(name)
        return lambda n: None

    result = run_bench(config, on_stage)
    assert stages == ["generating base workflows", "inserting"]
    assert result["cases"] == 3000 and result["recall_at_5"] >= 0.9
    assert result["query_ms"]["p50"] > 0 and result["disk_bytes"] > 0
    # One shard per platform family, holding every vector once.
    assert set(result["shards"]) == {"hom4", "het8"} and sum(result["shards"].values()) == 3000
    assert result["query_ms_all_shards"]["p50"] > 0
    reopen = result["reopen"]
    assert reopen["seconds"] >= reopen["open"] + reopen["first_query"] > 0
    assert reopen["shard_cases"] == max(result["shards"].values())
    (swept,) = result["ef_sweep"]
    assert swept["ef_search"] == 32 and 0.5 <= swept["recall_at_5"] <= 1.0
