"""Continue a dynamic simulation from the decision in progress, on a copy: rollouts for search.

A rollout planner (the learned policy's lookahead) asks, at one decision, "what if this task
went to node X and a base policy placed everything after it?". Re-simulating from t=0 with the
earlier decisions pinned answers that exactly but repeats the whole prefix for every candidate.
:func:`continue_from` copies the running engine at the decision instead (state, network flows
and pending events, the rest of the batch being placed) and runs only the remainder, which the
determinism of the engine makes identical to the from-scratch run (tests/sim/test_engine_fork.py
checks it event for event).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sim.compiled import CompiledPlatform, CompiledWorkflow
from sim.dispatch import Dispatcher
from sim.engine import _Run
from sim.errors import ScheduleError
from sim.fast import CoreRun
from sim.model import Platform, Workflow
from sim.occupancy import Occupancy
from sim.schedule import ClusterView, DynamicScheduler, NetworkModel, StaticSchedule
from sim.view import EngineView


@dataclass(frozen=True)
class Rollout:
    """A finished dynamic run's realised plan, in the engine's index form."""

    wf: CompiledWorkflow
    pf: CompiledPlatform
    network_model: NetworkModel
    node_of: list[int]
    """Per task (declaration order), the index of its node."""
    started: list[int]
    """Tasks in start order: filtered by node, each node's order in the realised plan."""
    start: list[float]
    """Per task, when it started."""
    core: Any = None
    """The finished run on the compiled core (``sim._core.Run``), when it ran there."""
    occupancy: Occupancy | None = None
    """Other jobs' holds the run started from; the replay starts from them too."""

    def node(self, task: str) -> str:
        """The node the run placed ``task`` on."""
        return self.pf.names[self.node_of[self.wf.task_index[task]]]

    def queues(self) -> list[list[int]]:
        queues: list[list[int]] = [[] for _ in range(self.pf.n_nodes)]
        for task in self.started:
            queues[self.node_of[task]].append(task)
        return queues

    def replayed_makespan(self) -> float:
        """Makespan of the static replay of the realised plan (``simulate(to_schedule())``).

        The plan is valid by construction, so it is replayed without the input checks, and
        only the makespan is collected (the same maximum over task and transfer ends that
        :meth:`sim.schedule.SimResult.from_records` takes).
        """
        if self.core is not None:
            holds = self.occupancy.active() if self.occupancy else ()
            index = self.pf.node_index
            return float(
                self.core.replayed_makespan([(index[h.node], h.cores, h.until) for h in holds])
            )
        run = _Run(self.wf, self.pf, self.network_model, None)
        run.hold(self.occupancy)
        run.load_plan(self.node_of, self.queues())
        run.run()
        end = max(run.state.end, default=0.0)
        transfer_end = max(run.t_end, default=0.0)
        return max(0.0, end, transfer_end)

    def to_schedule(self, scheduler: str = "") -> StaticSchedule:
        """The realised plan as a :class:`StaticSchedule` (same as ``SimResult.to_schedule``)."""
        names, ids = self.pf.names, self.wf.task_ids
        assignment = {ids[t]: names[self.node_of[t]] for t in range(len(ids))}
        order = {names[n]: tuple(ids[t] for t in q) for n, q in enumerate(self.queues()) if q}
        return StaticSchedule(assignment, order, scheduler)


def _fork(run: _Run, dispatcher: Dispatcher) -> _Run:
    """A copy of a dynamic ``run`` stopped at the decision in progress, in which ``dispatcher``
    places the task being decided, the rest of its batch, and every later one."""
    twin = _Run.__new__(_Run)
    twin.wf, twin.pf, twin.network_model = run.wf, run.pf, run.network_model
    twin.state = run.state.copy()
    twin.network = run.network.copy()
    twin.dispatcher = dispatcher
    twin.task_heap = run.task_heap[:]
    twin.started = run.started[:]
    twin.dirty_nodes = run.dirty_nodes.copy()
    batch, position = run.deciding
    twin.ready_batch = batch[position:]
    twin.deciding = ([], 0)
    twin.eager_destinations = run.eager_destinations  # used in static mode only: all empty
    twin.t_file, twin.t_source = run.t_file[:], run.t_source[:]
    twin.t_destination, twin.t_start = run.t_destination[:], run.t_start[:]
    twin.t_end = run.t_end[:]
    twin.occupancy = run.occupancy
    return twin


def continue_from(
    view: ClusterView,
    scheduler: DynamicScheduler,
    chooser: Any = None,
    pinned: tuple[int, int] = (-1, -1),
) -> Rollout:
    """Finish a copy of the running dynamic simulation under ``scheduler``.

    ``view`` is the view the engine passed to the current ``choose_node`` call; ``scheduler``
    places that task (it is asked first), the rest of the tasks ready at this instant and every
    later one. The original run is untouched. ``scheduler.reset`` is called first, as
    :func:`sim.engine.simulate` would. Raises :class:`ScheduleError` for a view that is not a
    running engine's.

    ``chooser``: on the compiled core, a ``sim._core.Chooser`` that takes the scheduler's
    decisions and orders its ready tasks in C wherever it is certain to agree with it (the
    scheduler is asked otherwise), with the ``pinned`` (task index, node index) placed as given;
    the Python engine ignores it (the scheduler decides everything).
    """
    run = view.run if isinstance(view, EngineView) else None
    if not isinstance(run, _Run | CoreRun) or run.dispatcher is None:
        raise ScheduleError(
            "fork", ["continue_from needs the view of a running dynamic simulation"]
        )
    workflow: Workflow = view.workflow
    platform: Platform = view.platform
    scheduler.reset(workflow, platform)
    dispatcher = Dispatcher(scheduler, workflow, platform)
    if isinstance(run, CoreRun):
        core = run.fork(dispatcher)
        if chooser is not None:
            core.core.set_chooser(chooser, *pinned)
        core.resume()
        started, node_of, _, start, _ = core.core.tasks()
        return Rollout(
            run.wf, run.pf, run.network_model, node_of, started, start, core.core, run.occupancy
        )
    twin = _fork(run, dispatcher)
    twin.resume()
    s = twin.state
    return Rollout(
        run.wf, run.pf, run.network_model, s.node_of, twin.started, s.start, None, run.occupancy
    )
