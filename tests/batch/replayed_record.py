"""A synthetic accounting table whose record the replay reproduces, for what-if tests.

The synthesiser draws each job's wait from a distribution, not from a schedule: its nodes hold
several whole-node jobs at once, so no replay of its jobs on the nodes they ran on waits as its
record does, and every what-if on it is refused (wass_chat.batch.baseline_match). A site's own
record comes from a real schedule; :func:`with_replayed_starts` gives the synthetic jobs one:
their starts and ends become those of their replay on the nodes they ran on (the cluster
inferred from the node lists and requests, which the rewrite leaves as they are). The node
lists stay those of the synthesiser, not the replay's placement, so the record's per-node
overlap is not the replay's (the peak-use calibration finds nodes to raise).
"""

from __future__ import annotations

import polars as pl

from sim.batch.energy import PowerModel
from wass_chat.batch.scenario import load_scenario
from wass_chat.batch.whatif import run


def with_replayed_starts(jobs: pl.DataFrame) -> pl.DataFrame:
    """``jobs`` with each replayed allocation's start and end those of the replay (steps and
    jobs that never started as they were)."""
    loaded = load_scenario(jobs, cluster="jobs")
    result = run(loaded.scenario, PowerModel())
    w = loaded.scenario.workload
    starts = pl.DataFrame(
        {"job_id": list(w.job_ids), "__start": result.start_s},
        schema_overrides={"__start": pl.Int64},
    ).filter(pl.col("__start") >= 0)
    unit = jobs.schema["start"].time_unit  # type: ignore[union-attr]
    replayed = pl.from_epoch(pl.col("__start"), time_unit="s").cast(pl.Datetime(unit))
    moved = ~pl.col("is_step") & pl.col("__start").is_not_null()
    return (
        jobs.join(starts, on="job_id", how="left")
        .with_columns(
            pl.when(moved).then(replayed).otherwise(pl.col("start")).alias("start"),
            pl.when(moved & pl.col("end").is_not_null())
            .then(replayed + pl.duration(seconds=pl.col("elapsed_s")))
            .otherwise(pl.col("end"))
            .alias("end"),
        )
        .drop("__start")
    )
