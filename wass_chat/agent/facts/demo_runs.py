"""Demo runs in the demo's own decision log, so there is a run to explain before any real one.

:func:`ensure_demo_runs` plans each bundled demo workflow with a scheduler on the demo platform,
simulates it, and records the run and every placement decision under a fixed id
(``demo-<workflow>-<scheduler>``) in the demo home's log (``Settings.demo_runs_dir``), never in
the site's: a site's ``runs``, reports and explanations do not see them
(:mod:`wass_chat.demo_home`). Demo runs an earlier version wrote into the site's log are moved
to the demo's first. It is idempotent: existing demo runs are kept.
"""

from __future__ import annotations

from collections.abc import Sequence

from sim.platforms import platform_to_dict
from sim.wfformat import workflow_to_dict
from wass_chat.agent.facts.counterfactual import RecordedRun
from wass_chat.agent.facts.sources import DEMO_SCHEDULER, Sources, demo_run_id
from wass_chat.config import Settings
from wass_chat.demo_home import DEMO_EVIDENCE_SOURCE, move_demo_runs_out
from wass_chat.runlog import Decision, RunLog


def ensure_demo_runs(
    settings: Settings,
    workflows: Sequence[str] | None = None,
    scheduler: str = DEMO_SCHEDULER,
) -> list[str]:
    """Record a demo run per demo workflow (default: all) if missing; returns their ids."""
    move_demo_runs_out(settings.runs_dir, settings.demo_runs_dir)
    sources = Sources(settings)
    log = RunLog(settings.demo_runs_dir)
    ids = []
    for name in workflows or sources.demo_workflow_names():
        run_id = demo_run_id(name, scheduler)
        ids.append(run_id)
        if log.path(run_id).is_file():
            continue
        run = sources.run(run_id)  # planned and simulated on demand (see Sources)
        decisions = tuple(
            Decision(
                task=task,
                node=run.placements[task],
                planned_start=run.start_times[task],
                planned_end=_end(run, task),
                evidence={"source": DEMO_EVIDENCE_SOURCE, "scheduler": run.scheduler},
                state="SIMULATED",
            )
            for task in run.workflow.topological_order
        )
        log.create(
            workflow_name=run.workflow.name,
            workflow=workflow_to_dict(run.workflow),
            platform=platform_to_dict(run.platform),
            scheduler=run.scheduler,
            planned_makespan=run.makespan,
            decisions=decisions,
            run_id=run_id,
        )
    return ids


def _end(run: RecordedRun, task: str) -> float:
    """Planned end of ``task``: start plus its runtime on its node (the model is exact)."""
    node = run.platform.node_by_name[run.placements[task]]
    t = run.workflow.task_by_id[task]
    return run.start_times[task] + t.work / (node.speed * t.cores)
