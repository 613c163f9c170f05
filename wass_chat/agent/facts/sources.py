"""Where the agent's facts come from: workflows, platforms, runs and the knowledge base.

One place resolves the references people type ("montage.json", "montage", "demo", a run id)
into model objects, so every tool and both chat modes agree on what a name means:

* workflow: a run id (its workflow), a file path (WfFormat JSON), a file under
  ``$WASS_HOME/workflows``, or the name of a bundled demo workflow (``montage.json`` -> montage);
* platform: ``demo`` (default), a platform file, or ``slurm`` (the cluster's nodes);
* run: an id in the site's decision log (:mod:`wass_chat.runlog`), or a demo run
  (``demo-<workflow>-<scheduler>``): from the demo home's own log, else planned and simulated
  on demand, deterministically. A demo run is never read from, or counted in, the site's log
  (:mod:`wass_chat.demo_home`). With no run named, the site's most recent run is meant; the
  first demo run stands in only where no Slurm controller answers (the demo): on a live
  cluster without a run of its own, :class:`NoSiteRun` says so instead.
"""

from __future__ import annotations

import threading
from functools import cached_property
from pathlib import Path
from typing import Any

from policy.registry import canonical_name, scheduler_names
from sim.errors import InputError, UnknownName
from sim.model import Platform, Workflow
from wass_chat.agent.cancellation import current_work
from wass_chat.agent.facts.counterfactual import RecordedRun
from wass_chat.agent.facts.kb_build import build_demo_kb, stored_cases
from wass_chat.config import Settings
from wass_chat.demo_home import DEMO_RUN_PREFIX, is_demo_record, site_runs
from wass_chat.runlog import RunLog

DEMO_SCHEDULER = "heft"


def _is_file(path: Path) -> bool:
    """Whether ``path`` is a file; a name no file can have (longer than the system allows, a
    NUL byte: what a model may write as an argument) is none, not an error."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


class UnknownReference(InputError):
    """A workflow, platform or run name that resolves to nothing."""

    kind = "reference"


class NoSiteRun(InputError):
    """No run was named, the site has none of its own, and a live cluster answers: the demo's
    runs do not stand in for the site's (issue #41: "what is the backfill scheduler doing?" on
    a busy cluster got a placement story about a demo run, on nodes the cluster does not have)."""

    kind = "run"

    def one_line(self, limit: int = 5) -> str:  # type: ignore[override]
        return "; ".join(self.problems[:limit])


def _cluster_answers() -> bool:
    """Whether a Slurm controller answers here (the cached check every Slurm command makes)."""
    from wass_chat.slurm.availability import SlurmAway, ensure_slurm

    try:
        ensure_slurm("sinfo", needs_controller=True)
    except SlurmAway:
        return False
    return True


class Sources:
    """Resolves references for one settings object; caches what it loads."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._runs: dict[str, RecordedRun] = {}
        self._kb: Any | None = None
        self._kb_lock = threading.Lock()

    # --- workflows and platforms ---------------------------------------------------------
    def demo_workflow_names(self) -> tuple[str, ...]:
        from sim import demo

        names: tuple[str, ...] = demo.demo_workflow_names()
        return names

    def workflow(self, ref: str) -> Workflow:
        """The workflow ``ref`` names (run id, file, file under the data home, demo name)."""
        ref = ref.strip()
        if ref.startswith(DEMO_RUN_PREFIX) or ref.startswith("run-"):
            return self.run(ref).workflow
        from sim.wfformat import read_workflow

        for candidate in (Path(ref).expanduser(), self.settings.home / "workflows" / ref):
            if _is_file(candidate):
                return read_workflow(candidate)
        stem = Path(ref.removeprefix("demo:")).name.removesuffix(".json").lower()
        names = self.demo_workflow_names()
        matches = [n for n in names if n == stem] or [n for n in names if n.startswith(stem + "-")]
        if matches:
            from sim import demo

            workflow: Workflow = demo.demo_workflow(matches[0])
            return workflow
        where = "(no such file, here or under the data home's workflows, nor demo workflow)"
        raise UnknownName("workflow", ref, names, where)

    def platform(self, ref: str | None = None) -> Platform:
        """``demo`` (default), a platform file, or ``slurm`` for the cluster's own nodes."""
        if ref is None or ref.strip().lower() in {"", "demo"}:
            from sim import demo

            platform: Platform = demo.demo_platform()
            return platform
        if ref.strip().lower() in {"slurm", "from-slurm", "cluster"}:
            from wass_chat.slurm import commands, nodes

            found = nodes.platform_from_slurm(
                commands.SlurmCommands(timeout=10), self.settings.slurm_partition
            )
            platform = found.platform
            return platform
        path = Path(ref).expanduser()
        if not _is_file(path):
            raise UnknownReference(ref, [f"no platform file {ref!r} (or use 'demo', 'slurm')"])
        from sim.platforms import load_platform

        return load_platform(path)

    # --- runs ------------------------------------------------------------------------------
    @cached_property
    def run_log(self) -> RunLog:
        """The site's decision log of submitted runs."""
        return RunLog(self.settings.runs_dir)

    @cached_property
    def demo_log(self) -> RunLog:
        """The demo's own decision log, under the demo home (read only for demo run ids)."""
        return RunLog(self.settings.demo_runs_dir)

    def log_of(self, run_id: str) -> RunLog:
        """The decision log ``run_id`` belongs to: the site's, or the demo's for a demo run."""
        if run_id.startswith(DEMO_RUN_PREFIX) and not self._site_has(run_id):
            return self.demo_log
        return self.run_log

    def _site_has(self, run_id: str) -> bool:
        """Whether the site's log holds ``run_id`` as one of its own runs (not a demo run an
        earlier version wrote there)."""
        if not _is_file(self.run_log.path(run_id)):
            return False
        return not is_demo_record(self.run_log.get(run_id))

    def run(self, run_id: str | None = None) -> RecordedRun:
        """The run ``run_id`` (default: the most recent one; the demo run if there is none)."""
        if run_id is None:
            run_id = self.latest_run_id()
        if run_id in self._runs:
            return self._runs[run_id]
        if self._site_has(run_id):
            run = run_from_record(self.run_log.get(run_id))
        elif run_id.startswith(DEMO_RUN_PREFIX) and self.demo_log.path(run_id).is_file():
            run = run_from_record(self.demo_log.get(run_id))
        elif run_id.startswith(DEMO_RUN_PREFIX):
            run = self._demo_run(run_id)
        else:
            # A site's run mistyped is compared with the site's runs only: the demo's 70-odd
            # runs are not the site's and would bury them ("Runs: demo-genomics-49-heft, ...").
            site = [str(r.run_id) for r in site_runs(self.run_log)]
            raise UnknownName("run", run_id, site, f"in {self.settings.runs_dir}")
        self._runs[run_id] = run
        return run

    def known_run_ids(self) -> list[str]:
        """The site's runs, then every demo run (each demo workflow by each scheduler):
        what an unknown run id is compared with to offer the nearest."""
        demos = [demo_run_id(w, s) for w in self.demo_workflow_names() for s in scheduler_names()]
        return [*(str(r.run_id) for r in site_runs(self.run_log)), *demos]

    def latest_run_id(self) -> str:
        """The site's most recent submitted run, else the first demo run, unless a live cluster
        answers: a site's question is never answered with the demo's run (:class:`NoSiteRun`)."""
        real = site_runs(self.run_log)
        if real:
            return str(max(real, key=lambda r: (r.created, r.run_id)).run_id)
        demo = demo_run_id(self.demo_workflow_names()[0], DEMO_SCHEDULER)
        if _cluster_answers():
            raise NoSiteRun(
                "(none named)",
                [
                    "no run of this site to answer from: wass-chat has submitted no workflow "
                    "here yet, and the demo's runs answer only when named (e.g. "
                    f"{demo}). Ask about the cluster instead (/queue, /why JOB, /status, "
                    "/whatif-cluster), or submit a workflow (/submit WORKFLOW)"
                ],
            )
        return demo

    def _demo_run(self, run_id: str) -> RecordedRun:
        from wass_chat.agent.facts.whatif import run_scheduler

        body = run_id.removeprefix(DEMO_RUN_PREFIX)
        # Both parts may hold dashes (montage-60, rag-guarded): the workflow is a known name.
        named = [n for n in self.demo_workflow_names() if body.startswith(n + "-")]
        if not named:
            raise UnknownName("run", run_id, self.known_run_ids())
        workflow_name = max(named, key=len)
        scheduler = body.removeprefix(workflow_name + "-")
        try:
            canonical_name(scheduler)
        except UnknownName:
            raise UnknownName("run", run_id, self.known_run_ids()) from None
        workflow, platform = self.workflow(workflow_name), self.platform("demo")
        result = run_scheduler(workflow, platform, scheduler, self.settings.network_model)
        return RecordedRun(
            run_id=run_id,
            workflow=workflow,
            platform=platform,
            scheduler=result.scheduler,
            placements=result.placements,
            start_times={r.task: r.start for r in result.tasks},
            makespan=result.makespan,
            source="demo (simulated)",
        )

    # --- knowledge base --------------------------------------------------------------------
    @property
    def knowledge_base(self) -> Any:
        """The knowledge base under WASS_HOME, or the site's Chroma server when the settings
        say ``chroma_mode = "http"``, opened once and shared by every worker thread.

        An empty local one is first filled with the shipped demo store (unpacked all or nothing,
        in milliseconds, see :mod:`wass_chat.agent.facts.kb_build`); a served one is the site's
        own."""
        work = current_work()
        while not self._kb_lock.acquire(timeout=0.2):  # another thread opens or builds it
            work.check()
        try:
            if self._kb is None:
                from wass_chat.learn.site_kb import open_kb
                from wass_chat.slurm.commands import SlurmCommands

                local = self.settings.chroma_mode != "http"
                if local and stored_cases(self.settings.kb_dir) == 0:
                    build_demo_kb(self.settings.kb_dir, work)
                sacct = SlurmCommands(timeout=15)  # confirms a learned run before it is stored
                self._kb = open_kb(self.settings, accounting=sacct)
            return self._kb
        finally:
            self._kb_lock.release()


def demo_run_id(workflow: str, scheduler: str) -> str:
    """The id of the demo run of ``workflow`` planned by ``scheduler``."""
    return f"{DEMO_RUN_PREFIX}{workflow}-{scheduler}"


def run_from_record(record: Any) -> RecordedRun:
    """A decision-log :class:`~wass_chat.runlog.RunRecord` as a re-simulatable run."""
    from sim.platforms import platform_from_dict
    from sim.wfformat import read_workflow, workflow_from_dict

    doc = record.workflow
    workflow = (
        read_workflow(doc) if isinstance(doc, str) else workflow_from_dict(doc, record.run_id)
    )
    decisions = record.decisions
    return RecordedRun(
        run_id=record.run_id,
        workflow=workflow,
        platform=platform_from_dict(record.platform, subject=record.run_id),
        scheduler=record.scheduler,
        placements={d.task: d.real_node or d.node for d in decisions},
        start_times={d.task: d.planned_start for d in decisions},
        makespan=float(record.planned_makespan or 0.0),
        source=record.state,
        planned_on=record.planned_on,
    )
