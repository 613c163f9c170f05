"""The demo's runs are the demo's: how one is recognised, and how a site's log is kept free of them.

The demo runs (``demo-<workflow>-<scheduler>``, see :mod:`wass_chat.agent.facts.demo_runs`) live
in their own decision log under :attr:`Settings.demo_runs_dir <wass_chat.config.Settings>`, which
only the demo reads. Versions before it wrote them into the site's own log (``runs_dir``), so
a site's ``runs``, report and scheduler comparison listed them as if they had run there.

Such a record is recognised by what every demo run carries and no submitted run can: an id with
the demo prefix, no Slurm job, and every decision's evidence naming the demo simulation as its
source. Readers of a site's log skip those records (:func:`site_runs`, :func:`is_demo_record`);
:func:`move_demo_runs_out` moves them into the demo home. Nothing else is ever moved or deleted.
"""

from __future__ import annotations

import os
from pathlib import Path

from sim.errors import InputError, NoSuchName
from wass_chat.runlog import RunLog, RunRecord

DEMO_RUN_PREFIX = "demo-"
DEMO_EVIDENCE_SOURCE = "demo simulation"
"""The ``source`` of every decision of a demo run's evidence: the marker that makes it one."""


def is_demo_record(record: RunRecord) -> bool:
    """Whether ``record`` is a demo run (see the module docstring for the marker)."""
    return (
        record.run_id.startswith(DEMO_RUN_PREFIX)
        and not record.job_ids
        and bool(record.decisions)
        and all(d.evidence.get("source") == DEMO_EVIDENCE_SOURCE for d in record.decisions)
    )


def site_runs(log: RunLog) -> list[RunRecord]:
    """The site's own runs in ``log``, oldest first: every record but a demo run's."""
    if not log.runs_dir.is_dir():
        return []
    return [r for r in log.list_runs() if not is_demo_record(r)]


def site_record(log: RunLog, run_id: str) -> RunRecord:
    """The site's run ``run_id``; a demo run left in the site's log by an earlier version is
    not one (:class:`~sim.errors.NoSuchName`, as for any id the log lacks)."""
    record = log.get(run_id)
    if is_demo_record(record):
        raise NoSuchName(
            "run",
            run_id,
            [r.run_id for r in site_runs(log)],
            f"in {log.runs_dir} (it is a demo run, not a run of this site)",
        )
    return record


def move_demo_runs_out(site_runs_dir: Path, demo_runs_dir: Path) -> list[str]:
    """Move the demo runs an earlier version wrote into the site's log to the demo's; returns
    their ids. Only records carrying the demo marker move (an atomic rename, so a crash leaves
    each in one log or the other); a site's own run, or an unreadable file, stays where it is."""
    if not site_runs_dir.is_dir():
        return []
    site, moved = RunLog(site_runs_dir), []
    for path in sorted(site_runs_dir.glob(f"{DEMO_RUN_PREFIX}*.json")):
        try:
            record = site.get(path.stem)
        except InputError:
            continue  # not ours to judge: readers report it as they always did
        if not is_demo_record(record):
            continue
        demo_runs_dir.mkdir(parents=True, exist_ok=True)
        try:
            os.replace(path, demo_runs_dir / path.name)
        except OSError:  # another process moved it first; or no rename possible: still skipped
            continue
        moved.append(record.run_id)
    return moved
