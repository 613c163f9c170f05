"""Other sites' real sacct exports (fixtures/real/README.md) in every layout sacct writes, and
per-job efficiency against the field's rules, computed here independently in plain Python."""

from __future__ import annotations

import random
import re
from pathlib import Path

import polars as pl
import pytest

from sim.errors import InputError
from tests.analytics.conftest import FIXTURES
from wass_chat.analytics.job_efficiency import jobs_efficiency
from wass_chat.sacct.cache import SacctCache
from wass_chat.sacct.ingest import NothingImportable, ingest_file
from wass_chat.sacct.layout import ExportLayoutError, parse_format
from wass_chat.sacct.parse import parse_sacct_file, parse_sacct_text

REAL = FIXTURES / "real"
HB_FORMAT = str.split(
    "JobID,JobName,User,Partition,NodeList,NNodes,NCPUs,NTasks,State,Submit,Start,End,Timelimit,"
    "Elapsed,TotalCPU,CPUTime,UserCPU,SystemCPU,ReqMem,MaxRSS,MaxVMSize,ReqTRES,AllocTRES,"
    "TRESUsageInMax,TRESUsageInTot,TRESUsageOutTot,MaxDiskRead,MaxDiskWrite,MaxRSSNode,MaxRSSTask,"
    "MaxVMSizeNode,MaxVMSizeTask,MaxDiskReadNode,MaxDiskReadTask,MaxDiskWriteNode,"
    "MaxDiskWriteTask,Comment",
    ",",
)
REPORTSEFF = "AdminComment,AllocCPUS,Elapsed,JobID,JobIDRaw,MaxRSS,NNodes,NTasks,REQMEM,State"


def hb_rows() -> list[dict[str, str]]:
    """The hb-jobinfo export as dicts (37 columns, ☃, one trailing ☃ per line)."""
    lines = (REAL / "hb_jobinfo_sacct.txt").read_text(encoding="utf-8").splitlines()
    return [dict(zip(HB_FORMAT, line[:-1].split("☃"), strict=True)) for line in lines]


def write(
    path: Path,
    rows: list[dict[str, str]],
    columns: list[str],
    sep: str,
    *,
    header: bool,
    trailing: bool,
) -> Path:
    """Write ``rows`` as sacct would with ``--format=columns --delimiter=sep``, ``-p``/``-P``,
    with or without ``-n``."""
    end = sep if trailing else ""
    lines = [sep.join(columns) + end] if header else []
    lines += [sep.join(r[c] for c in columns) + end for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# --- the field's rules, independently --------------------------------------------------------
UNIT = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def seconds(text: str) -> float:
    """[D-][HH:]MM:SS[.fff] -> seconds with fractions."""
    days, _, clock = text.rpartition("-")
    parts = [float(p) for p in clock.split(":")]
    while len(parts) < 3:
        parts.insert(0, 0.0)
    return (int(days) if days else 0) * 86400 + parts[0] * 3600 + parts[1] * 60 + parts[2]


def tres_mem(text: str, bare: str) -> float | None:
    match = re.search(r"(?:^|,)mem=([0-9.]+)([KMGT]?)", text)
    return float(match[1]) * UNIT[match[2] or bare] if match else None


def field_rules(rows: list[dict[str, str]]) -> dict[str, dict[str, float | None]]:
    """seff's rules per job: CPU = TotalCPU / (Elapsed x NCPUS); memory = the largest step's
    TRESUsageInTot mem (else MaxRSS x NTasks) / AllocTRES mem (else ReqMem); time = Elapsed /
    Timelimit."""
    ran = [r for r in rows if r.get("Start", "x") not in ("None", "Unknown")]
    jobs = {r["JobID"]: r for r in ran if "." not in r["JobID"] and r["State"] != "PENDING"}
    out: dict[str, dict[str, float | None]] = {}
    for job_id, r in jobs.items():
        elapsed, ncpus = seconds(r["Elapsed"]), int(r.get("NCPUs") or r.get("AllocCPUS") or 0)
        steps = [s for s in rows if s["JobID"].startswith(job_id + ".")]
        used = [
            tres_mem(s.get("TRESUsageInTot", ""), "")
            or float(s["MaxRSS"].rstrip("K") or 0) * 1024 * int(s.get("NTasks") or 1)
            for s in steps
        ]
        request = tres_mem(r.get("AllocTRES", ""), "M")
        limit = r.get("Timelimit", "")
        out[job_id] = {
            "cpu": 100 * seconds(r["TotalCPU"]) / (elapsed * ncpus) if elapsed and ncpus else None,
            "memory": 100 * max(used) / request if used and request else None,
            "time": 100 * elapsed / seconds(limit) if limit and seconds(limit) else None,
        }
    return out


def efficiency_of(jobs: pl.DataFrame) -> dict[str, dict[str, float | None]]:
    return {
        j.job_id: {
            "cpu": j.cpu_efficiency_pct,
            "memory": j.memory_efficiency_pct,
            "time": j.time_efficiency_pct,
        }
        for j in jobs_efficiency(jobs.lazy())
    }


def assert_agrees(got: dict, want: dict) -> None:
    assert got.keys() == want.keys()
    for job_id, figures in want.items():
        for name, tolerance in (("cpu", 0.1), ("memory", 1.0), ("time", 0.1)):
            if figures[name] is None:
                assert got[job_id][name] is None, (job_id, name)
            else:
                assert got[job_id][name] == pytest.approx(figures[name], abs=tolerance), (
                    job_id,
                    name,
                )


# --- tests -----------------------------------------------------------------------------------
def test_headerless_37_column_export_imports_completely_with_its_format():
    result = parse_sacct_file(REAL / "hb_jobinfo_sacct.txt", columns=HB_FORMAT)
    assert result.malformed == 0 and result.bad_values == {}
    assert result.jobs.height == 47
    assert "trailing delimiter" in result.layout and "'☃'" in result.layout
    assert {"CPUTime", "MaxVMSize", "MaxDiskWriteTask"} <= set(result.unknown_columns)
    assert "NCPUs" not in result.unknown_columns  # sacct's NCPUS, whatever its case


def test_efficiency_agrees_with_the_field_rules_job_by_job():
    rows = hb_rows()
    got = efficiency_of(parse_sacct_file(REAL / "hb_jobinfo_sacct.txt", columns=HB_FORMAT).jobs)
    assert_agrees(got, field_rules(rows))
    # the 128-task MPI job: jobinfo's "Maximum memory used: 8.16G" of 32G, not one task's 70 M
    assert got["7951797"]["memory"] == pytest.approx(25.5, abs=0.05)
    # fractions of a second count: 7.597 s of CPU over 11 s x 2 CPUs
    assert got["6742864"]["cpu"] == pytest.approx(100 * 7.597 / 22, abs=0.01)


@pytest.mark.parametrize("seed", range(6))
def test_every_layout_sacct_writes_reads_the_same(tmp_path: Path, seed: int):
    """Header or not, -p or -P, any delimiter, any order and subset of columns, aliases."""
    rng = random.Random(seed)
    rows = hb_rows()
    needed = [
        "JobID",
        "State",
        "Elapsed",
        "TotalCPU",
        "NCPUs",
        "Timelimit",
        "AllocTRES",
        "TRESUsageInTot",
        "MaxRSS",
        "NTasks",
        "Submit",
        "Start",
        "End",
        "User",
    ]
    extra = rng.sample([c for c in HB_FORMAT if c not in needed], k=rng.randint(0, 12))
    columns = needed + extra
    rng.shuffle(columns)
    if seed % 2:  # sacct's own alias of NCPUS
        columns = ["AllocCPUS" if c == "NCPUs" else c for c in columns]
        rows = [{**r, "AllocCPUS": r["NCPUs"]} for r in rows]
    sep = ["|", "^|^", "☃", "\t", "#$#", "|"][seed]
    header, trailing = seed in (0, 2, 3, 5), seed in (1, 2, 5)
    path = write(tmp_path / "export.txt", rows, columns, sep, header=header, trailing=trailing)
    fmt = None if header else columns
    told = sep if sep == "#$#" and not header else None  # an unusual one is named (--delimiter)
    result = parse_sacct_file(path, delimiter=told, columns=fmt)
    assert result.malformed == 0 and result.jobs.height == 47, result.layout
    assert ("header" in result.layout) and ((", header" in result.layout) == header)
    assert_agrees(efficiency_of(result.jobs), field_rules(rows))


def test_old_slurm_exports_reqmem_per_cpu_and_per_node(tmp_path: Path):
    """reportseff's fixtures (Slurm before 21.08): their published figures, job by job."""
    plain = parse_sacct_file(
        REAL / "reportseff_notime.txt", columns=parse_format(REPORTSEFF + ",TotalCPU")
    )
    timed = parse_sacct_file(
        REAL / "reportseff_time.txt", columns=parse_format(REPORTSEFF + ",Timelimit,TotalCPU")
    )
    assert plain.malformed == timed.malformed == 0
    got = {j.job_id: j for j in jobs_efficiency(pl.concat([plain.jobs, timed.jobs]).lazy())}
    # reportseff's tests: 24418435 COMPLETED 01:27:42 48.7% 99.8% 47.6%
    assert got["24418435"].time_efficiency_pct == pytest.approx(48.7, abs=0.05)
    assert got["24418435"].cpu_efficiency_pct == pytest.approx(99.8, abs=0.05)
    assert got["24418435"].memory_efficiency_pct == pytest.approx(47.6, abs=0.05)
    # 25569410 COMPLETED 21:14:48 91.7% 1.5% (4000Mc: per CPU, repeated on its steps)
    assert got["25569410"].cpu_efficiency_pct == pytest.approx(91.7, abs=0.05)
    assert got["25569410"].memory_efficiency_pct == pytest.approx(1.5, abs=0.05)
    assert got["24220929_421"].job_id_raw == "24221219"
    assert got["24220929_421"].mem_request_bytes == 16000 * 2**20  # 16000Mn x 1 node


def test_array_and_heterogeneous_ids_and_states():
    text = "\n".join(
        [
            "JobID|JobIDRaw|State|Elapsed|NCPUS|Timelimit|ReqMem",
            "7_[1-5%2]|7|PENDING|00:00:00|1|01:00:00|1G",
            "7_3|10|COMPLETED|00:10:00|1|01:00:00|1G",
            "7_3.batch|10.batch|COMPLETED|00:10:00|1||",
            "9+0|9|CANCELLED by 1001|00:00:05|2|Partition_Limit|4000M",
            "9+1|11|COMPLETED|00:00:05|4|UNLIMITED|4000M",
            "9+1.0|11.0|COMPLETED|00:00:05|4||",
        ]
    )
    jobs = parse_sacct_text(text).jobs
    by_id = {r["job_id"]: r for r in jobs.to_dicts()}
    assert by_id["7_[1-5%2]"]["array_job_id"] == 7 and not by_id["7_[1-5%2]"]["is_step"]
    assert by_id["7_3.batch"]["is_step"] and by_id["7_3"]["array_job_id"] == 7
    assert by_id["9+1"]["het_job_id"] == 9 and by_id["9+1.0"]["is_step"]
    assert by_id["9+0"]["state"] == "CANCELLED" and by_id["9+0"]["cancelled_by"] == 1001
    assert by_id["9+0"]["timelimit_unlimited"] and by_id["9+1"]["timelimit_s"] is None
    assert by_id["9+0"]["req_mem_bytes"] == 4000 * 2**20


def test_headerless_without_format_is_one_clear_error_and_the_cache_is_untouched(
    tmp_path: Path,
):
    cache = SacctCache(tmp_path / "cache")
    with pytest.raises(ExportLayoutError, match="name them with --format"):
        ingest_file(cache, REAL / "hb_jobinfo_sacct.txt")
    junk = tmp_path / "junk.txt"
    junk.write_text("JobID|State\n|COMPLETED\n|FAILED\n")
    with pytest.raises(NothingImportable, match="none of its 2 lines"):
        ingest_file(cache, junk)
    assert not cache.root.exists() or not any(cache.root.iterdir())


def test_fixed_width_output_is_refused_not_misread(tmp_path: Path):
    path = tmp_path / "fixed.txt"
    path.write_text(
        "JobID           State    Elapsed\n------------ ---------- ----------\n"
        "123          CANCELLED+   00:01:00\n"
    )
    with pytest.raises(ExportLayoutError, match="fixed-width"):
        parse_sacct_file(path)


def test_format_names_are_checked():
    assert parse_format("JobID%20,state,NCPUS") == ("JobID", "state", "NCPUS")
    with pytest.raises(InputError, match="not sacct fields: Bogus"):
        parse_format("JobID,Bogus")


def test_malformed_lines_are_counted_with_their_file_line_numbers(tmp_path: Path):
    rows = hb_rows()
    path = write(
        tmp_path / "x.txt",
        rows[:5],
        ["JobID", "State", "JobName"],
        "|",
        header=True,
        trailing=False,
    )
    lines = path.read_text().splitlines()
    lines.insert(3, "")  # a blank line keeps the numbering of the file
    lines[4] = lines[4] + "|oops"
    path.write_text("\n".join(lines) + "\n")
    result = parse_sacct_file(path)
    assert result.malformed == 1 and result.malformed_lines == (5,)
    assert result.jobs.height == 4


def test_raw_number_columns_stand_in_for_elapsed_and_timelimit():
    """An export with ElapsedRaw (seconds) and TimelimitRaw (minutes) instead of the clocks."""
    text = (
        "JobID|ElapsedRaw|TimelimitRaw|State|AllocCPUS\n"
        "1|90061|1440|COMPLETED|2\n2|5|UNLIMITED|FAILED|1\n"
    )
    result = parse_sacct_text(text)
    assert result.unknown_columns == () and result.bad_values == {}
    rows = {r["job_id"]: r for r in result.jobs.to_dicts()}
    assert rows["1"]["elapsed_s"] == 90061 and rows["1"]["timelimit_s"] == 1440 * 60
    assert rows["1"]["ncpus"] == 2
    assert rows["2"]["timelimit_s"] is None and rows["2"]["timelimit_unlimited"]
