"""What became of an approved or rejected plan (kind ``submission_outcome``): the Markdown."""

from __future__ import annotations

from wass_chat.agent.safety import literal as lit
from wass_chat.answers.kind import Facts, Kind


def render_submission_outcome(f: Facts) -> str:
    if not f.get("executed"):
        return "The submission was rejected; nothing was sent to the cluster."
    jobs = f.get("job_ids", [])
    return (
        f"Submitted run {lit(f.get('run_id', '?'))}: {len(jobs)} jobs "
        f"({', '.join(lit(j) for j in jobs[:10])}{', ...' if len(jobs) > 10 else ''})."
    )


KIND = Kind(
    "submission_outcome",
    "a plan submitted (its jobs) or rejected",
    render_submission_outcome,
)
