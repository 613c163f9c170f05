"""Who waits longest (kind ``waiters``): the Markdown."""

from __future__ import annotations

from wass_chat.agent.safety import MAX_NOTE
from wass_chat.agent.safety import literal as lit
from wass_chat.answers.kind import Facts, Kind
from wass_chat.answers.markdown import plain
from wass_chat.slurm.explain.ended import duration
from wass_chat.slurm.explain.phrases import jobs
from wass_chat.slurm.explain.queue import WaitersFacts


def render_waiters(f: Facts) -> str:
    lines = [f"**{plain(f['verdict'])}**"]
    if f["users"]:
        lines += ["", f"**Median wait by user** ({f['jobs']} jobs that started, from sacct):"]
        lines += [
            f"- {lit(u['user'])}: median {duration(u['median_wait_s'])}, longest "
            f"{duration(u['max_wait_s'])} (job {lit(u['longest_job'])}), {jobs(u['jobs'])}"
            for u in f["users"]
        ]
    if f.get("note"):
        lines += ["", f"_{lit(f['note'], MAX_NOTE)}_"]
    return "\n".join(lines)


KIND = Kind(
    "waiters",
    "the median and longest wait of each user, from sacct",
    render_waiters,
    facts=WaitersFacts,
)
