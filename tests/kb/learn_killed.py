"""A real run's case, and a process that learns it and SIGKILLs itself at a chosen point.

``python -m tests.kb.learn_killed KB_DIR POINT`` learns :func:`example_run` into the knowledge
base at KB_DIR and kills itself (``kill -9``, no cleanup, no flush) at POINT:

* ``mid-transaction``: inside the sidecar transaction, after the case row, before its decisions;
* ``before-vectors``: after the sidecar committed, before Chroma has the case's vector;
* ``before-sync-mark``: after every vector was added, before the store is marked in sync;
* ``never``: learns to the end.

The hooks only choose the instant: the store, SQLite and Chroma are the real ones.
"""

from __future__ import annotations

import math
import os
import signal
import sys
import zlib
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from kb.decisions import DecisionRecord, decisions_from_case
from kb.real_runs import FinishedRun, TaskExecution, case_from_run
from kb.records import CaseRecord, RealExecution
from kb.store import KnowledgeBase
from sim.model import File, Node, Platform, Task, Workflow
from sim.occupancy import Hold, Occupancy

POINTS = ("mid-transaction", "before-vectors", "before-sync-mark", "never")
T0 = 1_790_000_000.0
"""Epoch seconds of the example run's first start (2026-09-21)."""


def example_workflow() -> Workflow:
    """prep -> (work_a, work_b) -> merge; stated runtimes 8, 4, 4, 2 s (overestimates)."""
    files = tuple(File(f"{t}.out", 1000) for t in ("prep", "work_a", "work_b"))
    tasks = (
        Task("prep", 8e9, category="prep", outputs=("prep.out",)),
        Task("work_a", 4e9, category="work", inputs=("prep.out",), outputs=("work_a.out",)),
        Task("work_b", 4e9, category="work", inputs=("prep.out",), outputs=("work_b.out",)),
        Task("merge", 2e9, category="merge", inputs=("work_a.out", "work_b.out")),
    )
    return Workflow("learn-example", tasks, files)


def example_platform() -> Platform:
    return Platform("slurm-debug", (Node("n1", cores=2), Node("n2", cores=2), Node("n3", 4)))


DEFAULT_RUN = "20260921-000000-abcd"


def example_run(run_id: str = DEFAULT_RUN, slower: float = 1.0, **changes: Any) -> FinishedRun:
    """A finished run of :func:`example_workflow`: real runtimes 2, 1, 1.5, 0.5 s (times
    ``slower``), 0.3 s of dispatch between dependent jobs, planned on the stated runtimes."""
    real = {"prep": 2.0, "work_a": 1.0, "work_b": 1.5, "merge": 0.5}
    nodes = {"prep": "n1", "work_a": "n1", "work_b": "n2", "merge": "n3"}
    start_prep = T0
    end_prep = start_prep + real["prep"] * slower
    ends = {"prep": end_prep}
    starts = {"prep": start_prep}
    for task in ("work_a", "work_b"):
        starts[task] = end_prep + 0.3
        ends[task] = starts[task] + real[task] * slower
    starts["merge"] = max(ends["work_a"], ends["work_b"]) + 0.3
    ends["merge"] = starts["merge"] + real["merge"] * slower
    first = 100 if run_id == DEFAULT_RUN else 1000 + zlib.crc32(run_id.encode()) % 90_000 * 4
    tasks = {  # job ids as Slurm's: each run's own
        t: TaskExecution(nodes[t], starts[t], ends[t], "COMPLETED", str(first + i))
        for i, t in enumerate(real)
    }
    known = {
        "run_id": run_id,
        "predicted": {
            "prep": (0.0, 8.0),
            "work_a": (8.0, 12.0),
            "work_b": (8.0, 12.0),
            "merge": (12.0, 14.0),
        },
        "predicted_makespan": 14.0,
        "submitted_at": "2026-09-21T00:00:00+00:00",
        "occupancy": Occupancy((Hold("n3", 2, 30.0, "77"),)),
        "estimates": "workflow",
        "timing": "job stamps",
    }
    return FinishedRun(
        example_workflow(),
        example_platform(),
        "heft",
        tasks,
        RealExecution(**{**known, **changes}),
    )


def example_case(run_id: str = DEFAULT_RUN, **changes: Any) -> CaseRecord:
    return case_from_run(example_run(run_id, **changes))


class RecordedAccounting:
    """sacct rows as real-run cases themselves record their jobs: the stand-in for Slurm's
    accounting where the tests of what a store does with learned runs have no cluster. The
    confirmation's own tests set a genuine run's rows against a forged case, or real sacct
    (tests/kb/test_kb_proxy.py, tests/slurm/test_kb_learn.py)."""

    def __init__(self, *cases: CaseRecord) -> None:
        self.rows: dict[str, dict[str, str]] = {}
        for case in cases:
            real = case.real
            assert real is not None
            t0 = datetime.fromisoformat(real.started_at).timestamp()
            for task, job in real.job_ids.items():
                _, start, end = case.timeline.get(task, (0.0, math.nan, math.nan))
                self.rows[job] = {
                    "JobID": job,
                    "JobName": f"wass-{real.run_id}-{task}",
                    "State": real.task_states.get(task, ""),
                    "NodeList": case.placements.get(task, "None assigned"),
                    "Start": _local(t0 + start * real.scale),
                    "End": _local(t0 + end * real.scale),
                }

    def accounting(
        self, job_ids: Sequence[str], fields: Sequence[str] = ()
    ) -> dict[str, dict[str, str]]:
        return {j: self.rows[j] for j in job_ids if j in self.rows}


def _local(epoch: float) -> str:
    """A sacct timestamp (local time, whole seconds), ``Unknown`` for none."""
    if math.isnan(epoch):
        return "Unknown"
    return datetime.fromtimestamp(epoch).isoformat(timespec="seconds")


def written_around_the_checks(kb: KnowledgeBase, case: CaseRecord) -> None:
    """Store ``case`` as a client writing straight to the store's tables would (what a store
    filled before the write-time checks, or around them, holds)."""
    if case.real is not None and not case.real.completed:
        kb.sidecar.put_failed(case)
        return
    kb.sidecar.put_case_with_decisions(case, ())
    kb._add_case_vectors([case], kb.embedder.embed_cases([(case.workflow, case.platform)]))
    kb.sidecar.mark_chroma_synced(kb.cases.name)


def learn(kb: KnowledgeBase, case: CaseRecord, decisions: Sequence[DecisionRecord] = ()) -> bool:
    """``kb.add_real_case`` with the case's own jobs added to Slurm's accounting (the rows of
    the runs learned before kept: sacct still has them when the store is read)."""
    known = kb.accounting.rows if isinstance(kb.accounting, RecordedAccounting) else {}
    kb.accounting = RecordedAccounting(case)
    kb.accounting.rows = {**known, **kb.accounting.rows}
    return kb.add_real_case(case, decisions)


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


class _DyingConnection:
    """The sidecar's SQLite connection, dying when the decisions are inserted."""

    def __init__(self, real: Any) -> None:
        self._real = real

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def __enter__(self) -> Any:
        return self._real.__enter__()

    def __exit__(self, *exc: object) -> Any:
        return self._real.__exit__(*exc)

    def executemany(self, sql: str, rows: Any) -> Any:
        if "decisions" in sql:
            _die()
        return self._real.executemany(sql, rows)


def main(directory: str, point: str) -> None:
    kb = KnowledgeBase(Path(directory))
    if point == "mid-transaction":
        kb.sidecar._db = _DyingConnection(kb.sidecar._db)  # type: ignore[union-attr]
    elif point == "before-vectors":
        kb.cases.add = lambda *a, **k: _die()  # type: ignore[method-assign]
    elif point == "before-sync-mark":
        kb.sidecar.mark_chroma_synced = lambda *a, **k: _die()  # type: ignore[method-assign]
    case = example_case()
    learn(kb, case, decisions_from_case(case, 4))
    kb.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
