"""Who stored a case, and whether its figures are possible at all.

A shared store is written by many users; a case it returns is cited in explanations and used
as a runtime estimate, so a forged one (a makespan no schedule can reach) must be refused
when it is written, and every case says who wrote it (``written_by``) and from what
(``source``: the simulator, ``slurm:<run id>``, an import)."""

from __future__ import annotations

import getpass
import socket
from dataclasses import replace

from kb.records import CaseRecord, is_real
from sim.errors import InputError
from sim.metrics import critical_path_bound

MEASURED_SOURCES = ("simulated-realised",)
"""Sources (besides real runs) whose workflow carries the user's runtime requests while the
makespan comes from realised runtimes (:data:`kb.estimates.REALISED`): a run may well beat
the bound of the requests, so they are not checked against it."""
BOUND_SLACK = 1e-6
"""Relative slack under the critical-path bound (float noise of the simulator's clock)."""


class ImplausibleCase(InputError):
    """A case whose makespan is below what its own workflow and platform allow."""


def source_kind(source: str) -> str:
    """What a case came from, without its details: ``slurm`` for ``slurm:<run id>``,
    otherwise the source itself (``simulated``, ``simulated-realised``)."""
    return source.split(":", 1)[0]


def writer() -> str:
    """``user@host`` of this process: who a case written now was written by."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no passwd entry (a container's arbitrary uid)
        user = "unknown"
    return f"{user}@{socket.gethostname()}"


def signed(case: CaseRecord, by: str) -> CaseRecord:
    """``case`` with its writer recorded (a case that names one keeps it: a merge or an
    import rewrites a case without changing who first wrote it)."""
    return case if case.written_by else replace(case, written_by=by)


def check_plausible(case: CaseRecord) -> None:
    """Refuse a simulated or imported case whose makespan beats the critical-path bound
    (the longest dependency chain at the fastest nodes, communication free): no schedule
    can, so the figure is forged or broken.

    Real runs and realised histories are exempt: their tasks' measured times may differ from
    the workflow's declared work (:mod:`wass_chat.learn` checks real runs against sacct)."""
    if is_real(case.source) or case.source in MEASURED_SOURCES:
        return
    makespan = case.metrics.makespan
    try:
        bound = critical_path_bound(case.workflow, case.platform)
    except ValueError as exc:  # a task that fits no node: the case cannot have run there
        raise ImplausibleCase(f"case {case.case_id}", [str(exc)]) from exc
    if makespan < bound * (1 - BOUND_SLACK):
        raise ImplausibleCase(f"case {case.case_id}", [
            f"its makespan {makespan:.1f} s is below the critical-path bound {bound:.1f} s of"
            f" {case.workflow.name} on {case.platform.name}: no schedule can be that fast"
        ])  # fmt: skip
