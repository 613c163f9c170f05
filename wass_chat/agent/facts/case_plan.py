"""What retrieval adds to a why-answer: the best similar case and what its plan did differently.

A why-question about one task is answered with counterfactuals of *this* run; the knowledge base
may hold a better plan for the same workflow. :func:`~wass_chat.answers.placement.best_case`
picks the case worth comparing with (the fastest of the same workflow when there is one), and
:func:`plan_difference` compares its decisions with the run's: where it put the task, how many
tasks it placed differently, and how much of the task's input (and of all tasks' inputs) stayed
on the node that read it. The difference is computed from the case record's placements
(:class:`kb.records.CaseRecord`), for a case of the same graph only, so the verdict that states
it (:mod:`wass_chat.answers.placement`) is checked like any other fact.

Pure functions; no I/O.
"""

from __future__ import annotations

from kb.records import CaseRecord, workflow_hash
from wass_chat.agent.facts.counterfactual import RecordedRun, locality
from wass_chat.answers.placement import BestCasePlan


def case_run(case: CaseRecord) -> RecordedRun:
    """A case record as a run: its placements and start times, for the same locality sums."""
    return RecordedRun(
        run_id=case.case_id,
        workflow=case.workflow,
        platform=case.platform,
        scheduler=case.scheduler,
        placements=case.placements,
        start_times={task: times[1] for task, times in case.timeline.items()},
        makespan=case.metrics.makespan,
        source=case.source,
    )


def remote_input_bytes(run: RecordedRun) -> int:
    """Bytes every task read from another node's outputs (not local, not the shared filesystem)."""
    total = 0
    for task in run.workflow.task_by_id:
        loc = locality(run, task)
        total += loc["input_bytes"] - loc["shared_fs_input_bytes"] - loc["local_on_chosen_bytes"]
    return total


def plan_difference(run: RecordedRun, task: str, case: CaseRecord) -> BestCasePlan | None:
    """How ``case`` placed things differently from ``run``, for ``task`` and over the whole plan;
    ``None`` when the case ran another graph (its placements would not be comparable).

    ``task_node`` is where the case put ``task``; ``tasks_compared`` counts the tasks, and
    ``tasks_placed_differently`` those on a node of another name. Locality is measured the same
    way for both plans (:func:`~wass_chat.agent.facts.counterfactual.locality`): the task's input
    bytes already on the node it ran on, and all tasks' input bytes read from another node.
    """
    if workflow_hash(case.workflow) != workflow_hash(run.workflow):
        return None
    other = case_run(case)
    return BestCasePlan(
        case_id=case.case_id,
        task_node=case.placements[task],
        tasks_compared=len(run.placements),
        tasks_placed_differently=sum(
            node != case.placements[t] for t, node in run.placements.items()
        ),
        task_local_input_bytes=locality(other, task)["local_on_chosen_bytes"],
        remote_input_bytes=remote_input_bytes(other),
        run_remote_input_bytes=remote_input_bytes(run),
    )
