"""The sacct cache under the faults of issue #45: parallel imports, a far-future row, a damaged
month file, a process killed mid-import. Afterwards nothing is lost, doubled or half-applied,
and every command answers (or names the damage in one line)."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
from datetime import datetime
from pathlib import Path

import polars as pl
import pytest

from wass_chat.cli import main
from wass_chat.sacct.cache import CacheDamaged, SacctCache
from wass_chat.sacct.ingest import ingest_file
from wass_chat.sacct.render import write_sacct_file
from wass_chat.sacct.synth import synthesize

ROOT = Path(__file__).resolve().parents[2]
PARALLEL = 8


def _exports(folder: Path, files: int, jobs_each: int) -> tuple[list[Path], int]:
    """``files`` sacct exports of distinct jobs, all submitted in the same two months (so every
    import merges into the same month files), and the number of allocation rows."""
    jobs = synthesize(files * jobs_each, seed=5, start=datetime(2024, 3, 20), days=20)
    allocations = jobs.filter(~pl.col("is_step"))
    paths = []
    for k in range(files):
        part = allocations.slice(k * jobs_each, jobs_each)
        path = folder / f"part-{k}.txt"
        write_sacct_file(part, path)
        paths.append(path)
    return paths, allocations.height


def _import(args: tuple[str, str]) -> int:
    root, path = args
    return ingest_file(SacctCache(Path(root)), Path(path)).rows_written


def test_parallel_imports_all_land(tmp_path: Path) -> None:
    """8 parallel imports kept 31,982 of 40,000 jobs (each read the month, merged, wrote it
    over the others'): with the lock every row and every import record lands."""
    paths, total = _exports(tmp_path, PARALLEL, 400)
    root = tmp_path / "cache"
    with multiprocessing.get_context("spawn").Pool(PARALLEL) as pool:
        written = pool.map(_import, [(str(root), str(p)) for p in paths])
    cache = SacctCache(root)
    stored = cache.scan().filter(~pl.col("is_step")).collect()
    assert sum(written) == total == stored.height == stored["job_id"].n_unique()
    assert sorted(r.source for r in cache.imports()) == sorted(f"file:{p.name}" for p in paths)
    assert not list(root.rglob("*.tmp"))


def test_a_far_future_row_is_reported_and_skipped_and_every_summary_still_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    paths, _ = _exports(tmp_path, 1, 50)
    lines = paths[0].read_text().splitlines()
    fields = lines[0].split("|")
    submit = next(i for i, v in enumerate(fields) if v.startswith("2024-"))
    fields[submit] = "9999-12-31T23:59:59"
    lines.append("|".join(["99999", *fields[1:]]))
    paths[0].write_text("\n".join(lines) + "\n")
    monkeypatch.setenv("WASS_HOME", str(tmp_path / "home"))
    from wass_chat.config import settings

    settings.cache_clear()
    assert main(["sacct", "import", "--from-file", str(paths[0])]) == 0
    out = capsys.readouterr().out
    assert "skipped 1 rows with a time out of range" in out and "9999-12-31" in out
    (record,) = SacctCache(tmp_path / "home" / "sacct").imports()
    assert record.out_of_range == 1 and record.rows_written == 50
    assert main(["sacct", "summary", "--json"]) == 0, capsys.readouterr().err
    assert main(["report", "-o", str(tmp_path / "r.html")]) == 0, capsys.readouterr().err
    settings.cache_clear()


def test_a_damaged_month_is_named_and_rebuilt_by_a_reimport(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    paths, total = _exports(tmp_path, 1, 300)
    cache = SacctCache(tmp_path / "home" / "sacct")
    ingest_file(cache, paths[0])
    months = cache.months()
    damaged = cache.root / f"month={months[0]}" / "jobs.parquet"
    damaged.write_bytes(damaged.read_bytes()[:200])  # truncated, as a full disk leaves it
    with pytest.raises(CacheDamaged) as info:
        cache.scan()
    assert f"month {months[0]}" in info.value.one_line() and "re-import" in info.value.one_line()
    monkeypatch.setenv("WASS_HOME", str(tmp_path / "home"))
    from wass_chat.config import settings

    settings.cache_clear()
    assert main(["sacct", "summary"]) == 2
    err = capsys.readouterr().err
    assert "damaged" in err and len(err.strip().splitlines()) == 1
    settings.cache_clear()
    ingest_file(cache, paths[0])  # the re-import moves the damaged file aside and rebuilds
    stored = cache.scan().filter(~pl.col("is_step")).collect()
    assert stored.height == total
    assert damaged.with_name("jobs.parquet.damaged").exists()


_KILLED_IMPORT = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    import wass_chat.sacct.cache as cache_module
    from wass_chat.sacct.cache import SacctCache
    from wass_chat.sacct.ingest import ingest_file

    when = sys.argv[3]
    real_replace = os.replace
    def dying_replace(src, dst):
        # "staging": killed while the month files are written, before the manifest;
        # "renaming": killed after the first file of the import was renamed into place.
        if when == "staging" and str(dst).endswith(".pending-import.json"):
            os.kill(os.getpid(), signal.SIGKILL)
        real_replace(src, dst)
        if when == "renaming" and str(dst).endswith("jobs.parquet"):
            os.kill(os.getpid(), signal.SIGKILL)
    cache_module.os.replace = dying_replace
    ingest_file(SacctCache(Path(sys.argv[1])), Path(sys.argv[2]))
    """
)


@pytest.mark.parametrize("when", ["staging", "renaming"])
def test_kill_9_mid_import_leaves_the_import_whole_or_absent(tmp_path: Path, when: str) -> None:
    paths, total = _exports(tmp_path, 2, 200)
    root = tmp_path / "cache"
    first = ingest_file(SacctCache(root), paths[0]).rows_written
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    killed = subprocess.run(
        [sys.executable, "-c", _KILLED_IMPORT, str(root), str(paths[1]), when],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    cache = SacctCache(root)  # the next command to open the cache
    stored = cache.scan().filter(~pl.col("is_step")).collect()
    sources = [r.source for r in cache.imports()]
    if when == "staging":  # nothing of the second import, and no record of it
        assert stored.height == first and sources == [f"file:{paths[0].name}"]
    else:  # rolled forward: all of it, with its record
        assert stored.height == total and sources == [f"file:{p.name}" for p in paths]
    assert stored["job_id"].n_unique() == stored.height
    assert not list(root.rglob("*.tmp")) and not (root / ".pending-import.json").exists()
