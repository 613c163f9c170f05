"""Task duplication: running a task again on another node so its consumers there skip a transfer.

A :class:`CopyPlan` is a :class:`~policy.plan.Plan` whose tasks may also run as *copies* on
other nodes. Every instance of a task (the original or a copy) reads each input from one
*version* of it: the shared filesystem, the producer's original, or a copy of the producer,
whichever lands first on its node (a copy on the same node lands at its finish). Planning
records which version each instance reads, so:

* :meth:`CopyPlan.to_result` is the plan as an execution (ideal network) whose records list
  every copy under its task's id, checked by :func:`policy.validate.validate_schedule` with
  ``copies=True``;
* :meth:`CopyPlan.to_copy_schedule` gives what the simulator runs: an *expanded* workflow in
  which each copy is a task of its own (``T#copy@node``) writing its own files
  (``f#copy@node``) and each instance reads the versions the plan chose, with the static
  schedule for it. The simulator needs nothing new; :meth:`CopySchedule.original_result`
  renames the expanded records back to the original tasks and files, for the validator and the
  metrics.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from policy.costs import shared_fs_read_time, transfer_time
from policy.plan import Plan, Slot
from policy.timeline import Reservation
from sim.model import File, Node, Task, Workflow, gpus_used
from sim.schedule import SHARED_FS, SimResult, StaticSchedule, TaskRecord, TransferRecord

COPY_MARK = "#copy@"
"""Between an id and the node in a copy's task or file id in the expanded workflow."""


def copy_id(item: str, node: str) -> str:
    """The expanded workflow's id of ``item`` (a task or a file) copied on ``node``."""
    return f"{item}{COPY_MARK}{node}"


def original_id(item: str) -> str:
    """The original id behind an expanded task or file id."""
    return item.partition(COPY_MARK)[0]


@dataclass
class CopyPlan(Plan):
    """A plan in which a task may also run as copies on other nodes (see the module doc)."""

    copies: dict[str, dict[str, tuple[float, float]]] = field(default_factory=dict)
    """Task -> node -> (start, finish) of each copy (never on the original's node)."""
    reads: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    """(task, node) of an instance -> file -> the node of the version it reads
    (:data:`~sim.schedule.SHARED_FS` for workflow inputs)."""

    # --- versions -----------------------------------------------------------------------------
    def versions(self, task: str) -> list[tuple[str, float]]:
        """(node, finish) of every instance of a placed ``task``: the original first."""
        found = [(self.placement[task], self.finish[task])]
        found += [(node, end) for node, (_, end) in self.copies.get(task, {}).items()]
        return found

    def input_arrivals(self, task: str, node: Node) -> dict[str, tuple[str, float]]:
        """Per input file of ``task`` run on ``node``: the version read (its node) and when it
        lands there; the earliest wins, the original on ties."""
        wf, nodes = self.workflow, self.platform.node_by_name
        t = wf.task_by_id[task]
        chosen: dict[str, tuple[str, float]] = {}
        for file_id in t.inputs:
            size = wf.file_by_id[file_id].size
            producer = wf.producer.get(file_id)
            if producer is None:
                chosen[file_id] = (
                    SHARED_FS,
                    t.release + shared_fs_read_time(size, self.platform, node),
                )
                continue
            if producer == task:
                continue
            best: tuple[str, float] | None = None
            for where, end in self.versions(producer):
                landed = end + transfer_time(size, self.platform, nodes[where], node)
                if best is None or landed < best[1]:
                    best = (where, landed)
            assert best is not None
            chosen[file_id] = best
        return chosen

    def data_ready(self, task: str, node: Node) -> float:
        """When every input of ``task`` can be on ``node`` (best versions), its control parents
        have finished (the originals) and it is released."""
        t = self.workflow.task_by_id[task]
        ready = t.release
        for parent in t.parents:  # explicit (control) parents: the original must have ended
            ready = max(ready, self.finish[parent])
        for _, landed in self.input_arrivals(task, node).values():
            ready = max(ready, landed)
        return ready

    # --- updates ------------------------------------------------------------------------------
    def place(self, slot: Slot) -> None:
        """Commit the original instance of ``slot.task`` (recording the versions it reads)."""
        node = self.platform.node_by_name[slot.node]
        self.reads[(slot.task, slot.node)] = {
            f: where for f, (where, _) in self.input_arrivals(slot.task, node).items()
        }
        super().place(slot)

    def place_copy(self, slot: Slot) -> None:
        """Commit a copy of the already placed ``slot.task`` on another node."""
        task = slot.task
        if self.placement.get(task) == slot.node or slot.node in self.copies.get(task, {}):
            raise ValueError(f"task {task!r} already runs on {slot.node!r}")
        node = self.platform.node_by_name[slot.node]
        self.reads[(task, slot.node)] = {
            f: where for f, (where, _) in self.input_arrivals(task, node).items()
        }
        self.copies.setdefault(task, {})[slot.node] = (slot.start, slot.finish)
        self.timelines[slot.node].reserve(self._copy_reservation(task, slot))

    def remove_copy(self, task: str, node: str) -> None:
        """Undo :meth:`place_copy` (a copy tried and found useless)."""
        start, finish = self.copies[task].pop(node)
        if not self.copies[task]:
            del self.copies[task]
        del self.reads[(task, node)]
        self.timelines[node].unreserve(
            self._copy_reservation(task, Slot(task, node, start, finish))
        )

    def _copy_reservation(self, task: str, slot: Slot) -> Reservation:
        t = self.workflow.task_by_id[task]
        gpus = gpus_used(t, self.platform.node_by_name[slot.node])
        return Reservation(
            slot.start, slot.finish, t.cores, t.memory, copy_id(task, slot.node), gpus
        )

    def copy_slot(self, task: str, node: Node) -> Slot:
        """Earliest slot of a copy of the placed ``task`` on ``node``: a task's own slot, since
        :meth:`data_ready` already counts the copies placed so far."""
        return self.slot(task, node)

    def to_schedule(self, scheduler: str) -> StaticSchedule:
        """Refused when there are copies: the simulator runs :meth:`to_copy_schedule`."""
        if self.copies:
            raise TypeError("a plan with copies runs as to_copy_schedule(), not to_schedule()")
        return super().to_schedule(scheduler)

    @property
    def copy_count(self) -> int:
        return sum(len(c) for c in self.copies.values())

    # --- results ------------------------------------------------------------------------------
    def instances(self) -> list[tuple[str, str, float, float]]:
        """(task, node, start, finish) of every instance, originals and copies."""
        found = [(t, n, self.start[t], self.finish[t]) for t, n in self.placement.items()]
        for task, where in self.copies.items():
            found += [(task, node, start, end) for node, (start, end) in where.items()]
        return found

    def to_result(self, scheduler: str) -> SimResult:
        """The plan as an execution (ideal network), every copy recorded under its task's id
        and every transfer it assumes (one per file version and destination)."""
        wf, nodes = self.workflow, self.platform.node_by_name
        records, transfers = [], {}
        for task, node_name, start, end in self.instances():
            node = nodes[node_name]
            release = wf.task_by_id[task].release
            ready = max((self.finish[p] for p in wf.parents[task]), default=release)
            records.append(TaskRecord(task, node_name, ready, start, end))
            for file_id, where in self.reads[(task, node_name)].items():
                size = wf.file_by_id[file_id].size
                if where == node_name:
                    continue
                if where == SHARED_FS:
                    begin = release
                    landed = begin + shared_fs_read_time(size, self.platform, node)
                else:
                    producer = wf.producer[file_id]
                    begin = dict(self.versions(producer))[where]
                    landed = begin + transfer_time(size, self.platform, nodes[where], node)
                key = (file_id, where, node_name)
                if key not in transfers:
                    transfers[key] = TransferRecord(file_id, size, where, node_name, begin, landed)
        records.sort(key=lambda r: (r.start, r.end, r.task, r.node))
        return SimResult.from_records(
            wf,
            self.platform,
            scheduler,
            "ideal",
            tuple(records),
            tuple(transfers.values()),
            backend="plan",
        )

    def _version_read(self, task: str, node: str, file_id: str) -> str:
        """The expanded workflow's id of the version of ``file_id`` that the instance of
        ``task`` on ``node`` reads."""
        producer = self.workflow.producer.get(file_id)
        if producer == task:  # reads what it writes: its own instance's file
            return file_id if node == self.placement[task] else copy_id(file_id, node)
        where = self.reads[(task, node)].get(file_id, SHARED_FS)
        if producer is None or where == self.placement[producer]:
            return file_id
        return copy_id(file_id, where)

    def to_copy_schedule(self, scheduler: str) -> CopySchedule:
        """The expanded workflow and its static schedule (see the module docstring)."""
        wf = self.workflow
        expanded_tasks: list[Task] = []
        expanded_files: list[File] = list(wf.files)
        assignment: dict[str, str] = {}
        start: dict[str, float] = {}
        for task, node, begin, _ in self.instances():
            t = wf.task_by_id[task]
            inputs = tuple(self._version_read(task, node, f) for f in t.inputs)
            if node == self.placement[task]:
                expanded_tasks.append(replace(t, inputs=inputs))
                assignment[task] = node
                start[task] = begin
                continue
            outputs = tuple(copy_id(f, node) for f in t.outputs)
            expanded_files += [File(copy_id(f, node), wf.file_by_id[f].size) for f in t.outputs]
            name = copy_id(task, node)
            expanded_tasks.append(replace(t, id=name, inputs=inputs, outputs=outputs))
            assignment[name] = node
            start[name] = begin
        expanded = Workflow(
            f"{wf.name}+copies",
            tuple(expanded_tasks),
            tuple(expanded_files),
            wf.description,
            wf.meta,
        )
        schedule = StaticSchedule.from_priorities(
            assignment,
            start,
            scheduler,
            self.makespan,
            tie_break={t: i for i, t in enumerate(expanded.topological_order)},
        )
        return CopySchedule(wf, expanded, schedule, self.copy_count)


@dataclass(frozen=True)
class CopySchedule:
    """What a duplicating scheduler hands the simulator: the expanded workflow and its static
    schedule, and the way back to the original workflow's records."""

    workflow: Workflow
    expanded: Workflow
    schedule: StaticSchedule
    copies: int
    """How many copies the plan runs (0: no duplication, ``expanded`` equals ``workflow``)."""

    def original_result(self, result: SimResult) -> SimResult:
        """``result`` of the expanded workflow with copies renamed to their tasks and files."""
        tasks = tuple(replace(r, task=original_id(r.task)) for r in result.tasks)
        transfers = tuple(replace(x, file=original_id(x.file)) for x in result.transfers)
        return replace(result, workflow=self.workflow.name, tasks=tasks, transfers=transfers)
