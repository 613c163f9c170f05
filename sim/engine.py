"""Discrete-event simulation of a workflow on a cluster: ``simulate(...) -> SimResult``.

Execution model (docs/simulator.md has the long form):

* **Tasks.** A task runs on one node and reserves ``cores`` cores, ``memory`` bytes and the GPUs
  it uses there (:func:`sim.model.gpus_used`) from compute start to compute end (Slurm-like
  allocation, no fluid sharing). Its duration is :func:`sim.model.compute_time` (``work /
  (node.speed * cores)`` on its cores). Resources are not held while inputs transfer.
* **Arrivals.** A task with a ``release`` waits for it as for one more parent (a workflow of a
  stream arrives then, :mod:`sim.arrivals`); in static mode the workflow inputs its tasks read
  first leave the shared filesystem at that time, not at 0.
* **Files.** Workflow input files start on the shared filesystem (:data:`SHARED_FS`). A task's
  outputs stay on the node that produced them. A task on another node needs each missing input
  copied to its node; there is one copy per (file, destination node), and a second consumer on
  that node waits for the copy in flight. Inputs already on the node cost nothing.
* **Static mode** (:class:`StaticSchedule`). Each node starts its tasks strictly in the
  schedule's order: a task starts once every task before it on that node has started, all its
  parents have finished, all its inputs are on the node and its resources are free. Transfers are
  eager: when a producer finishes, each output starts moving at once to every other node hosting a
  consumer; workflow inputs start moving from the shared filesystem at t=0.
* **Dynamic mode** (:class:`DynamicScheduler`). When a task becomes ready (all parents finished;
  entry tasks at t=0) the scheduler picks its node through a read-only
  :class:`~sim.view.EngineView`. Tasks ready at the same instant are placed by descending
  ``priority``, ties by topological order. The task joins the node's FIFO queue and its missing
  inputs start moving at once (from the producer's node, or the shared filesystem); the node
  starts queued tasks in queue order under the static-mode rules.
* **Network.** ``fair``: full-duplex NICs (``bandwidth`` up and down) and a shared-filesystem link
  shared max-min fairly by concurrent flows, each flow paying ``latency`` first
  (:class:`~sim.network.FairNetwork`). ``ideal``: no contention, ``latency + size / min(source,
  destination bandwidth)``.
* **Energy.** Per node, ``power_idle`` over the makespan plus ``power_busy - power_idle`` times
  the reserved-core fraction integrated over time.

The simulation is deterministic: the same inputs give the same result, and it never reads the
wall clock. Events at equal times are processed in a fixed order (task ends in start order, then
transfer ends, then placements, then node dispatch in node order).
"""

from __future__ import annotations

import heapq
import math

from sim import fast
from sim.compiled import (
    CompiledPlatform,
    CompiledWorkflow,
    compile_platform,
    compile_workflow,
    duration,
    gpus_on,
)
from sim.dispatch import Dispatcher
from sim.errors import ScheduleError
from sim.fast import CoreRun
from sim.model import Platform, Workflow, check_fits
from sim.network import FROM_SHARED_FS, FairNetwork, IdealNetwork, Network, uncontended_duration
from sim.occupancy import Occupancy
from sim.schedule import (
    SHARED_FS,
    DynamicScheduler,
    NetworkModel,
    SimResult,
    StaticSchedule,
    TaskRecord,
    TransferRecord,
    check_order_is_feasible,
)
from sim.state import ClusterState
from sim.view import EngineView


def simulate(
    workflow: Workflow,
    platform: Platform,
    scheduler: StaticSchedule | DynamicScheduler,
    network_model: NetworkModel = "fair",
    occupancy: Occupancy | None = None,
) -> SimResult:
    """Simulate ``workflow`` on ``platform`` under a static schedule or a dynamic scheduler.

    ``occupancy``: cores and memory other jobs hold over their spans (:mod:`sim.occupancy`);
    None or empty: an idle cluster. Holds with memory or a later start (a live queue's) run on
    this module's engine, the compiled core's specification; cores-only holds from time 0 (the
    bench's) on the core.

    Bad input (a task no node can host, a schedule naming an unknown node or task, per-node orders
    that contradict the dependencies, holds that do not fit) raises an
    :class:`~sim.errors.InputError` before any simulation. A dynamic scheduler choosing an
    impossible node raises :class:`ScheduleError`.
    """
    if occupancy:
        occupancy.check(platform)
    if isinstance(scheduler, StaticSchedule):
        check_static_input(workflow, platform, scheduler, network_model)
    else:
        _check_common_input(workflow, platform, network_model)
    wf, pf = compile_workflow(workflow), compile_platform(platform)
    compiled = fast.enabled() and (occupancy is None or occupancy.from_start)
    engine = CoreRun if compiled else _Run  # the core takes cores-only holds from time 0
    if isinstance(scheduler, StaticSchedule):
        run: _Run | CoreRun = engine(wf, pf, network_model, None)
        run.hold(occupancy)
        run.load_static(scheduler)
        name = scheduler.scheduler or "static"
    else:
        scheduler.reset(workflow, platform)
        run = engine(wf, pf, network_model, Dispatcher(scheduler, workflow, platform))
        run.hold(occupancy)
        name = scheduler.name
    run.run()
    return run.result(workflow, platform, name, network_model)


def check_static_input(
    workflow: Workflow, platform: Platform, schedule: StaticSchedule, network_model: str
) -> None:
    """Everything checked before replaying ``schedule``: fits, placements, deadlock-free order."""
    _check_common_input(workflow, platform, network_model)
    schedule.check(workflow, platform)
    check_order_is_feasible(schedule, compile_workflow(workflow))


def _check_common_input(workflow: Workflow, platform: Platform, network_model: str) -> None:
    if network_model not in ("fair", "ideal"):
        raise ScheduleError(
            "network model", [f"unknown network model {network_model!r} (use 'fair' or 'ideal')"]
        )
    check_fits(workflow, platform)


class _Run:
    """One simulation: the event loop and the placement/dispatch rules of both modes.

    This pure-Python engine is the specification of the compiled core (sim/csrc/, used through
    :class:`sim.fast.CoreRun`); a change to the rules here, in sim/state.py, sim/network.py or
    sim/view.py's projections must be made there too: tests/sim/test_core_equivalence.py
    compares the two bit for bit."""

    def __init__(
        self,
        wf: CompiledWorkflow,
        pf: CompiledPlatform,
        network_model: NetworkModel,
        dispatcher: Dispatcher | None,
    ) -> None:
        self.wf, self.pf = wf, pf
        self.network_model: NetworkModel = network_model
        self.state = ClusterState.initial(wf, pf)
        self.network: Network = FairNetwork(pf) if network_model == "fair" else IdealNetwork(pf)
        self.dispatcher = dispatcher
        self.occupancy: Occupancy | None = None
        """Other jobs' holds at time 0 (what a fork's replay starts from too)."""
        self.task_heap: list[tuple[float, int, int]] = []  # (end, start sequence, task)
        self.started: list[int] = []  # tasks in start order
        self.dirty_nodes: set[int] = set(range(pf.n_nodes))
        self.ready_batch: list[int] = []
        self.deciding: tuple[list[int], int] = ([], 0)
        """Dynamic mode: the batch being placed and the position of the task being decided."""
        self.eager_destinations: list[list[int]] = [[] for _ in wf.file_ids]
        # Per transfer: file, source (node or FROM_SHARED_FS), destination, start, end.
        self.t_file: list[int] = []
        self.t_source: list[int] = []
        self.t_destination: list[int] = []
        self.t_start: list[float] = []
        self.t_end: list[float] = []
        for group, time in enumerate(wf.release_times):
            # Releases come first at an instant (sequence -2), before holds' ends and tasks'.
            heapq.heappush(self.task_heap, (time, -2, -1 - pf.n_nodes - group))

    def view(self, workflow: Workflow, platform: Platform) -> EngineView:
        """The read-only view a dynamic scheduler gets of this run."""
        return EngineView(self.state, workflow, platform, self)

    # --- set-up ------------------------------------------------------------------------------
    def hold(self, occupancy: Occupancy | None) -> None:
        """Take other jobs' cores and memory at their starts; each hold's start (when later
        than 0) and end is a task-heap event with start sequence -1 (before task ends at equal
        times) and task ``-1 - node``, which settles the node's holds."""
        self.occupancy = occupancy
        for until, node in self.state.hold(occupancy.active() if occupancy else ()):
            heapq.heappush(self.task_heap, (until, -1, -1 - node))

    def load_static(self, schedule: StaticSchedule) -> None:
        """Place every task, queue it in schedule order, and list where each file must go."""
        s, wf = self.state, self.wf
        for task_id, node_name in schedule.assignment.items():
            s.node_of[wf.task_index[task_id]] = self.pf.node_index[node_name]
        for node_name, ordered in schedule.order.items():
            s.queues[self.pf.node_index[node_name]] = [wf.task_index[t] for t in ordered]
        self._list_copies()

    def load_plan(self, node_of: list[int], queues: list[list[int]]) -> None:
        """:meth:`load_static` for a plan already in index form (trusted: not re-checked)."""
        self.state.node_of = node_of[:]
        self.state.queues = queues
        self._list_copies()

    def _list_copies(self) -> None:
        s, wf, n_nodes = self.state, self.wf, self.pf.n_nodes
        for task in range(wf.n_tasks):
            node = s.node_of[task]
            for f in wf.inputs[task]:
                producer = wf.producer[f]
                if producer >= 0 and s.node_of[producer] == node:
                    continue  # produced on this node: available when the parent ends
                key = f * n_nodes + node
                waiting = s.waiters.get(key)
                if waiting is None:
                    s.waiters[key] = [task]
                    self.eager_destinations[f].append(node)
                else:
                    waiting.append(task)
                s.missing_inputs[task] += 1

    # --- event loop --------------------------------------------------------------------------
    def run(self) -> None:
        s = self.state
        if self.dispatcher is None:
            late = {f for files in self.wf.released_inputs for f in files}
            for f, producer in enumerate(self.wf.producer):
                if producer < 0 and f not in late:
                    for node in self.eager_destinations[f]:
                        self._start_transfer(f, FROM_SHARED_FS, node)
        else:
            self.ready_batch = [t for t in range(self.wf.n_tasks) if s.parents_left[t] == 0]
        self.resume()

    def resume(self) -> None:
        """Finish the current instant, then process events until none is left."""
        s, network, heap = self.state, self.network, self.task_heap
        self._settle_instant()
        while True:
            next_task = heap[0][0] if heap else math.inf
            next_transfer = network.next_time()
            now = next_task if next_task < next_transfer else next_transfer
            if now == math.inf:
                break
            s.now = now
            while heap and heap[0][0] <= now:
                task = heapq.heappop(heap)[2]
                if task >= 0:
                    self._finish_task(task)
                elif task >= -self.pf.n_nodes:
                    self.dirty_nodes.add(s.release(-1 - task))
                else:
                    self._release_tasks(-1 - self.pf.n_nodes - task)
            for transfer in network.pop_finished(now):
                self._finish_transfer(transfer)
            self._settle_instant()
        if len(self.started) != self.wf.n_tasks or heap:
            stuck = [self.wf.task_ids[t] for t in range(self.wf.n_tasks) if s.end[t] < 0]
            raise RuntimeError(f"simulation stalled, {len(stuck)} tasks unfinished: {stuck[:5]}")

    def _settle_instant(self) -> None:
        """After this instant's ends: place ready tasks, start what can start, share bandwidth."""
        if self.ready_batch:
            self._place_ready()
        if self.dirty_nodes:
            dirty = sorted(self.dirty_nodes)
            self.dirty_nodes.clear()
            for node in dirty:
                self._dispatch(node)
        self.network.settle(self.state.now)

    def _release_tasks(self, group: int) -> None:
        """The tasks of one release time arrive: each loses its extra parent; in static mode
        the inputs they read first start leaving the shared filesystem."""
        s, wf = self.state, self.wf
        for task in wf.released_tasks[group]:
            left = s.parents_left[task] - 1
            s.parents_left[task] = left
            if left == 0:
                s.ready[task] = s.now
                if self.dispatcher is not None:
                    self.ready_batch.append(task)
                elif s.missing_inputs[task] == 0:
                    self.dirty_nodes.add(s.node_of[task])
        if self.dispatcher is None:
            for f in wf.released_inputs[group]:
                for node in self.eager_destinations[f]:
                    self._start_transfer(f, FROM_SHARED_FS, node)

    def _finish_task(self, task: int) -> None:
        s, wf = self.state, self.wf
        node = s.node_of[task]
        s.free_cores[node] += wf.cores[task]
        s.free_memory[node] += wf.memory[task]
        s.free_gpus[node] += gpus_on(wf, self.pf, task, node)
        del s.running[node][task]
        s.node_version[node] += 1
        self.dirty_nodes.add(node)
        for f in wf.outputs[task]:
            s.add_present(f, node)
            for destination in self.eager_destinations[f]:
                self._start_transfer(f, node, destination)
        now = s.now
        for child in wf.children[task]:
            left = s.parents_left[child] - 1
            s.parents_left[child] = left
            if left == 0:
                s.ready[child] = now
                if self.dispatcher is not None:
                    self.ready_batch.append(child)
                elif s.missing_inputs[child] == 0:
                    self.dirty_nodes.add(s.node_of[child])

    def _finish_transfer(self, transfer: int) -> None:
        s = self.state
        self.t_end[transfer] = s.now
        node = self.t_destination[transfer]
        file = self.t_file[transfer]
        key = file * self.pf.n_nodes + node
        s.add_present(file, node)
        del s.in_flight[key]
        s.node_version[node] += 1
        for task in s.waiters.pop(key):
            left = s.missing_inputs[task] - 1
            s.missing_inputs[task] = left
            if left == 0 and s.parents_left[task] == 0:
                self.dirty_nodes.add(node)

    def _start_transfer(self, file: int, source: int, destination: int) -> None:
        s, pf = self.state, self.pf
        transfer = len(self.t_file)
        size = self.wf.file_size[file]
        self.t_file.append(file)
        self.t_source.append(source)
        self.t_destination.append(destination)
        self.t_start.append(s.now)
        self.t_end.append(math.nan)
        s.in_flight[file * pf.n_nodes + destination] = transfer
        s.transfer_estimate.append(s.now + uncontended_duration(pf, size, source, destination))
        self.network.start(transfer, size, source, destination, s.now)

    def _place_ready(self) -> None:
        """Dynamic mode: ask the scheduler for a node for each task ready at this instant."""
        assert self.dispatcher is not None
        s, wf, n_nodes = self.state, self.wf, self.pf.n_nodes
        batch = self.ready_batch
        self.ready_batch = []
        if len(batch) > 1:
            batch = self.dispatcher.order(wf, batch)
        for position, task in enumerate(batch):
            self.deciding = (batch, position)
            node = self.dispatcher.choose(self, task)
            s.node_of[task] = node
            s.queues[node].append(task)
            s.node_version[node] += 1
            missing = 0
            for f in wf.inputs[task]:
                key = f * n_nodes + node
                if key in s.present:
                    continue
                missing += 1
                waiting = s.waiters.get(key)
                if waiting is not None:
                    waiting.append(task)
                    continue
                s.waiters[key] = [task]
                self._start_transfer(f, s.source_of(f), node)
            s.missing_inputs[task] = missing
            if missing == 0:
                self.dirty_nodes.add(node)

    def _dispatch(self, node: int) -> None:
        """Start the node's queued tasks, strictly in order, while the head can start."""
        s, wf = self.state, self.wf
        queue, head = s.queues[node], s.heads[node]
        now, speed = s.now, self.pf.speed[node]
        while head < len(queue):
            task = queue[head]
            if s.parents_left[task] or s.missing_inputs[task]:
                break
            cores, memory = wf.cores[task], wf.memory[task]
            uses_gpu = wf.gpus[task] or wf.prefers_gpu[task]
            gpus = gpus_on(wf, self.pf, task, node) if uses_gpu else 0
            if cores > s.free_cores[node] or memory > s.free_memory[node]:
                break
            if gpus > s.free_gpus[node]:
                break
            s.free_cores[node] -= cores
            s.free_memory[node] -= memory
            s.free_gpus[node] -= gpus
            if uses_gpu:
                end = now + duration(wf, self.pf, task, node)
            else:
                end = now + wf.work[task] / (speed * cores)
            s.start[task] = now
            s.end[task] = end
            s.running[node][task] = end
            heapq.heappush(self.task_heap, (end, len(self.started), task))
            self.started.append(task)
            head += 1
        if head != s.heads[node]:
            s.heads[node] = head
            s.node_version[node] += 1

    # --- result ------------------------------------------------------------------------------
    def result(
        self, workflow: Workflow, platform: Platform, scheduler: str, network_model: NetworkModel
    ) -> SimResult:
        s, wf, pf = self.state, self.wf, self.pf
        names = pf.names
        records = tuple(
            TaskRecord(wf.task_ids[t], names[s.node_of[t]], s.ready[t], s.start[t], s.end[t])
            for t in self.started
        )
        transfers = tuple(
            TransferRecord(
                wf.file_ids[f],
                wf.file_size[f],
                SHARED_FS if src == FROM_SHARED_FS else names[src],
                names[dst],
                start,
                end,
            )
            for f, src, dst, start, end in zip(
                self.t_file,
                self.t_source,
                self.t_destination,
                self.t_start,
                self.t_end,
                strict=True,
            )
        )
        return SimResult.from_records(
            workflow, platform, scheduler, network_model, records, transfers, backend="native"
        )
