"""A job explained from the imported accounting cache, for when Slurm does not answer.

The cache (:mod:`wass_chat.sacct.cache`) holds what sacct said at import time. Its row is
turned back into sacct's fields so the same explainers run on it; the answer says that it
comes from the cache, when that import was made, and why Slurm was not asked.

Only a job that had ended by the import is explained so: its ending cannot change. A job the
import saw pending or running may have started, moved or ended since, and its reason then
(``None`` for a job sacct saw before the scheduler set one) is no answer to "why is it pending?":
for it :func:`explain_cached` raises :class:`~sim.errors.ServiceUnavailable`, whose one line says
why Slurm was not asked and, plainly as history, how the job stood at the last import.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sim.errors import ServiceUnavailable
from wass_chat.slurm.explain.ended import finished
from wass_chat.slurm.explain.model import JobWhyFacts
from wass_chat.slurm.formats import slurm_clock
from wass_chat.slurm.live import Quoted, Snapshot
from wass_chat.slurm.reasons import classify

_TEXT = {
    "JobID": "job_id",
    "JobName": "job_name",
    "User": "user",
    "Account": "account",
    "Partition": "partition",
    "QOS": "qos",
    "NodeList": "node_list",
    "Flags": "flags",
    "Reason": "reason",
    "Comment": "comment",
    "State": "state",
}
_TIMES = {"Submit": "submit", "Eligible": "eligible", "Start": "start", "End": "end"}
LIVE_STATES = frozenset(
    {
        "PENDING",
        "RUNNING",
        "SUSPENDED",
        "CONFIGURING",
        "COMPLETING",
        "REQUEUED",
        "RESIZING",
        "REQUEUE_HOLD",
        "REQUEUE_FED",
        "SIGNALING",
        "STAGE_OUT",
        "STOPPED",
    }
)
"""States a job leaves on its own: the cache's copy of them is history, not the job's state."""


def as_sacct(row: dict[str, Any]) -> dict[str, str]:
    """A cached row as sacct's ``-P`` fields (what :class:`Snapshot.accounting` holds)."""
    fields = {name: str(row.get(column) or "") for name, column in _TEXT.items()}
    for name, column in _TIMES.items():
        value = row.get(column)
        fields[name] = value.isoformat(timespec="seconds") if isinstance(value, datetime) else ""
    fields["Elapsed"] = slurm_clock(row.get("elapsed_s"))
    fields["Timelimit"] = slurm_clock(row.get("timelimit_s"))
    fields["ExitCode"] = f"{row.get('exit_status') or 0}:{row.get('exit_signal') or 0}"
    fields["NCPUS"] = str(row.get("ncpus") or "")
    fields["NNodes"] = str(row.get("nnodes") or "")
    mem = row.get("req_mem_bytes")
    fields["ReqMem"] = f"{int(mem) // 2**20}M" if mem else ""
    return fields


def explain_cached(row: dict[str, Any], imported_at: str, why: str) -> JobWhyFacts:
    """Why a cached job ended as it did; :class:`~sim.errors.ServiceUnavailable` (one line:
    ``why``, then how the import saw the job) for a job that had not ended by the import."""
    from wass_chat.slurm.explain import facts_of

    snap = Snapshot(job_id=str(row["job_id"]), now=datetime.now(), accounting=as_sacct(row))
    note = f"from the accounting cache imported {imported_at or 'earlier'}; Slurm: {why}"
    entry = classify(snap.state)
    if snap.state in LIVE_STATES:
        when = f"the last import at {imported_at}" if imported_at else "the last import"
        raise ServiceUnavailable(
            f"{why.rstrip('.')}. As of {when}, job {snap.job_id} was {snap.state.lower()} "
            f"(reason {snap.get('Reason') or 'None'}): that is history, not how it stands now"
        )
    out = finished(snap, None, entry.klass)
    out.quote(Quoted("wass-chat sacct cache", "imported", imported_at))
    facts = facts_of(snap, snap.state, entry.klass, entry.meaning, out)
    facts["source"] = "cache"
    facts["note"] = note
    return facts
