"""Many workflows on one cluster: a stream of arrivals, and the one workflow the simulator runs.

A :class:`Stream` lists workflows with their arrival times: drawn as a Poisson process
(:func:`poisson_stream`, generated workflows of mixed shapes with GPU tasks) or replayed from a
trace file (:func:`read_trace`). :func:`merge_stream` turns it into one :class:`Workflow` whose
task and file ids carry their workflow's prefix (``w003/align``) and whose tasks carry their
workflow's arrival as ``release``: the simulator starts none of them earlier and reads a
workflow's inputs from the shared filesystem only from then on (:mod:`sim.engine`). Everything
downstream (schedulers, the validator, metrics) works on that merged workflow;
:func:`arrival_batches` gives back what arrived when, which is all an online scheduler may see.

GPU tasks (:func:`with_gpu_tasks`): a share of the tasks need a GPU and a share prefer one
(faster there, able to run on cores), drawn per task from the stream's seed.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from sim.errors import InputError, WorkflowError
from sim.model import File, Task, Workflow

SEPARATOR = "/"
"""Between a workflow's prefix and a task or file id in a merged stream (``w003/align``)."""

STREAM_SHAPES = ("chain", "fan-out", "fan-in", "fork-join", "layered")
"""Workflow shapes a generated stream mixes (:mod:`sim.shapes`)."""


class StreamError(InputError):
    """A stream that cannot be built: bad times, an unreadable trace, unknown workflows."""

    kind = "stream"


@dataclass(frozen=True)
class Arrival:
    """One workflow and the time (s) it reaches the cluster."""

    time: float
    workflow: Workflow


@dataclass(frozen=True)
class Stream:
    """Workflows arriving over time, in arrival order (ties keep the listed order)."""

    name: str
    arrivals: tuple[Arrival, ...]

    def __post_init__(self) -> None:
        problems = []
        if not self.arrivals:
            problems.append("no arrivals")
        for k, a in enumerate(self.arrivals):
            if not (math.isfinite(a.time) and a.time >= 0):
                problems.append(f"arrival {k} at time {a.time} (need a finite time >= 0)")
        times = [a.time for a in self.arrivals]
        if times != sorted(times):
            problems.append("arrival times must not decrease")
        if problems:
            raise StreamError(self.name or "stream", problems)

    def __len__(self) -> int:
        return len(self.arrivals)

    @property
    def prefixes(self) -> tuple[str, ...]:
        """The id prefix of each workflow in the merged stream (``w000``, ``w001``...)."""
        width = max(3, len(str(len(self.arrivals) - 1)))
        return tuple(f"w{k:0{width}d}" for k in range(len(self.arrivals)))


def merge_stream(stream: Stream) -> Workflow:
    """One workflow holding every arrival's tasks and files, ids prefixed, tasks released at
    their workflow's arrival."""
    tasks: list[Task] = []
    files: list[File] = []
    for prefix, arrival in zip(stream.prefixes, stream.arrivals, strict=True):
        wf = arrival.workflow

        def named(ids: tuple[str, ...], prefix: str = prefix) -> tuple[str, ...]:
            return tuple(f"{prefix}{SEPARATOR}{i}" for i in ids)

        files += [File(f"{prefix}{SEPARATOR}{f.id}", f.size) for f in wf.files]
        tasks += [
            replace(
                t,
                id=f"{prefix}{SEPARATOR}{t.id}",
                inputs=named(t.inputs),
                outputs=named(t.outputs),
                parents=named(t.parents),
                release=arrival.time + t.release,
            )
            for t in wf.tasks
        ]
    return Workflow(
        stream.name,
        tuple(tasks),
        tuple(files),
        f"{len(stream)} workflows arriving over {stream.arrivals[-1].time:g} s",
    )


def workflow_prefix(task_id: str) -> str:
    """The prefix of the stream workflow a merged task id belongs to ('' when not merged)."""
    head, sep, _ = task_id.partition(SEPARATOR)
    return head if sep else ""


def arrival_batches(workflow: Workflow) -> list[tuple[float, tuple[str, ...]]]:
    """(release time, task ids released then) in time order, each batch in topological order:
    what an online scheduler learns at each arrival. A workflow on its own is one batch at 0."""
    batches: dict[float, list[str]] = {}
    for task_id in workflow.topological_order:
        batches.setdefault(workflow.task_by_id[task_id].release, []).append(task_id)
    return [(time, tuple(batches[time])) for time in sorted(batches)]


def poisson_times(count: int, window: float, rng: np.random.Generator) -> tuple[float, ...]:
    """``count`` arrival times of a Poisson process of rate ``count / window`` from time 0 (the
    first workflow arrives at 0)."""
    if count < 1:
        raise StreamError("arrivals", [f"need at least one arrival, got {count}"])
    if not (math.isfinite(window) and window >= 0):
        raise StreamError("arrivals", [f"window must be a finite time >= 0, got {window}"])
    if count == 1 or window == 0:
        return (0.0,) * count
    gaps = rng.exponential(window / count, size=count - 1)
    return (0.0, *(float(t) for t in np.cumsum(gaps)))


def with_gpu_tasks(
    workflow: Workflow, rng: np.random.Generator, need: float, prefer: float
) -> Workflow:
    """``workflow`` with a share ``need`` of its tasks needing one GPU and a share ``prefer``
    preferring one, drawn per task."""
    if not (need >= 0 and prefer >= 0 and need + prefer <= 1):
        raise StreamError("gpu shares", [f"need {need} and prefer {prefer}: each >= 0, sum <= 1"])
    draws = rng.random(len(workflow.tasks))
    tasks = tuple(
        replace(t, gpus=max(t.gpus, 1))
        if u < need
        else replace(t, prefers_gpu=True)
        if u < need + prefer
        else t
        for t, u in zip(workflow.tasks, draws, strict=True)
    )
    return replace(workflow, tasks=tasks)


@dataclass(frozen=True)
class StreamSpec:
    """What :func:`poisson_stream` draws."""

    count: int = 10
    """Workflows in the stream."""
    window: float = 300.0
    """Seconds over which they arrive (a Poisson process of rate ``count / window``): a fixed
    window makes the load grow with ``count``."""
    tasks: tuple[int, int] = (8, 30)
    """Range of each workflow's task count (inclusive)."""
    shapes: tuple[str, ...] = STREAM_SHAPES
    ccr: float = 0.1
    """Communication-to-computation ratio of the generated workflows."""
    gpu_need: float = 0.15
    """Share of tasks that need one GPU."""
    gpu_prefer: float = 0.25
    """Share of tasks that prefer one (run on cores elsewhere)."""


def poisson_stream(spec: StreamSpec, seed: int) -> Stream:
    """A stream of generated workflows of mixed shapes, deterministic in ``seed``."""
    from sim.generators import generate_workflow

    rng = np.random.default_rng(seed)
    times = poisson_times(spec.count, spec.window, rng)
    low, high = spec.tasks
    arrivals = []
    for k, time in enumerate(times):
        shape = spec.shapes[int(rng.integers(len(spec.shapes)))]
        size = max(int(rng.integers(low, high + 1)), 3)
        workflow = generate_workflow(shape, size, int(rng.integers(2**31)), ccr=spec.ccr)
        workflow = with_gpu_tasks(workflow, rng, spec.gpu_need, spec.gpu_prefer)
        arrivals.append(Arrival(time, replace(workflow, name=f"{workflow.name}#{k}")))
    return Stream(f"poisson-{spec.count}-s{seed}", tuple(arrivals))


def read_trace(path: str | Path) -> Stream:
    """A stream replayed from a CSV trace with columns ``time`` (s) and ``workflow`` (a WfFormat
    file, relative to the trace, or ``demo:<name>``), one arrival per row in time order.

    Every problem (missing columns, bad times, unreadable workflows) is reported at once.
    """
    from sim.demo import resolve_workflow

    path = Path(path)
    try:
        rows = list(csv.DictReader(path.read_text(encoding="utf-8").splitlines()))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise StreamError(str(path), [f"cannot read trace: {exc}"]) from exc
    problems: list[str] = []
    arrivals: list[Arrival] = []
    for line, row in enumerate(rows, start=2):
        time_text, source = (row.get("time") or "").strip(), (row.get("workflow") or "").strip()
        if not time_text or not source:
            problems.append(f"line {line}: needs 'time' and 'workflow'")
            continue
        try:
            time = float(time_text)
        except ValueError:
            problems.append(f"line {line}: time {time_text!r} is not a number")
            continue
        local = path.parent / source
        try:
            workflow = resolve_workflow(str(local) if local.exists() else source)
        except (InputError, WorkflowError) as exc:
            problems.append(f"line {line}: {exc}")
            continue
        arrivals.append(Arrival(time, workflow))
    if not rows:
        problems.append("no arrivals (a header 'time,workflow' and one row per arrival)")
    if problems:
        raise StreamError(str(path), problems)
    return Stream(path.stem, tuple(arrivals))
