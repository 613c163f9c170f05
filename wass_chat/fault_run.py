"""The fault run of issue #45: inject each fault N times and check that nothing was lost.

``wass-chat fault-run --faults 60`` cycles through the faults the issue found breaking things,
each injected into real processes (the ``wass-chat`` CLI run as this interpreter's module, the
live Slurm cluster ``SLURM_CONF`` names, the real sacct cache), each in a fresh data home:

* ``kill-9-submit``: the CLI killed with SIGKILL right after an sbatch returned a job id;
* ``full-disk-submit``: the data home (a 2 MB tmpfs) filled up in the middle of a submission;
* ``frozen-slurmctld``: slurmctld stopped with SIGSTOP during an sbatch, resumed (SIGCONT) once
  the submission gave up;
* ``submit-limit``: ``sacctmgr ... MaxSubmitJobs`` hit in the middle of a submission;
* ``parallel-imports``: 8 ``sacct import --from-file`` at once into one cache;
* ``far-future-row``: a ``Submit=9999-12-31T23:59:59`` row in an import;
* ``truncated-partition``: a month file of the cache cut short;
* ``kill-9-import``: an import killed with SIGKILL at a random instant.

The fault lands on a random sbatch (2nd to 11th of 12) or instant. After a submission fault
the run is resumed where it stopped (``wass-chat resume``) and checked: every command answers
(``runs``, ``status``, ``resume``, ``cancel``), nothing is doubled (one job per task in Slurm,
by job name), nothing lost (every task has its job), nothing orphaned (``status`` lists exactly
Slurm's jobs of the run; ``cancel`` reports that count and leaves none pending or running).
After a cache fault: every row of every import that returned lands once, an import killed
is whole or absent, and ``sacct summary`` answers (a damaged month: one line, exit 2, then
rebuilt by re-importing it). It is a benchmark, not a test: its figure is "F faults, S
survived" with what each check found (docs/slurm.md, Submission faults).
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

TASKS = 12
"""Jobs of each submission (3 layers of 4); each sleeps long enough to be cancelled alive."""
ALIVE = ("PENDING", "RUNNING", "CONFIGURING", "SUSPENDED", "REQUEUED")
SUBMIT_KINDS = ("kill-9-submit", "full-disk-submit", "frozen-slurmctld", "submit-limit")
CACHE_KINDS = ("parallel-imports", "far-future-row", "truncated-partition", "kill-9-import")
KINDS = SUBMIT_KINDS + CACHE_KINDS
PARALLEL_IMPORTS = 8


@dataclass
class FaultResult:
    """One injected fault and what each check after it found."""

    number: int
    kind: str
    checks: dict[str, bool] = field(default_factory=dict)
    detail: str = ""

    @property
    def survived(self) -> bool:
        return bool(self.checks) and all(self.checks.values())

    def check(self, name: str, ok: bool, why: str = "") -> bool:
        self.checks[name] = self.checks.get(name, True) and bool(ok)
        if not ok and why and not self.detail:
            self.detail = f"{name}: {why}"
        return bool(ok)

    def line(self) -> str:
        failed = [n for n, ok in self.checks.items() if not ok]
        verdict = "survived" if self.survived else f"FAILED ({', '.join(failed)})"
        said = f" - {self.detail}" if self.detail else ""
        return f"fault {self.number:>3} {self.kind:<20} {verdict}{said}"


def cli(
    home: Path, *argv: str, path: str | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """``wass-chat ARGV`` in its own process (this interpreter's module), data home ``home``."""
    env = {**os.environ, "WASS_HOME": str(home)}
    if path is not None:
        env["PATH"] = path
    return subprocess.run(
        [sys.executable, "-m", "wass_chat.cli", *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def fault_wrapper(folder: Path, at: int, fault: str) -> Path:
    """A folder whose ``sbatch`` runs the real one (``$real``) and, at call ``at``, the shell
    text ``fault`` instead (what the fault run and tests/slurm/test_submission_faults.py put
    first on PATH)."""
    real = shutil.which("sbatch")
    if real is None:
        raise FileNotFoundError("sbatch")
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "sbatch"
    script.write_text(f"""#!/bin/sh
real={real}
count={folder}/calls
n=$(( $(cat "$count" 2>/dev/null || echo 0) + 1 )); echo "$n" > "$count"
if [ "$n" -ne {at} ]; then exec "$real" "$@"; fi
{fault}
""")
    script.chmod(0o755)
    return folder


def kill_parent_after_sbatch() -> str:
    """The fault text that kills the CLI (SIGKILL) right after sbatch returned a job id."""
    return """out=$("$real" "$@"); rc=$?
kill -9 $PPID
printf '%s\\n' "$out"; exit $rc"""


def slurmctld_pid() -> int:
    """The running slurmctld's pid, from the pid file ``scontrol show config`` names."""
    from wass_chat.slurm.commands import SlurmCommands

    config = SlurmCommands().run(["scontrol", "show", "config"])
    found = re.search(r"^SlurmctldPidFile\s*=\s*(\S+)", config, re.M)
    if found is None:
        raise RuntimeError("scontrol show config names no SlurmctldPidFile")
    return int(Path(found.group(1)).read_text().split()[0])


def fault_workflow(path: Path, seconds: float = 600.0) -> Path:
    """A 12-task workflow (3 layers of 4, one core each, each task sleeping ``seconds``)."""
    from sim.model import File, Task, Workflow
    from sim.wfformat import write_workflow

    tasks, files, above = [], [], [f"L0_{k}" for k in range(4)]
    for level in range(3):
        for k in range(4):
            tid = f"L{level}_{k}"
            inputs = (f"{above[k]}.out", f"{above[(k + 1) % 4]}.out") if level else ()
            files.append(File(f"{tid}.out", 1000))
            tasks.append(
                Task(tid, work=seconds * 1e9, cores=1, inputs=inputs, outputs=(f"{tid}.out",))
            )
        above = [f"L{level}_{k}" for k in range(4)]
    write_workflow(Workflow("fault-run", tuple(tasks), tuple(files)), path)
    return path


# --- submission faults -----------------------------------------------------------------------
class SubmitFaults:
    """The submission faults on the live cluster, each checked the same way afterwards."""

    def __init__(self, folder: Path, rng: random.Random) -> None:
        self.folder = folder
        self.rng = rng
        self.workflow = fault_workflow(folder / "fault-run.json")

    def run(self, result: FaultResult) -> None:
        home = self.folder / f"home-{result.number}"
        at = self.rng.randint(2, TASKS - 1)
        bin_dir = self.folder / f"bin-{result.number}"
        path = os.environ.get("PATH", "")
        result.detail = ""
        try:
            if result.kind == "kill-9-submit":
                wrapper = fault_wrapper(bin_dir, at, kill_parent_after_sbatch())
                done = self._submit(home, f"{wrapper}:{path}")
                result.check("fault landed", done.returncode == -signal.SIGKILL, done.stderr)
            elif result.kind == "frozen-slurmctld":
                pid = slurmctld_pid()
                wrapper = fault_wrapper(bin_dir, at, f'kill -STOP {pid}\nexec "$real" "$@"')
                try:
                    done = self._submit(home, f"{wrapper}:{path}")
                finally:
                    os.kill(pid, signal.SIGCONT)
                wait_for_unanswered(home)
                result.check(
                    "fault landed",
                    done.returncode == 2 and "partly submitted" in done.stderr,
                    done.stderr,
                )
            elif result.kind == "submit-limit":
                with submit_limit(at - 1):
                    done = self._submit(home, None)
                result.check(
                    "fault landed",
                    done.returncode == 2 and "partly submitted" in done.stderr,
                    done.stderr,
                )
            else:
                with tmpfs(home):
                    try:
                        self._full_disk(result, home, bin_dir, at, path)
                    finally:
                        cancel_leftovers(home)  # before the tmpfs (and its records) goes
                return
            self.check(result, home)
        finally:
            cancel_leftovers(home)

    def _full_disk(
        self, result: FaultResult, home: Path, bin_dir: Path, at: int, path: str
    ) -> None:
        filler = home / "filler"
        fill = f'dd if=/dev/zero of={filler} bs=64k 2>/dev/null\nexec "$real" "$@"'
        wrapper = fault_wrapper(bin_dir, at, fill)
        done = self._submit(home, f"{wrapper}:{path}")
        result.check(
            "fault landed", done.returncode == 2 and "No space left" in done.stderr, done.stderr
        )
        self._answers(result, home, full_disk=True)
        filler.unlink()
        self.check(result, home)

    def _submit(self, home: Path, path: str | None) -> subprocess.CompletedProcess[str]:
        return cli(home, "submit", str(self.workflow), "--yes", path=path)

    def _answers(self, result: FaultResult, home: Path, full_disk: bool = False) -> None:
        done = cli(home, "runs", "--no-learn", "--json")
        result.check("every command answers", done.returncode == 0, f"runs: {done.stderr}")
        if full_disk and done.returncode == 0:  # with the disk still full: every job logged
            rows = json.loads(done.stdout)
            result.check("nothing lost", [r["jobs"] for r in rows] == [TASKS], str(rows))

    def check(self, result: FaultResult, home: Path) -> None:
        """Resume the run, then: one job per task in Slurm, every command answering with them,
        ``cancel`` cancelling that many and leaving none alive."""
        from wass_chat.runlog import RunLog
        from wass_chat.slurm.commands import SlurmCommands
        from wass_chat.slurm.recovery import slurm_jobs_of_run

        runs = sorted((home / "runs").glob("*.json"))
        if not result.check("every command answers", len(runs) == 1, f"{len(runs)} run records"):
            return
        run_id = runs[0].stem
        done = cli(home, "resume", run_id, "--yes", "--json")
        resumed = done.returncode == 0 or "only a partly submitted" in done.stderr
        result.check("every command answers", resumed, f"resume: {done.stderr.strip()}")
        record = RunLog(home / "runs").get(run_id)
        in_slurm = {
            t: [j.job_id for j in jobs]
            for t, jobs in slurm_jobs_of_run(record, SlurmCommands()).items()
        }
        result.check(
            "nothing doubled", all(len(ids) == 1 for ids in in_slurm.values()), str(in_slurm)
        )
        result.check("nothing lost", len(in_slurm) == TASKS, f"{len(in_slurm)} of {TASKS} tasks")
        done = cli(home, "runs", "--no-learn", "--json")
        if result.check("every command answers", done.returncode == 0, f"runs: {done.stderr}"):
            rows = [r for r in json.loads(done.stdout) if r["run_id"] == run_id]
            result.check("nothing lost", [r["jobs"] for r in rows] == [TASKS], str(rows))
        done = cli(home, "status", run_id, "--no-learn", "--json")
        if result.check("every command answers", done.returncode == 0, f"status: {done.stderr}"):
            listed = {
                t["task"]: t["job_id"] for t in json.loads(done.stdout)["tasks"] if t["job_id"]
            }
            result.check(
                "nothing orphaned",
                listed == {t: ids[0] for t, ids in in_slurm.items()},
                f"status lists {len(listed)}, Slurm has {len(in_slurm)}",
            )
        done = cli(home, "cancel", run_id, "--yes")
        result.check("every command answers", done.returncode == 0, f"cancel: {done.stderr}")
        count = sum(len(ids) for ids in in_slurm.values())
        result.check(
            "nothing orphaned", f"cancelled {count} jobs" in done.stdout, done.stdout.strip()
        )
        left = wait_until_gone([j for ids in in_slurm.values() for j in ids])
        result.check("nothing orphaned", not left, f"still alive: {left}")


def wait_until_gone(job_ids: list[str], timeout: float = 60.0) -> list[str]:
    """Poll squeue until none of ``job_ids`` is pending or running; returns those still are."""
    from wass_chat.slurm.commands import SlurmCommands

    deadline = time.monotonic() + timeout
    while True:
        alive = [j for j, q in SlurmCommands().queue(job_ids).items() if q.state in ALIVE]
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.5)


def wait_for_unanswered(home: Path, timeout: float = 30.0) -> None:
    """After a frozen controller resumed: wait (at most ``timeout`` s) until Slurm has a job for
    each task of ``home``'s runs whose sbatch gave no answer. The controller serves the waiting
    sbatch a moment after it resumes, maybe after a command sent just then; until it has, the
    run is one Slurm may still add to and ``resume`` refuses it
    (:mod:`wass_chat.slurm.recovery`)."""
    from wass_chat.runlog import RunLog
    from wass_chat.slurm.commands import SlurmCommands
    from wass_chat.slurm.recovery import may_still_be_taken, slurm_jobs_of_run

    runlog = RunLog(home / "runs")
    deadline = time.monotonic() + timeout
    for record in runlog.scan()[0]:
        waiting = {d.task for d in record.decisions if may_still_be_taken(d)}
        while waiting - set(slurm_jobs_of_run(record, SlurmCommands())):
            if time.monotonic() > deadline:
                return
            time.sleep(0.5)


def cancel_leftovers(home: Path) -> None:
    """Whatever a failed check left in Slurm is cancelled, by the runs' job names."""
    from wass_chat.runlog import RunLog
    from wass_chat.slurm.submission import job_name

    if not (home / "runs").is_dir():
        return
    records, _ = RunLog(home / "runs").scan()
    names = sorted({job_name(r.run_id, d.task) for r in records for d in r.decisions})
    if names:
        subprocess.run(["scancel", f"--name={','.join(names)}"], check=False, capture_output=True)


@contextmanager
def submit_limit(more: int) -> Iterator[None]:
    """``MaxSubmitJobs`` for root: the jobs it has queued now plus ``more``; lifted after."""
    from wass_chat.slurm.commands import SlurmCommands

    queued = SlurmCommands().run(["squeue", "-h", "-u", "root", "-o", "%i"]).split()
    sacctmgr = ["sacctmgr", "-i", "modify", "user", "root", "set"]
    subprocess.run(
        [*sacctmgr, f"MaxSubmitJobs={len(queued) + more}"], check=True, capture_output=True
    )
    try:
        yield
    finally:
        subprocess.run([*sacctmgr, "MaxSubmitJobs=-1"], check=True, capture_output=True)


@contextmanager
def tmpfs(folder: Path, size: str = "2m") -> Iterator[None]:
    """``folder`` as a small tmpfs for the duration (root only)."""
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
        check=True,
        capture_output=True,
    )
    try:
        yield
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False, capture_output=True)


# --- sacct cache faults ----------------------------------------------------------------------
def sacct_exports(folder: Path, files: int, jobs_each: int, seed: int) -> tuple[list[Path], int]:
    """``files`` sacct exports of distinct jobs submitted in the same weeks (every import
    merges into the same month files), and their number of allocation rows."""
    import polars as pl

    from wass_chat.sacct.render import write_sacct_file
    from wass_chat.sacct.synth import synthesize

    jobs = synthesize(files * jobs_each, seed=seed, start=datetime(2024, 3, 20), days=20)
    allocations = jobs.filter(~pl.col("is_step"))
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for k in range(files):
        path = folder / f"part-{k}.txt"
        write_sacct_file(allocations.slice(k * jobs_each, jobs_each), path)
        paths.append(path)
    return paths, allocations.height


def stored_jobs(home: Path) -> tuple[int, int, list[str]]:
    """(allocation rows, distinct job ids, import sources) of the data home's cache."""
    import polars as pl

    from wass_chat.sacct.cache import SacctCache

    cache = SacctCache(home / "sacct")
    stored = cache.scan().filter(~pl.col("is_step")).select("job_id").collect()
    return stored.height, stored["job_id"].n_unique(), [r.source for r in cache.imports()]


class CacheFaults:
    """The sacct cache faults, each in its own data home."""

    def __init__(self, folder: Path, rng: random.Random) -> None:
        self.folder = folder
        self.rng = rng

    def run(self, result: FaultResult) -> None:
        home = self.folder / f"home-{result.number}"
        exports = self.folder / f"exports-{result.number}"
        seed = self.rng.randrange(1 << 30)
        getattr(self, result.kind.replace("-", "_"))(result, home, exports, seed)
        done = cli(home, "sacct", "summary", "--json")
        result.check("every command answers", done.returncode == 0, done.stderr.strip())

    def parallel_imports(self, result: FaultResult, home: Path, exports: Path, seed: int) -> None:
        paths, total = sacct_exports(exports, PARALLEL_IMPORTS, 400, seed)
        env = {**os.environ, "WASS_HOME": str(home)}
        running = [
            subprocess.Popen(
                [sys.executable, "-m", "wass_chat.cli", "sacct", "import", "--from-file", str(p)],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            for p in paths
        ]
        codes = [p.wait(timeout=600) for p in running]
        result.check("every command answers", codes == [0] * len(paths), str(codes))
        rows, unique, sources = stored_jobs(home)
        result.check("nothing lost", rows == total, f"{rows} of {total} rows kept")
        result.check("nothing doubled", unique == rows, f"{rows - unique} rows doubled")
        result.check(
            "nothing lost",
            sorted(sources) == sorted(f"file:{p.name}" for p in paths),
            f"{len(sources)} of {len(paths)} import records",
        )

    def far_future_row(self, result: FaultResult, home: Path, exports: Path, seed: int) -> None:
        (path,), total = sacct_exports(exports, 1, 50, seed)
        lines = path.read_text().splitlines()
        fields = lines[-1].split("|")
        submit = next(i for i, v in enumerate(fields) if re.match(r"20\d\d-", v))
        fields[submit] = "9999-12-31T23:59:59"
        lines.append("|".join(["99999999", *fields[1:]]))
        path.write_text("\n".join(lines) + "\n")
        done = cli(home, "sacct", "import", "--from-file", str(path))
        result.check("every command answers", done.returncode == 0, done.stderr.strip())
        result.check("reported", "9999-12-31" in done.stdout, done.stdout.strip())
        rows, unique, _ = stored_jobs(home)
        result.check("nothing lost", rows == total == unique, f"{rows} of {total} rows")
        done = cli(home, "report", "-o", str(home / "report.html"))
        result.check("every command answers", done.returncode == 0, done.stderr.strip())

    def truncated_partition(
        self, result: FaultResult, home: Path, exports: Path, seed: int
    ) -> None:
        (path,), total = sacct_exports(exports, 1, 300, seed)
        done = cli(home, "sacct", "import", "--from-file", str(path))
        result.check("every command answers", done.returncode == 0, done.stderr.strip())
        months = sorted((home / "sacct").glob("month=*/jobs.parquet"))
        damaged = self.rng.choice(months)
        damaged.write_bytes(damaged.read_bytes()[: self.rng.randint(8, 400)])
        done = cli(home, "sacct", "summary")
        said = done.stderr.strip()
        result.check(
            "damage named in one line",
            done.returncode == 2 and "damaged" in said and "\n" not in said,
            said,
        )
        done = cli(home, "sacct", "import", "--from-file", str(path))  # the repair
        result.check("every command answers", done.returncode == 0, done.stderr.strip())
        rows, unique, _ = stored_jobs(home)
        result.check("nothing lost", rows == total == unique, f"{rows} of {total} rows")

    def kill_9_import(self, result: FaultResult, home: Path, exports: Path, seed: int) -> None:
        paths, total = sacct_exports(exports, 2, 3000, seed)
        done = cli(home, "sacct", "import", "--from-file", str(paths[0]))
        result.check("every command answers", done.returncode == 0, done.stderr.strip())
        first, _, _ = stored_jobs(home)
        env = {**os.environ, "WASS_HOME": str(home)}
        started = time.monotonic()
        victim = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "wass_chat.cli",
                "sacct",
                "import",
                "--from-file",
                str(paths[1]),
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(self.rng.uniform(0.5, 4.0))
        victim.send_signal(signal.SIGKILL)
        victim.wait(timeout=60)
        result.detail = f"killed after {time.monotonic() - started:.1f} s"
        rows, unique, sources = stored_jobs(home)
        whole = rows == total and len(sources) == 2
        absent = rows == first and len(sources) == 1
        result.check("whole or absent", whole or absent, f"{rows} rows, {len(sources)} imports")
        result.check("nothing doubled", unique == rows, f"{rows - unique} rows doubled")
        leftovers = list((home / "sacct").rglob("*.tmp"))
        result.check("nothing half-written", not leftovers, str(leftovers[:3]))
        if result.survived:
            result.detail = ""


def fault_run(
    faults: int,
    kinds: tuple[str, ...] = KINDS,
    seed: int = 0,
    folder: Path | None = None,
    report: Callable[[FaultResult], None] | None = None,
) -> list[FaultResult]:
    """Inject ``faults`` faults, cycling through ``kinds``; each result is passed to
    ``report`` as soon as it is checked."""
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="wass-fault-run-", dir=folder) as scratch:
        root = Path(scratch)
        submit = SubmitFaults(root, rng) if set(kinds) & set(SUBMIT_KINDS) else None
        cache = CacheFaults(root, rng)
        results = []
        for number in range(1, faults + 1):
            result = FaultResult(number, kinds[(number - 1) % len(kinds)])
            try:
                (submit if result.kind in SUBMIT_KINDS else cache).run(result)  # type: ignore[union-attr]
            except Exception as exc:
                result.check("every command answers", False, f"{type(exc).__name__}: {exc}")
            results.append(result)
            if report is not None:
                report(result)
    return results


def summary(results: list[FaultResult]) -> dict[str, Any]:
    """``F faults, S survived`` and, per check, how many faults it held after."""
    checks: dict[str, list[int]] = {}
    for r in results:
        for name, ok in r.checks.items():
            held = checks.setdefault(name, [0, 0])
            held[0] += int(ok)
            held[1] += 1
    kinds: dict[str, list[int]] = {}
    for r in results:
        counts = kinds.setdefault(r.kind, [0, 0])
        counts[0] += int(r.survived)
        counts[1] += 1
    survived = sum(r.survived for r in results)
    return {
        "faults": len(results),
        "survived": survived,
        "line": f"{len(results)} faults, {survived} survived",
        "checks": {n: {"held": h, "of": t} for n, (h, t) in checks.items()},
        "kinds": {k: {"survived": s, "of": t} for k, (s, t) in kinds.items()},
        "failed": [r.line() for r in results if not r.survived],
    }
