"""Facts about the cluster and its accounting, and the one gated action (submission).

Split from :mod:`wass_chat.agent.facts.workflow_tools` because these reach outside the
simulator: the Slurm commands (:mod:`wass_chat.slurm`), the decision log
(:mod:`wass_chat.runlog`), sacct parsing and analytics, the report writer. A service that does
not answer raises :class:`~sim.errors.ServiceUnavailable`, which the toolbox turns into an error
the answer states.

:func:`prepare_submission` has no side effect on the cluster: it keeps the plan it made (every
job's sbatch arguments) and returns it with its digest. :func:`execute_submission` is called only
by the approval gate after a human approved that digest (see :mod:`wass_chat.agent.approval`),
and submits that very plan, never a re-plan, so the run log records what the person saw.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from sim.errors import InputError, ServiceUnavailable
from sim.model import node_fits
from sim.schedule import NetworkModel
from wass_chat.agent.cancellation import current_work
from wass_chat.agent.facts.accounting_periods import parse_period, period_in_words, refresh_cache
from wass_chat.agent.facts.sources import Sources
from wass_chat.answers.report import ReportFacts
from wass_chat.answers.run_status import RunStatusFacts, TaskState, run_verdict
from wass_chat.answers.sacct_summary import SacctSummaryFacts, sacct_verdict
from wass_chat.answers.submission_plan import PlannedJob, SubmissionPlanFacts
from wass_chat.config import Settings


def sbatch_options(argv: list[str]) -> list[str]:
    """A job's sbatch arguments as the approval screen lists them: every option, the script
    (``--wrap``) left out since the job's command is shown on its own."""
    options: list[str] = []
    pending_value = False
    for word in argv:
        if pending_value:
            options[-1] += f" {word}"
            pending_value = False
        elif word.startswith("--wrap="):
            continue
        else:
            options.append(word)
            pending_value = word in ("--job-name", "--comment", "--partition")
    return options


def plan_facts(plan: Any, workflow_ref: str, platform_ref: str, note: str) -> SubmissionPlanFacts:
    """A :class:`~wass_chat.slurm.submission.SubmissionPlan` as the approval screen shows it:
    every job's command, sbatch options and literal argv, and the digest an approval must name
    (:mod:`wass_chat.slurm.plan_digest`)."""
    from wass_chat.slurm.plan_digest import plan_digest, workflow_hash

    records = plan.predicted.record_by_task
    jobs = [
        PlannedJob(
            task=job.task,
            node=job.node,
            cores=job.cores,
            memory_mb=job.memory_mb,
            after=list(job.parents),
            planned_start_s=records[job.task].start,
            command=list(job.command),
            sbatch=sbatch_options(job.argv()),
            argv=["sbatch", "--parsable", *job.argv()],
        )
        for job in plan.jobs
    ]
    return SubmissionPlanFacts(
        kind="submission_plan",
        planned_run_id=plan.run_id,
        plan_digest=plan_digest(plan),
        workflow=plan.workflow.name,
        workflow_sha256=workflow_hash(plan),
        workflow_ref=workflow_ref,
        scheduler=plan.scheduler,
        platform=plan.platform.name,
        platform_ref=platform_ref,
        predicted_makespan_s=plan.planned_makespan,
        jobs=jobs,
        note=note,
        estimates=plan.estimates,
    )


class ClusterTools:
    """The assistant's knowledge of the cluster and its accounting, and the gated submission.

    Bound to the same :class:`~wass_chat.agent.facts.sources.Sources` as
    :class:`~wass_chat.agent.facts.workflow_tools.WorkflowTools`, so a workflow or run name
    means the same in both.
    """

    def __init__(self, settings: Settings, sources: Sources) -> None:
        self.settings = settings
        self.sources = sources
        self.network_model: NetworkModel = settings.network_model
        self.prepared: dict[str, Any] = {}
        """Planned run id -> the :class:`~wass_chat.slurm.submission.SubmissionPlan` shown for
        approval: what an approval of its digest submits."""

    def _cluster_platform(self, ref: str | None) -> tuple[Any, str]:
        """The platform to plan on and a note: the cluster's nodes, else the demo platform."""
        if ref is not None:
            return self.sources.platform(ref), ""
        try:
            return self.sources.platform("slurm"), ""
        except (ServiceUnavailable, InputError) as exc:
            note = f"planned on the demo platform: the cluster is unavailable ({exc.one_line()})"
            return self.sources.platform("demo"), note

    def prepare_submission(
        self, workflow: str, scheduler: str, platform: str | None, estimates: str = "workflow"
    ) -> dict[str, Any]:
        """The jobs a submission would create (task, node, cores, dependencies); submits nothing.

        Planned like ``wass-chat submit`` (:func:`~wass_chat.slurm.submission.plan_new_run`):
        on the cluster's nodes around its running jobs, or on the demo platform, said so, when
        Slurm does not answer; ``estimates="kb"``: on the runtimes the knowledge base's similar
        past runs give (real runs first, :func:`kb.estimates.retrieve_predictions`), as
        ``submit --estimates kb`` plans."""
        from kb.estimates import history_words, retrieve_predictions
        from wass_chat.slurm.commands import SlurmCommands
        from wass_chat.slurm.submission import plan_new_run

        wf = self.sources.workflow(workflow)
        pf, note = self._cluster_platform(platform)
        predictions, said = None, "workflow"
        if estimates == "kb":
            predictions = retrieve_predictions(self.sources.knowledge_base, wf, pf)
            said = history_words(predictions)
        ref = (platform or "slurm").strip().lower()
        live = not note and ref in {"slurm", "from-slurm", "cluster"}  # plan from its jobs
        plan = plan_new_run(
            wf,
            pf,
            scheduler,
            self.settings.runs_dir,
            live=SlurmCommands(timeout=10) if live else None,
            partition=self.settings.slurm_partition,
            network_model=self.network_model,
            predictions=predictions,
            estimates=said,
        )
        facts = self._plan_facts(plan, workflow, platform or ("demo" if note else "slurm"), note)
        if live:
            facts["cluster"] = plan.occupancy.summary(pf)
            facts["busy_jobs"] = plan.busy_lines()
            facts["predicted_start"] = plan.start_lines()
        return dict(facts)

    def _plan_facts(
        self, plan: Any, workflow_ref: str, platform_ref: str, note: str
    ) -> SubmissionPlanFacts:
        """Keep ``plan`` for approval and describe it (:func:`plan_facts`)."""
        self.prepared[plan.run_id] = plan
        return plan_facts(plan, workflow_ref, platform_ref, note)

    def validate_plan_edit(
        self, original: dict[str, Any], edited: dict[str, Any]
    ) -> dict[str, Any]:
        """Accept an edited plan that moves jobs between existing nodes, and nothing else.

        The workflow cannot be swapped; any other change (the scheduler, the partition, a job's
        command or options) would make a plan the person has not seen, so it is refused: reject
        and ask for that plan instead. Moved jobs must name a node of the platform that can host
        the task. Every problem is reported at once.
        """
        problems: list[str] = []
        if edited.get("workflow_ref", original["workflow_ref"]) != original["workflow_ref"]:
            problems.append("an edit cannot change the workflow; reject and submit the other one")
        changed = sorted(
            key
            for key, value in edited.items()
            if key not in ("jobs", "workflow_ref", "edited") and original.get(key) != value
        )
        if changed:
            problems.append(
                f"an edit can only move jobs between nodes, not change {', '.join(changed)}: "
                "reject and ask for the plan you want (a plan nobody saw is never submitted)"
            )
        by_task = {j["task"]: j for j in original["jobs"]}
        for job in edited.get("jobs", []):
            known = by_task.get(str(job.get("task")), {})
            other = sorted(
                k
                for k, v in job.items()
                if k not in ("task", "node") and known and known.get(k) != v
            )
            if other:
                problems.append(
                    f"job {job.get('task')!r}: only its node can be edited, not {', '.join(other)}"
                )
        if problems:
            raise InputError("edited plan", problems)
        wf = self.sources.workflow(original["workflow_ref"])
        pf = self.sources.platform(original.get("platform_ref"))
        moved = {str(j.get("task")): str(j.get("node")) for j in edited.get("jobs", [])}
        planned = {j["task"]: j for j in original["jobs"]}
        for task, node in moved.items():
            if task not in planned:
                problems.append(f"the plan has no task {task!r}")
            elif node not in pf.node_by_name:
                problems.append(f"task {task!r}: platform {pf.name!r} has no node {node!r}")
            elif not node_fits(wf.task_by_id[task], pf.node_by_name[node]):
                problems.append(f"task {task!r} does not fit on node {node!r}")
        if problems:
            raise InputError("edited plan", problems)
        kept = self.prepared.get(original["planned_run_id"])
        if kept is None:
            raise InputError("edited plan", ["this plan is no longer held: ask for it again"])
        from wass_chat.slurm.submission import with_nodes

        edited_plan = with_nodes(kept, moved)
        facts = self._plan_facts(
            edited_plan,
            original["workflow_ref"],
            str(original.get("platform_ref") or ""),
            str(original.get("note") or ""),
        )
        extra = {
            k: v for k, v in original.items() if k in ("cluster", "busy_jobs", "predicted_start")
        }
        return {**dict(facts), **extra, "edited": True}

    def execute_submission(self, plan: dict[str, Any], digest: str) -> dict[str, Any]:
        """Submit the approved plan: the very plan shown (kept by :meth:`prepare_submission`),
        after checking that its digest is the one approved; nothing reaches Slurm otherwise."""
        from wass_chat.runlog import RunLog
        from wass_chat.slurm import commands
        from wass_chat.slurm.plan_digest import submit_approved

        slurm_plan = self.prepared.pop(str(plan.get("planned_run_id")), None)
        if slurm_plan is None:
            raise InputError("submission", ["this plan is no longer held: ask for it again"])
        record = submit_approved(
            slurm_plan, digest, commands.SlurmCommands(), RunLog(self.settings.runs_dir)
        )
        return {"run_id": record.run_id, "job_ids": list(record.job_ids), "state": record.state}

    def run_status(self, run: str | None) -> dict[str, Any]:
        """Per-task state of a run, from the decision log (or the demo run's plan)."""
        recorded = self.sources.run(run)
        log = self.sources.log_of(recorded.run_id)  # a demo run's is the demo home's
        decisions: dict[str, Any] = {}
        note = ""
        if log is not None and (log.runs_dir / f"{recorded.run_id}.json").is_file():
            record = log.get(recorded.run_id)
            if record.job_ids:
                note = _refresh_from_slurm(record, log, lambda: self.sources.knowledge_base)
                record = log.get(recorded.run_id)
            decisions = {d.task: d for d in record.decisions}
        tasks: list[TaskState] = []
        for task_id in recorded.workflow.topological_order:
            d = decisions.get(task_id)
            tasks.append(
                TaskState(
                    task=task_id,
                    node=(d.real_node or d.node) if d else recorded.placements[task_id],
                    state=d.state if d else "SIMULATED",
                    job_id=d.job_id if d else None,
                )
            )
        counts: dict[str, int] = {}
        for t in tasks:
            counts[t["state"]] = counts.get(t["state"], 0) + 1
        facts = RunStatusFacts(
            kind="run_status",
            run_id=recorded.run_id,
            workflow=recorded.workflow.name,
            scheduler=recorded.scheduler,
            state_counts=counts,
            tasks=tasks,
            note=note,
            verdict="",
        )
        facts["verdict"] = run_verdict(facts)
        return dict(facts)

    def cluster_status(
        self, node: str | None = None, partition: str | None = None, time_limit: str | None = None
    ) -> dict[str, Any]:
        """The cluster's nodes and partitions and a verdict on them, or on ``node`` or
        ``partition``: state in words, the reason an admin gave, the jobs holding it, a
        partition's limits (:mod:`wass_chat.slurm.explain.nodes`). Without Slurm, the demo
        platform's nodes, said to be simulated."""
        from wass_chat.slurm import commands
        from wass_chat.slurm.explain.nodes import cluster_status

        try:
            slurm = commands.SlurmCommands(timeout=10)
            return dict(cluster_status(slurm, node, partition=partition, time_limit=time_limit))
        except ServiceUnavailable as exc:
            platform = self.sources.platform("demo")
            nodes = [
                {"name": n.name, "state": "SIMULATED", "cores": n.cores} for n in platform.nodes
            ]
            return {
                "kind": "cluster",
                "source": "demo platform, simulated",
                "verdict": f"{exc.one_line()}. These are the {len(nodes)} simulated nodes of "
                "the demo platform, not a live cluster.",
                "node": node,
                "nodes": nodes,
            }

    def job_why(self, jobid: str | None = None) -> dict[str, Any]:
        """Why a job waits, runs or ended as it did, from Slurm's own sources (verdict first, then
        the quoted evidence, advice checked with ``sbatch --test-only``, the expected start).
        Without ``jobid``: the asker's latest job that ended badly ("why did my job crash?")."""
        from wass_chat.analytics.job_efficiency import efficiency_suggestions
        from wass_chat.slurm.commands import SlurmCommands
        from wass_chat.slurm.explain import asker, explain_job
        from wass_chat.slurm.explain.latest import explain_latest_bad

        commands = SlurmCommands(timeout=15)
        if not jobid:
            return dict(explain_latest_bad(commands, asker(), efficiency_suggestions))
        try:
            return dict(explain_job(commands, jobid, suggestions=efficiency_suggestions))
        except ServiceUnavailable as exc:
            cached = self._cached_job(jobid.strip(), exc.one_line())
            if cached is None:
                raise
            return cached

    def _cached_job(self, jobid: str, why: str) -> dict[str, Any] | None:
        """The job as the imported accounting cache holds it, when Slurm does not answer."""
        import polars as pl

        from wass_chat.sacct.cache import SacctCache
        from wass_chat.slurm.explain.cached import explain_cached

        cache = SacctCache(self.settings.sacct_dir)
        rows = cache.scan().filter(pl.col("job_id") == jobid).collect().to_dicts()
        if not rows:
            return None
        imports = cache.imports()
        imported = imports[-1].imported_at if imports else ""
        return dict(explain_cached(rows[-1], imported, why))

    def queue_overview(
        self, partition: str | None = None, user: str | None = None, account: str | None = None
    ) -> dict[str, Any]:
        """What blocks the pending queue, which partition is congested, who waits longest, what
        runs and whose jobs these are, now; an unknown partition, user or account is refused
        with the nearest names."""
        from wass_chat.slurm.commands import SlurmCommands
        from wass_chat.slurm.explain.queue import queue_overview as overview

        return dict(overview(SlurmCommands(timeout=15), partition, user, account=account))

    def top_waiters(self, period: str = "7d", count: int = 5) -> dict[str, Any]:
        """Users who waited longest over a period, from the cache brought up to date first."""
        from wass_chat.sacct.cache import SacctCache
        from wass_chat.slurm.explain.queue import top_waiters as waiters

        start, end = parse_period(period)
        cache = SacctCache(self.settings.sacct_dir)
        note = refresh_cache(cache, start, end)
        jobs = cache.scan(until=end).collect()
        if start is not None:
            jobs = jobs.filter(jobs["submit"] >= start)
        if end is not None:
            jobs = jobs.filter(jobs["submit"] < end)
        return dict(waiters(jobs, period_in_words(period), count, note))

    def efficiency(
        self,
        jobid: str | None = None,
        period: str = "30d",
        user: str | None = None,
        count: int = 5,
    ) -> dict[str, Any]:
        """One job's efficiency (asked of sacct when the cache lacks it), or a period's."""
        from wass_chat.analytics import efficiency_questions as questions
        from wass_chat.sacct.cache import SacctCache
        from wass_chat.sacct.cache_names import check_filter_names

        cache = SacctCache(self.settings.sacct_dir)
        if jobid is not None:
            jobs, note = _job_frame(cache, jobid)
            return dict(questions.job_facts(jobs, [jobid], note))
        start, end = parse_period(period)
        note = refresh_cache(cache, start, end)
        check_filter_names(cache.scan(), user=user)
        words, scanned = period_in_words(period), cache.scan(until=end)
        facts = questions.period_facts(scanned, start, end, words, user, count, note, cache.scan())
        return dict(facts)

    def gpu_usage(
        self,
        jobid: str | None = None,
        period: str | None = None,
        user: str | None = None,
        count: int = 5,
    ) -> dict[str, Any]:
        """GPU use: running jobs' now (no job, no period), one job's, or a period's waste."""
        from wass_chat.analytics import gpu_questions as questions
        from wass_chat.sacct.cache import SacctCache
        from wass_chat.sacct.cache_names import check_filter_names

        cache = SacctCache(self.settings.sacct_dir)
        if jobid is not None:
            jobs, note = _job_frame(cache, jobid)
            return dict(questions.job_facts(jobs, jobid, note))
        if period is None:
            from wass_chat.analytics.gpu_live import running_gpu_jobs
            from wass_chat.slurm.backend import installed_slurm_version
            from wass_chat.slurm.commands import SlurmCommands

            found = installed_slurm_version()
            version = (found.major, found.minor, found.micro) if found else None
            running = running_gpu_jobs(SlurmCommands(timeout=15), version)
            if user is not None:
                running = [j for j in running if j.user == user]
            limit = self.settings.gpu_idle_cancel_after_min
            return dict(questions.live_facts(running, limit))
        start, end = parse_period(period)
        note = refresh_cache(cache, start, end)
        check_filter_names(cache.scan(), user=user)
        facts = questions.period_facts(
            cache.scan(until=end), start, end, period_in_words(period), user, count, note
        )
        return dict(facts)

    def sacct_summary(self, period: str, user: str | None) -> dict[str, Any]:
        """Accounting statistics of a period from the local sacct cache (analytics area)."""
        from wass_chat.analytics import analysis as analysis_module
        from wass_chat.sacct import cache as cache_module
        from wass_chat.sacct.cache_names import check_filter_names

        start, end = parse_period(period)
        cache = cache_module.SacctCache(self.settings.sacct_dir)
        note = refresh_cache(cache, start, end)
        check_filter_names(cache.scan(), user=user)
        analysis = analysis_module.analyze(cache.scan(until=end), start, end, user)
        summary = analysis.summary.to_dict()
        statistics = {
            k: v
            for k, v in summary.items()
            if isinstance(v, int | float) and not isinstance(v, bool) and k != "jobs"
        }
        facts = SacctSummaryFacts(
            kind="sacct_summary",
            period=analysis.period.label(),
            user=user,
            jobs=summary["jobs"],
            state_counts=summary["state_counts"],
            statistics=statistics,
            insights=[chart.insight for chart in analysis.charts],
            ended_badly=summary["ended_badly"],
            note=note,
            verdict="",
        )
        facts["verdict"] = sacct_verdict(facts)
        return dict(facts)

    def generate_report(self, period: str, format: str, output: str | None) -> dict[str, Any]:
        """Write the audit report of a period (the report area builds it from the sacct cache)."""
        from sim.atomic_files import OutputError
        from wass_chat.report.write import write_report

        start, end = parse_period(period)
        suffix = "html" if format == "html" else "md"
        stem = re.sub(r"[^\w.-]", "_", period) or "all"
        name = output or f"report-{stem}.{suffix}"
        if not re.fullmatch(r"[\w][\w.-]*\.(html|md)", name):
            raise InputError(
                name,
                [
                    "a report is written under the data home's reports/ folder: give "
                    "a plain file name ending in .html or .md, not a path"
                ],
            )
        path = self.settings.home / "reports" / name
        try:
            path.parent.mkdir(parents=True, exist_ok=True)  # the data home's own folder
        except OSError as exc:
            raise OutputError(path, exc) from exc
        files = write_report(
            self.settings.sacct_dir,
            self.settings.runs_dir,
            path,
            format,
            start,
            end,
            # Escape while the report was being built: no file written, as the answer says.
            before_writing=current_work().check,
        )
        return dict(
            ReportFacts(kind="report", path=str(path), files=files, format=format, period=period)
        )


def _refresh_from_slurm(record: Any, log: Any, knowledge_base: Callable[[], Any]) -> str:
    """Update a submitted run's task states from squeue/sacct and, once it has ended, learn it
    into the app's knowledge base (:mod:`wass_chat.learn`); a note if Slurm is away or the
    learning failed."""
    from contextlib import nullcontext

    from wass_chat.learn.learner import refresh_and_learn
    from wass_chat.slurm import commands

    try:
        seen = refresh_and_learn(
            record,
            commands.SlurmCommands(timeout=10),
            log,
            lambda: nullcontext(knowledge_base()),
        )
    except ServiceUnavailable as exc:
        return f"states as last logged: {exc.one_line()}"
    if seen.learn_error:
        return f"not learned into the knowledge base: {seen.learn_error}"
    return seen.learned.line() if seen.learned is not None else ""


def _job_frame(cache: Any, jobid: str) -> tuple[Any, str]:
    """The accounting rows of job ``jobid``: the cache's, or asked of sacct when it lacks them
    (with a note saying so)."""
    from wass_chat.analytics.job_efficiency import jobs_efficiency

    jobs = cache.scan()
    if jobs_efficiency(jobs, [jobid]):
        return jobs, ""
    return _fetch_job(jobid, jobs)


def _fetch_job(jobid: str, cached: Any) -> tuple[Any, str]:
    """A job the cache lacks, from ``sacct -j`` (with a note when Slurm does not answer)."""
    from wass_chat.sacct.fetch import fetch_jobs
    from wass_chat.sacct.parse import parse_sacct_text

    try:
        fetched = parse_sacct_text(fetch_jobs([jobid]), subject="sacct -j").jobs
    except ServiceUnavailable as exc:
        return cached, f"not in the accounting cache, and sacct did not answer: {exc.one_line()}"
    return fetched.lazy(), "read from sacct now (not in the accounting cache)"
