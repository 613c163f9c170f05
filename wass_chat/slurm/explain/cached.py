"""A job explained from the imported accounting cache, for when Slurm does not answer.

The cache (:mod:`wass_chat.sacct.cache`) holds what sacct said at import time. Its row is
turned back into sacct's fields so the same explainers run on it; the answer says that it
comes from the cache, when that import was made, and why Slurm was not asked.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from wass_chat.slurm.explain.ended import finished
from wass_chat.slurm.explain.model import Explanation, JobWhyFacts
from wass_chat.slurm.live import Quoted, Snapshot
from wass_chat.slurm.reasons import classify

_TEXT = {"JobID": "job_id", "JobName": "job_name", "User": "user", "Account": "account",
         "Partition": "partition", "QOS": "qos", "NodeList": "node_list", "Flags": "flags",
         "Reason": "reason", "Comment": "comment", "State": "state"}  # fmt: skip
_TIMES = {"Submit": "submit", "Eligible": "eligible", "Start": "start", "End": "end"}


def _clock_text(seconds: Any) -> str:
    if seconds is None:
        return ""
    s = int(seconds)
    return f"{s // 86400}-{s % 86400 // 3600:02d}:{s % 3600 // 60:02d}:{s % 60:02d}"


def as_sacct(row: dict[str, Any]) -> dict[str, str]:
    """A cached row as sacct's ``-P`` fields (what :class:`Snapshot.accounting` holds)."""
    fields = {name: str(row.get(column) or "") for name, column in _TEXT.items()}
    for name, column in _TIMES.items():
        value = row.get(column)
        fields[name] = value.isoformat(timespec="seconds") if isinstance(value, datetime) else ""
    fields["Elapsed"] = _clock_text(row.get("elapsed_s"))
    fields["Timelimit"] = _clock_text(row.get("timelimit_s"))
    fields["ExitCode"] = f"{row.get('exit_status') or 0}:{row.get('exit_signal') or 0}"
    fields["NCPUS"] = str(row.get("ncpus") or "")
    fields["NNodes"] = str(row.get("nnodes") or "")
    mem = row.get("req_mem_bytes")
    fields["ReqMem"] = f"{int(mem) // 2**20}M" if mem else ""
    return fields


def explain_cached(row: dict[str, Any], imported_at: str, why: str) -> JobWhyFacts:
    """Why a cached job ended as it did (or how it stood when last imported)."""
    from wass_chat.slurm.explain import facts_of

    snap = Snapshot(job_id=str(row["job_id"]), now=datetime.now(), accounting=as_sacct(row))
    note = f"from the accounting cache imported {imported_at or 'earlier'}; Slurm: {why}"
    entry = classify(snap.state)
    if snap.state in {"PENDING", "RUNNING"}:
        out = Explanation(
            f"Job {snap.job_id} was {snap.state.lower()} (reason {snap.get('Reason') or 'None'}) "
            f"when accounting was last imported; Slurm cannot be asked how it stands now."
        )
        out.quote(snap.quote("State"), snap.quote("Reason"))
    else:
        out = finished(snap, None, entry.klass)
    out.quote(Quoted("wass-chat sacct cache", "imported", imported_at))
    facts = facts_of(snap, snap.state, entry.klass, entry.meaning, out)
    facts["source"] = "cache"
    facts["note"] = note
    return facts
