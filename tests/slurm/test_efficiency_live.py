"""The efficiency view from the real cluster's accounting: Slurm 22.05's sacct gives TotalCPU,
MaxRSS, TRESUsageInTot and (with AccountingStorageTRES=gres/gpu) the GPUs in AllocTRES; the
import fetches them and the view's numbers agree with sacct's own text read independently.

MaxRSS is sampled: at the cluster's JobAcctGatherFrequency=30 a job of a few seconds gets none,
so the memory job asks for ``--acctg-freq=1`` (as a user checking their job's memory would).
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from datetime import datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

from tests.slurm.conftest import Cluster, wait_for_final
from wass_chat.analytics.analysis import analyze
from wass_chat.cli import main
from wass_chat.sacct.cache import SacctCache
from wass_chat.sacct.fetch import supported_fields
from wass_chat.sacct.ingest import ingest_slurm
from wass_chat.slurm.commands import SlurmCommands

pytestmark = [pytest.mark.slurm, pytest.mark.xdist_group("slurm"), pytest.mark.slow]

BUSY = (
    "python3 -c 'import time\nb = bytearray(150 * 2**20)\nfor i in range(0, len(b), 4096): "
    "b[i] = 1\nt = time.time()\nwhile time.time() - t < 4: pass'"
)


USAGE_FIELDS = ("TotalCPU", "MaxRSS", "TRESUsageInTot", "NTasks")
TWO_TASKS = (
    "srun -n2 python3 -c 'import time\nb = bytearray(120 * 2**20)\nfor i in range(0, len(b), "
    "4096): b[i] = 1\nt = time.time()\nwhile time.time() - t < 4: pass'"
)


def sacct_rows(job_ids: list[str]) -> dict[str, dict[str, str]]:
    fields = "JobID,Elapsed,NCPUS,NNodes,ReqMem,TotalCPU,MaxRSS,AllocTRES,TRESUsageInTot,NTasks"
    out = subprocess.run(
        ["sacct", "-P", "-n", "-j", ",".join(job_ids), f"--format={fields}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return {
        line.split("|")[0]: dict(zip(fields.split(","), line.split("|"), strict=True))
        for line in out.splitlines()
        if line
    }


def settled_rows(job_ids: list[str], attempts: int = 60) -> dict[str, dict[str, str]]:
    """:func:`sacct_rows` once slurmdbd has the jobs' final records. Right after the jobs end,
    22.05's sacct can still print a request it has not converted (ReqMem ``16?`` for a
    ``--mem-per-cpu`` job, seen once in CI): poll, one second apart, until every ReqMem reads
    as a size; the assertions then judge what sacct settled on."""
    rows = sacct_rows(job_ids)
    for _ in range(attempts):
        if all(
            re.fullmatch(r"\d+(\.\d+)?[KMGT]", rows.get(j, {}).get("ReqMem", "")) for j in job_ids
        ):
            break
        time.sleep(1)
        rows = sacct_rows(job_ids)
    return rows


def clock(text: str) -> float:
    """``MM:SS.mmm`` / ``HH:MM:SS`` -> seconds with their fractions (TotalCPU, Elapsed here)."""
    parts = [float(p) for p in text.split(":")]
    return parts[-1] + 60 * parts[-2] + (3600 * parts[0] if len(parts) == 3 else 0)


def step_memory(row: dict[str, str]) -> float:
    """A step's memory over all its tasks, as seff reads it: TRESUsageInTot's mem=."""
    match = re.search(r"(?:^|,)mem=(\d+(?:\.\d+)?)([KMG]?)(?:,|$)", row["TRESUsageInTot"])
    assert match, row  # bytes, or converted like MaxRSS (mem=164.50M, CI stop 48 on 22.05)
    return float(match[1]) * {"": 1, "K": 2**10, "M": 2**20, "G": 2**30}[match[2]]


def size_bytes(text: str) -> tuple[float, float]:
    """A size sacct printed (``168448K``, or ``164.50M`` once it converts a larger value) in
    bytes, and how far its rounding to two decimals may be from the exact value."""
    unit = {"K": 2**10, "M": 2**20, "G": 2**30}[text[-1]]
    return float(text[:-1]) * unit, 0.005 * unit if "." in text else 0.0


def test_live_usage_fields_feed_the_efficiency_view(cluster: Cluster, tmp_path: Path) -> None:
    helpformat = subprocess.run(
        ["sacct", "--helpformat"], capture_output=True, text=True, check=True
    ).stdout
    assert set(USAGE_FIELDS) <= set(supported_fields(helpformat))
    commands = SlurmCommands()
    start = datetime.now().replace(microsecond=0) - timedelta(seconds=5)
    out = f"--output={tmp_path}/%j.out"
    busy = commands.sbatch(["-N1", "-c2", "--mem=300M", "--acctg-freq=1", out, f"--wrap={BUSY}"])
    gpu = commands.sbatch(
        ["-N1", "-w", "n4", "--gres=gpu:1", "-c2", "--mem-per-cpu=100M", out, "--wrap=sleep 2"]
    )
    wait_for_final([busy, gpu], timeout=90, commands=commands)
    rows = settled_rows([busy, gpu])
    assert rows[f"{busy}.batch"]["MaxRSS"], rows  # sampled at 1 s: present
    assert "gres/gpu=1" in rows[gpu]["AllocTRES"]
    end = datetime.now().replace(microsecond=0) + timedelta(minutes=1)
    cache = SacctCache(tmp_path / "cache")
    ingest_slurm(cache, start, end)
    jobs = cache.scan().collect()
    printed, rounding = size_bytes(rows[f"{busy}.batch"]["MaxRSS"])
    imported = jobs.filter(jobs["job_id"] == f"{busy}.batch")["max_rss_bytes"].item()
    assert abs(imported - printed) <= rounding, (imported, printed)
    # other tests' jobs may end inside this window on the shared test cluster: only ours
    ours = pl.col("job_id").str.extract(r"^(\d+)").is_in([busy, gpu])
    a = analyze(cache.scan().filter(ours), start, end, compare=False)

    allocated = sum(clock(rows[j]["Elapsed"]) * int(rows[j]["NCPUS"]) for j in (busy, gpu))
    used = sum(clock(rows[j]["TotalCPU"]) for j in (busy, gpu))
    # 22.05 prints ReqMem without suffix: the whole job's request (300M; 2 x 100M per CPU)
    assert rows[busy]["ReqMem"] == "300M" and rows[gpu]["ReqMem"] == "200M"
    peak = step_memory(rows[f"{busy}.batch"]) / (300 * 2**20)
    assert a.efficiency.measured_jobs == 2
    assert a.efficiency.allocated_core_hours == pytest.approx(allocated / 3600)
    assert a.efficiency.used_core_hours == pytest.approx(used / 3600)
    # printed to one decimal: measured values can sit on a .x5 edge that the product (from
    # core-hours) and this test (from seconds) round apart, so compare with the exact ratio
    assert a.efficiency.cpu_efficiency_pct == pytest.approx(100 * used / allocated, abs=0.0501)
    memory = a.tables["efficiency_by_user"]["median_mem_eff_pct"].to_list()
    gpu_rss = rows[f"{gpu}.batch"]["MaxRSS"]
    if gpu_rss:  # sleep 2 at the default sampling: usually no sample
        assert a.efficiency.memory_jobs == 2
    else:
        assert a.efficiency.memory_jobs == 1 and len(memory) == 1
        assert memory[0] == pytest.approx(100 * peak, abs=0.0501)
    assert a.tables["gpu_by_account"]["gpu_jobs"].to_list() == [1]


def test_live_multi_task_job_memory_counts_every_task(
    cluster: Cluster, tmp_path: Path, wass_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A two-task step: its memory is both tasks' (TRESUsageInTot), about twice one task's
    MaxRSS; `wass-chat sacct efficiency JOBID --json` reads it live, by seff's rules."""
    commands = SlurmCommands()
    out = f"--output={tmp_path}/%j.out"
    job = commands.sbatch(
        ["-N1", "-n2", "--mem=1000M", "--acctg-freq=1", out, f"--wrap={TWO_TASKS}"]
    )
    wait_for_final([job], timeout=90, commands=commands)
    rows = settled_rows([job])
    step = rows[f"{job}.0"]
    assert step["NTasks"] == "2" and step["MaxRSS"], rows
    both = step_memory(step)
    assert both > 1.5 * size_bytes(step["MaxRSS"])[0]  # two tasks of ~120 MB each, not one
    capsys.readouterr()
    assert main(["sacct", "efficiency", job, "--json"]) == 0  # not in the cache: asked live
    [figures] = json.loads(capsys.readouterr().out)
    assert figures["job_id"] == job and figures["memory_basis"] == "TRESUsageInTot"
    assert figures["memory_efficiency_pct"] == pytest.approx(100 * both / (1000 * 2**20), abs=1)
    cpu = clock(rows[job]["TotalCPU"]) / (clock(rows[job]["Elapsed"]) * int(rows[job]["NCPUS"]))
    assert figures["cpu_efficiency_pct"] == pytest.approx(100 * cpu, abs=0.1)


VARIANTS = {
    "-P": ["-P"],
    "-p": ["-p"],
    "--delimiter=^|^ -n": ["-P", "-n", "--delimiter=^|^"],
    "--noconvert": ["-P", "--noconvert"],
    "--units=M": ["-P", "--units=M"],
}
"""Ways sites export accounting, each read back by the product (the -n one with --format)."""


def test_live_exports_in_every_layout_give_the_same_figures(
    cluster: Cluster, tmp_path: Path
) -> None:
    """The local cluster's own sacct, exported as sites do (-p, -P, -n with a delimiter,
    --noconvert, --units=M) with columns in another order: every export imports completely and
    gives the job's efficiency within rounding of the --units=M text."""
    from wass_chat.analytics.job_efficiency import jobs_efficiency
    from wass_chat.sacct.ingest import ingest_file

    commands = SlurmCommands()
    out = f"--output={tmp_path}/%j.out"
    job = commands.sbatch(
        ["-N1", "-n2", "--mem=1000M", "--acctg-freq=1", out, f"--wrap={TWO_TASKS}"]
    )
    wait_for_final([job], timeout=90, commands=commands)
    settled_rows([job])
    fields = "State,TRESUsageInTot,NTasks,AllocTRES,Elapsed,JobID,NCPUS,TotalCPU,MaxRSS,ReqMem"
    figures = {}
    for name, options in VARIANTS.items():
        text = subprocess.run(
            ["sacct", *options, f"--format={fields}", "-j", job],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        path = tmp_path / f"export{len(figures)}.txt"
        path.write_text(text)
        headerless = "-n" in options
        record = ingest_file(
            SacctCache(tmp_path / f"cache{len(figures)}"),
            path,
            columns=fields.split(",") if headerless else None,
        )
        assert record.malformed == 0 and record.rows_written == text.count("\n") - (
            0 if headerless else 1
        ), (name, text)
        [one] = jobs_efficiency(SacctCache(tmp_path / f"cache{len(figures)}").scan(), [job])
        figures[name] = one
    reference = figures["-P"]
    assert reference.memory_basis == "TRESUsageInTot" and reference.mem_used_bytes
    for name, one in figures.items():
        assert one.cpu_efficiency_pct == pytest.approx(reference.cpu_efficiency_pct, abs=0.01)
        assert one.mem_used_bytes == pytest.approx(reference.mem_used_bytes, rel=0.001), name
        assert one.mem_request_bytes == reference.mem_request_bytes, name
