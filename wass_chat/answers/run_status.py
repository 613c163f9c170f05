"""How far a run is (kind ``run_status``): its facts, its verdict and its Markdown."""

from __future__ import annotations

from typing import TypedDict

from wass_chat.agent.safety import literal as lit
from wass_chat.answers.kind import Facts, Kind
from wass_chat.answers.markdown import plain
from wass_chat.slurm.explain.latest import ENDED_BADLY


class TaskState(TypedDict):
    task: str
    node: str
    state: str
    job_id: str | None


class RunStatusFacts(TypedDict):
    """What ``run_status`` returns: each task's node and state."""

    kind: str
    run_id: str
    workflow: str
    scheduler: str
    state_counts: dict[str, int]
    tasks: list[TaskState]
    note: str
    verdict: str


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


def render_run_status(f: Facts) -> str:
    counts = ", ".join(f"{n} {lit(state)}" for state, n in f["state_counts"].items())
    lines = [f"**{plain(f['verdict'])}**", ""] if f.get("verdict") else []
    lines.append(f"Run {lit(f['run_id'])} ({lit(f['workflow'])}, {lit(f['scheduler'])}): {counts}.")
    for t in f["tasks"][:15]:
        job = f" job {lit(t['job_id'])}" if t.get("job_id") else ""
        lines.append(f"- {lit(t['task'])} on {lit(t['node'])}: {lit(t['state'])}{job}")
    if len(f["tasks"]) > 15:
        lines.append(f"- ... and {len(f['tasks']) - 15} more tasks")
    return "\n".join(lines)


KIND = Kind(
    "run_status",
    "each task of a run: its node, its job and its state",
    render_run_status,
    facts=RunStatusFacts,
)
