"""The simulator's compiled core (``sim._core``, C sources in sim/csrc/) behind the run
interface of the pure-Python engine: :class:`CoreRun` and its scheduler view :class:`CoreView`.

The pure-Python ``sim.engine._Run`` is the specification; the C core is the same engine (same
events, same arithmetic in the same order) and tests/sim/test_core_equivalence.py keeps the two
equal, bit for bit, on generated instances. ``make setup`` builds the core (``pip install -e .``
compiles setup.py's extension in place). Documented fallback: when ``sim._core`` is not built,
:func:`sim.engine.simulate` runs the Python engine (the same results, several times slower) and
warns once; ``WASS_SIM_CORE=python`` asks for the Python engine explicitly. A core built from
other sources than sim/csrc/ is refused with a one-line error (a stale build would be wrong).
"""

from __future__ import annotations

import dataclasses
import os
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from sim.compiled import CompiledPlatform, CompiledWorkflow, duration
from sim.core_hash import SOURCES, source_hash
from sim.dispatch import Dispatcher
from sim.errors import InputError
from sim.model import Platform, Workflow
from sim.network import FROM_SHARED_FS, uncontended_duration
from sim.occupancy import Occupancy
from sim.schedule import (
    SHARED_FS,
    NetworkModel,
    SimResult,
    StaticSchedule,
    TaskRecord,
    TransferRecord,
)
from sim.view import EngineView, NodeProjection


class StaleCoreError(InputError):
    """The compiled core does not match its sources."""

    kind = "compiled core"


def _load() -> Any:
    try:
        from sim import _core  # type: ignore[attr-defined]
    except ImportError:
        return None
    if SOURCES.is_dir() and getattr(_core, "SOURCE_HASH", "") != source_hash():
        raise StaleCoreError(
            "sim._core",
            [
                "built from other sources than sim/csrc/: rebuild it (make setup, or "
                ".venv/bin/python setup.py build_ext --inplace)"
            ],
        )
    return _core


_core = _load()
AVAILABLE = _core is not None
_enabled = AVAILABLE and os.environ.get("WASS_SIM_CORE", "") != "python"
_warned = False


def enabled() -> bool:
    """Whether simulations run on the compiled core now (warns once when it is missing)."""
    global _warned
    if not AVAILABLE and not _warned and os.environ.get("WASS_SIM_CORE", "") != "python":
        _warned = True
        warnings.warn(
            "sim._core is not built: the simulator runs its pure-Python engine (same results, "
            "slower); run `make setup` to build it",
            RuntimeWarning,
            stacklevel=3,
        )
    return _enabled


@contextmanager
def engine(kind: str) -> Iterator[None]:
    """Run simulations in the block on ``"python"`` or ``"compiled"`` (tests, benches)."""
    global _enabled
    if kind == "compiled" and not AVAILABLE:
        raise RuntimeError("sim._core is not built (make setup)")
    before, _enabled = _enabled, kind == "compiled"
    try:
        yield
    finally:
        _enabled = before


_instances: dict[tuple[int, int], tuple[CompiledWorkflow, CompiledPlatform, Any]] = {}


def _instance(wf: CompiledWorkflow, pf: CompiledPlatform) -> Any:
    """The C arrays of a compiled workflow and platform, built once per pair (a few kept)."""
    key = (id(wf), id(pf))
    cached = _instances.get(key)
    if cached is not None and cached[0] is wf and cached[1] is pf:
        return cached[2]
    if len(_instances) >= 16:
        _instances.clear()
    instance = _core.Instance(
        wf.work,
        wf.cores,
        wf.memory,
        wf.gpus,
        wf.parents,
        wf.children,
        wf.inputs,
        wf.outputs,
        tuple(float(s) for s in wf.file_size),
        wf.producer,
        pf.speed,
        pf.cores,
        pf.memory,
        pf.gpus,
        pf.bandwidth,
        float(pf.latency),
        float(pf.fs_bandwidth),
        pf.link_bandwidth,
        wf.prefers_gpu,
        pf.gpu_speed,
        wf.release_times,
        wf.released_tasks,
        wf.released_inputs,
    )
    _instances[key] = (wf, pf, instance)
    return instance


class CoreRun:
    """One simulation on the compiled core, with ``sim.engine._Run``'s interface."""

    def __init__(
        self,
        wf: CompiledWorkflow,
        pf: CompiledPlatform,
        network_model: NetworkModel,
        dispatcher: Dispatcher | None,
        core: Any = None,
    ) -> None:
        self.wf, self.pf = wf, pf
        self.network_model: NetworkModel = network_model
        self.dispatcher = dispatcher
        self.occupancy: Occupancy | None = None
        if core is None:
            core = _core.Run(_instance(wf, pf), network_model == "fair", dispatcher is not None)
        self.core = core
        if dispatcher is not None:
            core.set_callbacks(partial_choose(dispatcher, self), partial_order(dispatcher, wf))

    def view(self, workflow: Workflow, platform: Platform) -> CoreView:
        return CoreView(self, workflow, platform)

    def hold(self, occupancy: Occupancy | None) -> None:
        """Other jobs' cores, taken at t=0 (as ``_Run.hold``); holds with memory or a later
        start are ``_Run``'s only (:func:`sim.engine.simulate` picks it for them)."""
        if occupancy and not occupancy.from_start:
            raise ValueError("the compiled core takes cores-only holds from time 0")
        self.occupancy = occupancy
        for h in occupancy.active() if occupancy else ():
            self.core.hold(self.pf.node_index[h.node], h.cores, float(h.until))

    def load_static(self, schedule: StaticSchedule) -> None:
        wf, index = self.wf, self.pf.node_index
        node_of = [-1] * wf.n_tasks
        for task_id, node_name in schedule.assignment.items():
            node_of[wf.task_index[task_id]] = index[node_name]
        queues: list[list[int]] = [[] for _ in range(self.pf.n_nodes)]
        for node_name, ordered in schedule.order.items():
            queues[index[node_name]] = [wf.task_index[t] for t in ordered]
        self.core.load_plan(node_of, queues)

    def load_plan(self, node_of: list[int], queues: list[list[int]]) -> None:
        self.core.load_plan(list(node_of), queues)

    def run(self) -> None:
        self._check(self.core.run())

    def resume(self) -> None:
        self._check(self.core.resume())

    def fork(self, dispatcher: Dispatcher) -> CoreRun:
        """A copy stopped at the decision in progress, continued by ``dispatcher``."""
        twin = CoreRun(self.wf, self.pf, self.network_model, dispatcher, self.core.copy())
        twin.occupancy = self.occupancy
        return twin

    def _check(self, started: int) -> None:
        if started != self.wf.n_tasks:
            _, _, _, _, end = self.core.tasks()
            stuck = [self.wf.task_ids[t] for t in range(self.wf.n_tasks) if end[t] < 0]
            raise RuntimeError(f"simulation stalled, {len(stuck)} tasks unfinished: {stuck[:5]}")

    def result(
        self, workflow: Workflow, platform: Platform, scheduler: str, network_model: NetworkModel
    ) -> SimResult:
        wf, names = self.wf, self.pf.names
        if _DIRECT_RECORDS:
            records = self.core.task_records(TaskRecord, wf.task_ids, names)
            transfers = self.core.transfer_records(
                TransferRecord, wf.file_ids, wf.file_size, names, SHARED_FS
            )
        else:
            records, transfers = self._records()
        return SimResult.from_records(
            workflow, platform, scheduler, network_model, records, transfers, backend="native"
        )

    def _records(self) -> tuple[tuple[TaskRecord, ...], tuple[TransferRecord, ...]]:
        """The records through the dataclasses' own ``__init__`` (see :data:`_DIRECT_RECORDS`)."""
        wf, names = self.wf, self.pf.names
        started, node_of, ready, start, end = self.core.tasks()
        records = tuple(
            TaskRecord(wf.task_ids[t], names[node_of[t]], ready[t], start[t], end[t])
            for t in started
        )
        files, sources, destinations, starts, ends = self.core.transfers()
        transfers = tuple(
            TransferRecord(
                wf.file_ids[f],
                wf.file_size[f],
                SHARED_FS if src == FROM_SHARED_FS else names[src],
                names[dst],
                t0,
                t1,
            )
            for f, src, dst, t0, t1 in zip(files, sources, destinations, starts, ends, strict=True)
        )
        return records, transfers


def _plain_record(cls: type) -> bool:
    """Whether ``cls`` is a slots dataclass whose ``__init__`` only sets its fields, in slot
    order (so the core may fill the slots itself)."""
    names = tuple(f.name for f in dataclasses.fields(cls))
    return getattr(cls, "__slots__", None) == names and not hasattr(cls, "__post_init__")


_DIRECT_RECORDS = _plain_record(TaskRecord) and _plain_record(TransferRecord)
"""The core builds the records with their slots filled directly (several times faster than
4,000 frozen-dataclass ``__init__`` calls); otherwise :meth:`CoreRun._records`."""


def partial_choose(dispatcher: Dispatcher, run: CoreRun) -> Any:
    """The core's ``choose`` callback: task index -> node index."""
    choose = dispatcher.choose
    return lambda task: choose(run, task)


def partial_order(dispatcher: Dispatcher, wf: CompiledWorkflow) -> Any:
    """The core's ``order`` callback: a batch of ready tasks in placement order."""
    order = dispatcher.order
    return lambda batch: order(wf, batch)


class _Located(Sequence[list[int]]):
    """``located[f]``: the compute nodes holding file ``f`` (read from the core on access)."""

    def __init__(self, core: Any, n_files: int) -> None:
        self._core, self._n = core, n_files

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, f: Any) -> Any:
        return self._core.located(f)


class CoreView(EngineView):
    """:class:`sim.view.EngineView` over the compiled core (the same answers)."""

    def __init__(self, run: CoreRun, workflow: Workflow, platform: Platform) -> None:
        self._workflow, self._platform = workflow, platform
        self._wf, self._pf, self._core = run.wf, run.pf, run.core
        self.run = run

    @property
    def now(self) -> float:
        return float(self._core.now)

    def _node(self, node: str) -> int:
        try:
            return self._pf.node_index[node]
        except KeyError:
            raise KeyError(f"unknown node {node!r}") from None

    def _task(self, task: str) -> int:
        try:
            return self._wf.task_index[task]
        except KeyError:
            raise KeyError(f"unknown task {task!r}") from None

    def free_cores(self, node: str) -> int:
        return int(self._core.free_cores()[self._node(node)])

    def available_time(self, node: str) -> float:
        return float(self._core.available_times()[self._node(node)])

    def file_locations(self, file: str) -> frozenset[str]:
        f = self._wf.file_index[file]
        where = [self._pf.names[n] for n in self._core.located(f)]
        if self._wf.producer[f] < 0:
            where.append(SHARED_FS)
        return frozenset(where)

    def task_node(self, task: str) -> str | None:
        n = self._core.node_of(self._task(task))
        return None if n < 0 else self._pf.names[n]

    def estimate_runtime(self, task: str, node: str) -> float:
        return duration(self._wf, self._pf, self._task(task), self._node(node))

    def estimate_transfer(self, size: int, source: str, destination: str) -> float:
        if source == destination:
            return 0.0
        src = FROM_SHARED_FS if source == SHARED_FS else self._node(source)
        return uncontended_duration(self._pf, size, src, self._node(destination))

    def estimate_finish(self, task: str, node: str) -> float:
        return float(self._core.estimate_finish(self._task(task), self._node(node)))

    def estimate_finish_all(self, task: str) -> list[float]:
        return self._core.estimate_finish_all(self._task(task))  # type: ignore[no-any-return]

    def available_times(self) -> list[float]:
        return self._core.available_times()  # type: ignore[no-any-return]

    def free_cores_all(self) -> list[int]:
        return self._core.free_cores()  # type: ignore[no-any-return]

    @property
    def located(self) -> Sequence[list[int]]:  # type: ignore[override]
        return _Located(self._core, len(self._wf.file_ids))

    def projection(self, node: int) -> NodeProjection:
        core_free, last_start = self._core.projection(node)
        return NodeProjection(core_free, last_start)
