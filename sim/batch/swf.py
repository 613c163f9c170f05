"""Standard Workload Format traces (the Parallel Workloads Archive's ``.swf``, gzip too).

SWF 2.2 (Feitelson et al., www.cs.huji.ac.il/labs/parallel/workload/swf.html): one job per
line, 18 whitespace-separated numeric fields, ``-1`` for unknown; header comments start with
``;`` and carry ``Key: value`` pairs (``MaxProcs``, ``MaxNodes``, ``UnixStartTime``,
``MaxPartitions``, ``Queue``/``Partition`` lines...). The fields, 1-based:

1 job number, 2 submit time (s from the log's start), 3 wait time (s), 4 run time (s),
5 allocated processors, 6 average CPU time used, 7 used memory (KB per processor),
8 requested processors, 9 requested time (s: the limit), 10 requested memory (KB per
processor), 11 status (1 completed, 0 failed, 5 cancelled...), 12 user id, 13 group id,
14 executable number, 15 queue number, 16 partition number, 17 preceding job number,
18 think time from the preceding job (s).

The machine is modelled as one pool of ``MaxProcs`` processors (one node of that many CPUs,
the usual model for these logs: their jobs ask for processors, not nodes, and the logs do
not say how they were laid out). A job asks for its allocated processors (else requested),
runs its recorded run time, is killed at its requested time (unlimited when unknown), and
waits for its preceding job (field 17) when the log gives one; think time is not modelled.
Jobs with no run time or no processors (cancelled before they ran) are left out and counted.
The header's numbered ``Partition:`` and ``Queue:`` lines are kept as names by number (the
pool model does not split the machine by them).
"""

from __future__ import annotations

import gzip
import io
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from sim.batch.model import UNLIMITED, BatchCluster, BatchNode, Partition, Workload, WorkloadError
from sim.errors import raise_if

SWF_FIELDS = 18


@dataclass(frozen=True)
class SwfTrace:
    """A trace read from SWF: its workload, the pool it ran on and what was left out."""

    workload: Workload
    cluster: BatchCluster
    header: dict[str, str]
    skipped_no_run: int
    source: str
    partitions: dict[int, str] = field(default_factory=dict)
    """The header's ``; Partition: N name`` lines (field 16 holds the number)."""
    queues: dict[int, str] = field(default_factory=dict)
    """The header's ``; Queue: N name`` lines (field 15 holds the number)."""


def read_swf(path: Path, max_jobs: int | None = None) -> SwfTrace:
    """Read an ``.swf`` or ``.swf.gz`` file; every malformed line is reported at once."""
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise WorkloadError(str(path), [f"cannot read: {exc.strerror or exc}"]) from exc
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:  # a damaged or truncated .gz
            raise WorkloadError(str(path), [f"cannot decompress: {exc}"]) from exc
    return parse_swf(io.StringIO(raw.decode("utf-8", errors="replace")).read(), str(path), max_jobs)


def parse_swf(text: str, source: str = "swf", max_jobs: int | None = None) -> SwfTrace:
    """Parse SWF text (see the module docstring)."""
    header: dict[str, str] = {}
    numbered: dict[str, dict[int, str]] = {"Partition": {}, "Queue": {}}
    rows: list[list[float]] = []
    problems: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith(";"):
            key, sep, value = stripped.lstrip(";").partition(":")
            key, value = key.strip(), value.strip()
            index, _, name = value.partition(" ")
            if sep and key in numbered and index.isdigit():
                numbered[key][int(index)] = name.strip()
            if sep and key and key not in header:
                header[key] = value
            continue
        parts = stripped.split()
        if len(parts) != SWF_FIELDS:
            problems.append(f"line {number}: {len(parts)} fields, expected {SWF_FIELDS}")
            continue
        try:
            rows.append([float(x) for x in parts])
        except ValueError:
            problems.append(f"line {number}: a field is not a number")
        if max_jobs is not None and len(rows) >= max_jobs:
            break
    raise_if(problems, WorkloadError, source)
    table = np.array(rows, np.float64).reshape(-1, SWF_FIELDS)
    trace = _trace(table, header, source)
    return replace(trace, partitions=numbered["Partition"], queues=numbered["Queue"])


def _trace(table: np.ndarray, header: dict[str, str], source: str) -> SwfTrace:
    procs = np.where(table[:, 4] > 0, table[:, 4], table[:, 7])
    usable = (table[:, 3] >= 0) & (procs > 0)
    skipped = int((~usable).sum())
    table, procs = table[usable], procs[usable].astype(np.int64)
    max_procs = header_int(header, "MaxProcs") or header_int(header, "MaxNodes")
    if not max_procs:
        max_procs = int(procs.max()) if len(procs) else 1
    problems = (
        [f"{int((procs > max_procs).sum())} jobs ask for more than MaxProcs {max_procs}"]
        if (procs > max_procs).any()
        else []
    )
    raise_if(problems, WorkloadError, source)
    submit = np.round(table[:, 1]).astype(np.int64)
    wait = table[:, 2]
    limit = np.where(table[:, 8] > 0, np.round(table[:, 8]), UNLIMITED).astype(np.int64)
    number = table[:, 0].astype(np.int64)
    row_of = {int(x): i for i, x in enumerate(number)}
    parents = [
        [row_of[int(p)]] if p > 0 and int(p) in row_of and row_of[int(p)] < i else []
        for i, p in enumerate(table[:, 16])
    ]
    ptr = np.zeros(len(parents) + 1, np.int64)
    ptr[1:] = np.cumsum([len(p) for p in parents])
    users_raw = table[:, 11].astype(np.int64)
    users, user_idx = np.unique(users_raw, return_inverse=True)
    n = len(table)
    workload = Workload(
        job_ids=tuple(str(x) for x in number),
        submit_s=submit,
        earliest_s=submit.copy(),
        runtime_s=np.round(table[:, 3]).astype(np.int64),
        limit_s=limit,
        estimate_s=limit.copy(),
        nnodes=np.ones(n, np.int64),
        cpus_per_node=procs,
        mem_per_node=np.zeros(n, np.int64),
        gpus_per_node=np.zeros(n, np.int64),
        partition=np.zeros(n, np.int64),
        user=user_idx.astype(np.int64),
        qos=np.zeros(n, np.int64),
        recorded_start_s=np.where(wait >= 0, submit + np.round(wait).astype(np.int64), -1),
        partitions=("pool",),
        users=tuple(f"user{u}" for u in users),
        dep_ptr=ptr if any(parents) else np.zeros(1, np.int64),
        dep_parent=np.array([p for ps in parents for p in ps], np.int64),
    )
    cluster = BatchCluster((BatchNode("pool", max_procs, 0),), (Partition("pool", ("pool",)),))
    return SwfTrace(workload, cluster, header, skipped, source)


def header_int(header: dict[str, str], key: str) -> int:
    """The header value ``key`` as a whole number (its first word), 0 when absent or not one."""
    value = header.get(key, "").split()
    try:
        return int(value[0]) if value else 0
    except ValueError:
        return 0
