"""Verdicts of the cluster's answers that are not about one job or one node: how far a run
is, and what an accounting period looked like. One or two plain sentences computed from the
facts, put first in the answer (offline) and handed to the model with the facts (online).

(Jobs: :mod:`wass_chat.slurm.explain`; nodes: :mod:`wass_chat.slurm.explain.nodes`;
simulations and placements: :mod:`wass_chat.agent.facts.verdicts`.)
"""

from __future__ import annotations

from wass_chat.agent.facts.fact_kinds import RunStatusFacts, SacctSummaryFacts
from wass_chat.slurm.explain.ended import duration
from wass_chat.slurm.explain.latest import ENDED_BADLY


def run_verdict(f: RunStatusFacts) -> str:
    """How far a run is, in one or two sentences: a plan never submitted says so; a submitted
    run counts its jobs by state and names the first that ended badly (to ask ``/why`` about)."""
    total, counts = len(f["tasks"]), f["state_counts"]
    if counts.get("SIMULATED") == total:
        return (
            f"Run {f['run_id']} is a simulated plan ({f['workflow']} by {f['scheduler']}), "
            f"never submitted to Slurm: its {total} tasks have no job state."
        )
    done = counts.get("COMPLETED", 0)
    others = ", ".join(
        f"{n} {state.lower()}" for state, n in sorted(counts.items()) if state != "COMPLETED"
    )
    words = f"Run {f['run_id']}: {done} of {total} jobs completed" + (
        f", {others}." if others else "; the run is finished."
    )
    bad = next((t for t in f["tasks"] if t["state"].split()[0] in ENDED_BADLY), None)
    if bad is not None:
        job = f"job {bad['job_id']}" if bad["job_id"] else "its job"
        words += f" Task {bad['task']} ({job}, on {bad['node']}) ended {bad['state'].lower()}."
    return words


def sacct_verdict(f: SacctSummaryFacts) -> str:
    """Jobs and users of the period, the queue wait (median and p90), the failure rate and how
    loose walltime requests were: what a sysadmin asks "how busy was the cluster?" for."""
    stats = f["statistics"]
    who = f" of user {f['user']}" if f["user"] else ""
    if not f["jobs"]:
        return f"No jobs{who} in the accounting cache for {f['period']}."
    users = int(stats.get("users", 0))
    words = f"{f['jobs']:,} jobs{who} ({f['period']})" + (
        f" from {users:,} users" if users > 1 else ""
    )
    if "wait_median_s" in stats:
        words += (
            f": half waited under {duration(stats['wait_median_s'])} to start, 90% under "
            f"{duration(stats['wait_p90_s'])}"
        )
    words += "."
    if "failure_rate" in stats:
        words += f" {100 * stats['failure_rate']:.1f}% of finished jobs failed"
        if "over_request_ratio" in stats:
            words += (
                f"; completed jobs asked for {stats['over_request_ratio']:.1f}x the walltime "
                "they used"
            )
        words += "."
    return words
