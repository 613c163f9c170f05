"""Requests printed as Slurm takes them: what ``request_size`` writes, sacct's ReqMem reader
reads back to the same bytes, in the largest whole unit (64T, not 65536G)."""

from __future__ import annotations

import pytest

from wass_chat.analytics.job_efficiency import JobEfficiency, advice, request_size
from wass_chat.sacct.parse import parse_sacct_text


@pytest.mark.parametrize(
    ("num_bytes", "printed"),
    [
        (768 * 2**20, "768M"),
        (5 * 2**30, "5G"),
        (1536 * 2**30, "1536G"),
        (64 * 2**40, "64T"),
        (1.5 * 2**20, "2M"),
    ],
)
def test_request_sizes_read_back_through_sacct(num_bytes: float, printed: str) -> None:
    assert request_size(num_bytes) == printed
    rows = parse_sacct_text(f"JobID|ReqMem|NNodes|NCPUS\n1|{printed}|1|2\n").jobs
    assert rows["req_mem_bytes"].item() == pytest.approx(num_bytes, abs=2**20)


def job(nnodes: int, ncpus: int, busy_cpus: float) -> JobEfficiency:
    elapsed = 3600
    return JobEfficiency(
        job_id="7",
        job_id_raw="7",
        user="u",
        account=None,
        partition="batch",
        state="COMPLETED",
        nnodes=nnodes,
        ncpus=ncpus,
        elapsed_s=elapsed,
        timelimit_s=None,
        cpu_used_s=busy_cpus * elapsed,
        cpu_efficiency_pct=100 * busy_cpus / ncpus,
        mem_used_bytes=None,
        mem_request_bytes=None,
        memory_efficiency_pct=None,
        memory_basis="TRESUsageInTot",
        time_efficiency_pct=None,
        wasted_core_hours=0.0,
        usage_recorded=True,
    )


def cpu_tip(j: JobEfficiency) -> str:
    return next(t for t in advice(j) if t.startswith("CPU:"))


def test_a_multi_node_job_is_never_told_to_ask_more_cpus_per_task_than_a_node_has() -> None:
    tip = cpu_tip(job(nnodes=8, ncpus=256, busy_cpus=60.0))  # 32-CPU nodes, 75 CPUs needed
    assert "--cpus-per-task" not in tip
    assert "--ntasks=75" in tip and "3 of its 32-CPU nodes instead of 8" in tip
    assert "60.0 of its 256 CPUs" in tip


def test_a_one_node_job_may_be_told_either_flag() -> None:
    tip = cpu_tip(job(nnodes=1, ncpus=32, busy_cpus=4.0))
    assert "--cpus-per-task=5 for one multi-threaded task, or --ntasks=5" in tip


def test_large_counts_read_with_separators_but_flags_stay_numbers() -> None:
    tip = cpu_tip(job(nnodes=512, ncpus=32768, busy_cpus=10389.3))
    assert "10,389.3 of its 32,768 CPUs" in tip and "12,987 CPUs would do" in tip
    assert "--ntasks=12987," in tip and "203 of its 64-CPU nodes instead of 512" in tip
