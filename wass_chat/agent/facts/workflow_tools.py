"""The facts layer: plain functions that answer the assistant's questions with JSON-able dicts.

Every answer the assistant gives, online or offline, rests on these dicts: the LLM's tools return
them (fenced as data), the offline router renders them with templates, and the verifier checks
the model's text against them. Each dict has a ``kind`` naming its rendering
(:mod:`wass_chat.answers`). :class:`WorkflowTools` answers from the simulator and the knowledge
base; what reaches the cluster, and the gated submission, is
:class:`~wass_chat.agent.facts.cluster_tools.ClusterTools`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kb.provenance import standing
from kb.records import CaseRecord, is_real, real_source, workflow_hash
from policy.registry import DEFAULT_COMPARISON, canonical_name, scheduler_names
from sim.errors import InputError, ServiceUnavailable, UnknownName
from sim.model import Platform, Workflow
from sim.schedule import NetworkModel
from wass_chat.agent.facts.case_plan import plan_difference
from wass_chat.agent.facts.counterfactual import (
    RecordedRun,
    counterfactuals,
    locality,
)
from wass_chat.agent.facts.sources import Sources, demo_run_id
from wass_chat.agent.facts.whatif import WhatIf, compare, what_if
from wass_chat.answers.cases import CaseFacts, CasesFacts, RealRunFacts
from wass_chat.answers.placement import (
    PlacementFacts,
    RealCaseFacts,
    UnconfirmedCaseFacts,
    best_case,
)
from wass_chat.config import Settings
from wass_chat.slurm.hostlist import collect

CASES_CONSULTED = 20
"""Past cases a comparison consults for challengers: the most any tool retrieves (``k``), so
every case an answer can cite is among them."""


@dataclass(frozen=True)
class Subject:
    """What a simulation is about: workflow, platform, scheduler and, when it is one, the run."""

    workflow: Workflow
    platform: Platform
    scheduler: str
    run_id: str | None


class WorkflowTools:
    """The assistant's knowledge of workflows, runs, the cluster and its accounting."""

    def __init__(self, settings: Settings, sources: Sources | None = None) -> None:
        self.settings = settings
        self.sources = sources or Sources(settings)
        self.network_model: NetworkModel = settings.network_model

    # --- placements and cases --------------------------------------------------------------
    def explain_placement(
        self, run: str | None = None, task: str | None = None, node: str | None = None
    ) -> dict[str, Any]:
        """Why ``task`` of ``run`` ran on its node: locality, counterfactuals, similar cases."""
        recorded = self.sources.run(run)
        task = task or _heaviest_reader(recorded)
        if task not in recorded.workflow.task_by_id:
            where = f"in run {recorded.run_id!r}"
            raise UnknownName("task", task, recorded.workflow.topological_order, where)
        if node is not None and node not in recorded.platform.node_by_name:
            where = f"on the platform of run {recorded.run_id!r}"
            raise UnknownName("node", node, recorded.platform.node_by_name, where)
        moved = counterfactuals(recorded, task, self.network_model)
        facts = PlacementFacts(
            kind="placement",
            run_id=recorded.run_id,
            run_source=recorded.source,
            workflow=recorded.workflow.name,
            platform=recorded.platform.name,
            scheduler=recorded.scheduler,
            task=task,
            chosen_node=recorded.placements[task],
            asked_node=node,
            run_makespan_s=recorded.makespan,
            locality=locality(recorded, task),
            baseline_makespan_s=moved["baseline_makespan_s"],
            network_model=moved["network_model"],
            alternatives=moved["alternatives"],
            unfit_nodes=moved["unfit_nodes"],
            cases=self._cases(recorded.workflow, recorded.platform, 5),
        )
        best = best_case(facts["cases"], recorded.workflow.name)
        ids = [best["case_id"]] if best else []
        for record in self.sources.knowledge_base.get_cases(ids).values():
            plan = plan_difference(recorded, task, record)  # what the best case did differently
            if plan is not None:
                facts["best_case_plan"] = plan
        real, unconfirmed = real_case(self.sources.knowledge_base, recorded, task)
        if real is not None:
            facts["real_case"] = real
        if unconfirmed:
            facts["unconfirmed_cases"] = unconfirmed
        return dict(facts)

    def similar_cases(
        self, workflow: str | None = None, run: str | None = None, k: int = 5
    ) -> dict[str, Any]:
        """The ``k`` most similar past executions to a workflow (on the demo platform) or a run
        (default: the current one)."""
        if workflow is not None:
            wf, platform, subject = (
                self.sources.workflow(workflow),
                self.sources.platform(),
                workflow,
            )
            run_id = self._run_id(wf, platform, None)
        else:
            recorded = self.sources.run(run)
            wf, platform, subject = recorded.workflow, recorded.platform, recorded.run_id
            run_id = recorded.run_id
        facts = CasesFacts(
            kind="cases", subject=subject, workflow=wf.name, cases=self._cases(wf, platform, k)
        )
        if run_id is not None:
            facts["run_id"] = run_id
        return dict(facts)

    def _cases(self, workflow: Any, platform: Any, k: int) -> list[CaseFacts]:
        """The ``k`` most similar cases, real runs first where they tie with simulated ones."""
        kb = self.sources.knowledge_base
        found = []
        for c in kb.query(workflow, platform, k=k):
            facts = CaseFacts(
                case_id=c.case_id,
                similarity=c.similarity,
                scheduler=c.scheduler,
                makespan_s=c.makespan,
                workflow=c.workflow,
                platform=c.platform,
                source=c.source,
                outcome=f"{c.scheduler} achieved {c.makespan:.1f} s ({c.source})",
            )
            if c.real and c.record is not None and (run := real_run_facts(c.record)) is not None:
                said = standing(c.record, kb.accounting)
                if said.confirmed:
                    facts["real"] = run
                    facts["outcome"] = real_run_words(run)
                elif kb.sources is not None:  # limited to trusted sources: left out
                    continue
                else:
                    facts["outcome"] = f"a real run's claim, {said.words}"
            found.append(facts)
        return found

    # --- simulations -----------------------------------------------------------------------
    def _subject(
        self, workflow: str | None, run: str | None, platform: str | None, scheduler: str | None
    ) -> Subject:
        """What to simulate: a workflow (under ``scheduler``, default HEFT) or a run (default:
        the most recent), on ``platform`` when one is named."""
        if workflow is None:
            recorded = self.sources.run(run)
            pf = self.sources.platform(platform) if platform else recorded.platform
            sched = canonical_name(scheduler) if scheduler else recorded.scheduler
            same = pf == recorded.platform and sched == canonical_name(recorded.scheduler)
            run_id = recorded.run_id if same else self._run_id(recorded.workflow, pf, sched)
            return Subject(recorded.workflow, pf, sched, run_id)
        wf, pf = self.sources.workflow(workflow), self.sources.platform(platform)
        sched = canonical_name(scheduler or "heft")
        return Subject(wf, pf, sched, self._run_id(wf, pf, sched))

    def _run_id(self, workflow: Workflow, platform: Platform, scheduler: str | None) -> str | None:
        """The demo run a simulation of a demo workflow on the demo platform is (``None`` for
        other inputs, and for a workflow file that only shares a demo workflow's name)."""
        if scheduler is None or workflow.name not in self.sources.demo_workflow_names():
            return None
        if platform != self.sources.platform() or workflow != self.sources.workflow(workflow.name):
            return None
        return demo_run_id(workflow.name, scheduler)

    def simulate(
        self,
        workflow: str | None = None,
        run: str | None = None,
        platform: str | None = None,
        scheduler: str | None = None,
        add_nodes: int = 0,
        remove_nodes: list[str] | None = None,
        remove_count: int = 0,
        bandwidth_factor: float = 1.0,
        other_scheduler: str | None = None,
    ) -> dict[str, Any]:
        """Simulate a workflow or a run (default: the current run) and, with a change, the what-if.

        A what-if changes one thing against the run it names (``run_id`` in the facts). Named
        with a platform change, ``other_scheduler`` says which scheduler that run uses ("add 4
        nodes with cpop" is the cpop run with 4 more nodes), so the variant still differs from
        its baseline in one thing only.
        """
        if remove_nodes and remove_count:
            raise InputError("what-if", ["give node names to remove or a count, not both"])
        platform_change = bool(add_nodes or remove_nodes or remove_count or bandwidth_factor != 1)
        if other_scheduler and platform_change:
            scheduler, other_scheduler = other_scheduler, None
        subject = self._subject(workflow, run, platform, scheduler)
        change = WhatIf(
            add_nodes=add_nodes,
            remove_nodes=remove_count or tuple(remove_nodes or ()),
            bandwidth_factor=bandwidth_factor,
            scheduler=other_scheduler,
        )
        facts = what_if(
            subject.workflow, subject.platform, subject.scheduler, change, self.network_model
        )
        if subject.run_id is not None:
            facts["run_id"] = subject.run_id
        return dict(facts)

    def compare_schedulers(
        self,
        workflow: str | None = None,
        run: str | None = None,
        platform: str | None = None,
        schedulers: list[str] | None = None,
    ) -> dict[str, Any]:
        """Rank schedulers by simulated makespan on one workflow and platform (default: the
        current run's); the best one's run becomes the current run (its Gantt is in the facts).

        Unless schedulers are named, the ranking also simulates the schedulers of the
        retrieved past cases of this workflow that tie or beat the default list
        (:func:`case_challengers`): the scheduler a why-answer or ``/cases`` cites as faster is
        then ranked first, or beaten on this very run, never missing from the ranking."""
        subject = self._subject(workflow, run, platform, None)
        challengers: list[tuple[str, float]] = []
        unconsulted = ""
        if not schedulers:
            try:
                cases = self._cases(subject.workflow, subject.platform, CASES_CONSULTED)
            except ServiceUnavailable as exc:  # a served store that is down: rank the list
                unconsulted = exc.one_line()
            else:
                challengers = case_challengers(cases, subject.workflow.name)
        facts = compare(
            subject.workflow,
            subject.platform,
            schedulers or list(DEFAULT_COMPARISON),
            self.network_model,
            challengers,
        )
        if unconsulted:
            facts["cases_unavailable"] = unconsulted
        best_run = self._run_id(subject.workflow, subject.platform, facts["best"])
        if best_run is not None:
            facts["run_id"] = best_run
        return dict(facts)


def case_challengers(cases: list[CaseFacts], workflow: str) -> list[tuple[str, float]]:
    """(scheduler, recorded makespan) of each retrieved case of ``workflow`` (the cases
    :func:`~wass_chat.answers.placement.best_case` picks from) whose scheduler is registered."""
    known = set(scheduler_names())
    return [
        (c["scheduler"], c["makespan_s"])
        for c in cases
        if c["workflow"] == workflow and c["scheduler"] in known
    ]


def _heaviest_reader(run: RecordedRun) -> str:
    """The task reading the most bytes produced by other tasks: the most telling placement."""
    wf = run.workflow

    def produced_input_bytes(task_id: str) -> int:
        task = wf.task_by_id[task_id]
        return sum(wf.file_by_id[f].size for f in task.inputs if f in wf.producer)

    return max(wf.topological_order, key=lambda t: (produced_input_bytes(t), t))


def real_run_facts(case: CaseRecord) -> RealRunFacts | None:
    """How a real case's run went, as answers cite it (None for a simulated case)."""
    real = case.real
    if real is None:
        return None
    predicted = real.predicted_makespan
    return RealRunFacts(
        run_id=real.run_id,
        date=real.started_at[:10],
        nodes=collect(case.nodes_used),
        real_makespan_s=round(case.metrics.makespan * real.scale, 3),
        predicted_makespan_s=round(predicted * real.scale, 3) if predicted is not None else None,
    )


def real_run_words(run: RealRunFacts) -> str:
    """ "the real run of 2026-11-20 on n[1-3] took 453.0 s; our simulation of it said 441.0 s"."""
    text = f"the real run of {run['date']} on {run['nodes']} took {run['real_makespan_s']:.1f} s"
    if run["predicted_makespan_s"] is not None:
        text += f"; our simulation of it said {run['predicted_makespan_s']:.1f} s"
    return text


def real_case(
    kb: Any, run: RecordedRun, task: str
) -> tuple[RealCaseFacts | None, list[UnconfirmedCaseFacts]]:
    """The latest real run of ``run``'s very workflow on its platform (another run first, this
    one if it is the only one learned) that sacct confirms (:func:`kb.provenance.standing`),
    with where it put ``task`` and how long it took; and the cases claiming such a run that
    sacct does not confirm (none when the store is limited to trusted sources: left out)."""
    from kb.estimates import PLATFORM_HISTORY  # here: it loads the planners (~0.2 s)

    own = real_source(run.run_id)
    found = [
        c
        for c in kb.cases_on(run.platform, PLATFORM_HISTORY)
        if is_real(c.source)
        and c.workflow_hash == workflow_hash(run.workflow)
        and task in c.timeline
        and c.real is not None
    ]
    found.sort(key=lambda c: c.source == own)  # most recent first (cases_on's order), stable
    unconfirmed: list[UnconfirmedCaseFacts] = []
    for case in found:
        said = standing(case, kb.accounting)
        if said.confirmed:
            return _real_case_facts(case, run, task, said.words), unconfirmed
        if kb.sources is None:
            unconfirmed.append(
                UnconfirmedCaseFacts(
                    case_id=case.case_id,
                    source=case.source,
                    written_by=case.written_by,
                    why=said.words,
                )
            )
    return None, unconfirmed


def _real_case_facts(case: CaseRecord, run: RecordedRun, task: str, words: str) -> RealCaseFacts:
    real, (_, start, end) = case.real, case.timeline[task]
    assert real is not None
    predicted = real.predicted.get(task)
    facts = real_run_facts(case)
    assert facts is not None
    return RealCaseFacts(
        case_id=case.case_id,
        run=facts,
        task_node=case.placements[task],
        same_node=case.placements[task] == run.placements.get(task),
        task_real_s=round((end - start) * real.scale, 3),
        task_predicted_s=round((predicted[1] - predicted[0]) * real.scale, 3)
        if predicted is not None
        else None,
        confirmation=words,
        written_by=case.written_by,
    )
