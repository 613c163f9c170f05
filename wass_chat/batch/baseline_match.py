"""Whether the unchanged replay reproduces the period, before any what-if is believed.

A what-if's difference is the variant's replay minus the baseline's. When the baseline itself
is far from what the cluster did (the record's mean wait 21 min, the replay's 8.7 h), the
difference describes a cluster that is not the site's, however narrow its confidence
interval. So every cluster what-if (``wass-chat whatif cluster``, the chat's, the audit
report's) first compares the unchanged replay's mean wait with the recorded one over the same
jobs:

* within :data:`BASELINE_TOLERANCE` of it (or :data:`BASELINE_FLOOR_S`, for periods whose
  jobs hardly wait), the differences are shown;
* otherwise two calibrations grounded in the record are tried, together, and kept if the
  replay then matches: each node of a cluster inferred from the jobs raised to the most the
  record shows it holding at once (:func:`~wass_chat.batch.cluster_source.with_peak_use`),
  and every job held at least the shortest wait recorded (the site's launch latency);
* if it still does not match, no difference is shown: the answer gives both mean waits and
  says what would let the replay match (the live cluster's description, ``--cluster live``, or
  a platform file). That is an answer, not an error: the command exits 0.

A workload with no recorded start (an SWF trace without waits) cannot be checked: its
differences are shown, marked unchecked.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import polars as pl

from sim.batch.energy import PowerModel
from sim.batch.model import Workload
from wass_chat.analytics.insights import human_duration
from wass_chat.batch.scenario import INFERRED, LoadedScenario
from wass_chat.batch.whatif import Baseline, Changes, Scenario, compare, replay_baseline

BASELINE_TOLERANCE = 0.25
"""The unchanged replay's mean wait may differ from the recorded one by this share of it..."""
BASELINE_FLOOR_S = 30.0
"""...or by this many seconds, whichever is larger (the real-Slurm validation's floor)."""

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class CheckedBaseline:
    """The scenario the what-ifs replay (calibrated when that made it match), its unchanged
    replay, and the check (JSON-ready, ``baseline_check`` in a report)."""

    scenario: Scenario
    baseline: Baseline
    check: dict[str, Any]

    @property
    def matches(self) -> bool:
        return bool(self.check["matches"])


def baseline_gap(rec: dict[str, Any]) -> dict[str, Any]:
    """The recorded and replayed mean waits of ``rec`` (:func:`sim.batch.metrics.agreement`)
    and whether they agree within the tolerance."""
    if not rec.get("jobs"):
        return {"checked": False, "matches": True, "tolerance_pct": 100 * BASELINE_TOLERANCE}
    recorded, replayed = rec["recorded_wait_mean_s"], rec["simulated_wait_mean_s"]
    allowed = max(BASELINE_TOLERANCE * recorded, BASELINE_FLOOR_S)
    return {
        "checked": True,
        "matches": bool(abs(replayed - recorded) <= allowed),
        "jobs": rec["jobs"],
        "recorded_wait_mean_s": recorded,
        "replayed_wait_mean_s": replayed,
        "ratio": replayed / recorded if recorded > 0 else None,
        "allowed_s": allowed,
        "tolerance_pct": 100 * BASELINE_TOLERANCE,
        "floor_s": BASELINE_FLOOR_S,
    }


def checked_baseline(
    loaded: LoadedScenario,
    jobs: pl.DataFrame | None = None,
    progress: Progress | None = None,
) -> CheckedBaseline:
    """Replay ``loaded`` unchanged and check it against the record; calibrate once if it
    misses (``jobs``, the sacct table the cluster was inferred from, gives the peak use)."""
    step = (lambda done, total: progress("baseline", done, total)) if progress else None
    scenario = loaded.scenario
    baseline = replay_baseline(scenario, loaded.power_model, step)
    gap = baseline_gap(baseline.figures["baseline_vs_recorded"])
    check: dict[str, Any] = {**gap, "calibration": [], "cluster": loaded.source.get("cluster")}
    if gap["matches"]:
        return CheckedBaseline(scenario, baseline, check)
    calibrated, steps = calibrate(loaded, jobs)
    if steps:
        step = (lambda done, total: progress("calibrated", done, total)) if progress else None
        again = replay_baseline(calibrated, loaded.power_model, step)
        regap = baseline_gap(again.figures["baseline_vs_recorded"])
        check["calibration"] = steps
        check["calibrated"] = regap
        if regap["matches"]:
            return CheckedBaseline(calibrated, again, {**check, **regap, "calibrated": regap})
    check["missing"] = missing_words(str(loaded.source.get("cluster", "")))
    return CheckedBaseline(scenario, baseline, check)


def calibrate(loaded: LoadedScenario, jobs: pl.DataFrame | None) -> tuple[Scenario, list[str]]:
    """The scenario with the calibrations the record supports, and each one in words."""
    from wass_chat.batch.cluster_source import with_peak_use

    scenario, steps = loaded.scenario, []
    if jobs is not None and loaded.source.get("cluster") == INFERRED:
        cluster, grown = with_peak_use(scenario.cluster, _overlapping(jobs, scenario.workload))
        if grown:
            scenario = replace(scenario, cluster=cluster)
            steps.append(
                f"{grown:,} of {len(cluster.nodes):,} nodes raised to the most the record shows "
                "each holding at once"
            )
    w = scenario.workload
    recorded = w.recorded_start_s >= 0
    independent = recorded & (np.diff(w.dep_ptr) == 0 if len(w.dep_ptr) > 1 else True)
    if independent.any():
        delay = int((w.recorded_start_s - w.earliest_s)[independent].min())
        if delay > 0:
            earliest = np.maximum(w.earliest_s, w.submit_s + delay)
            scenario = replace(scenario, workload=w.replace_columns(earliest_s=earliest))
            steps.append(
                f"every job held at least {delay:,} s after it became eligible, the shortest "
                "recorded"
            )
    return scenario, steps


def _overlapping(jobs: pl.DataFrame, w: Workload) -> pl.DataFrame:
    """The rows of ``jobs`` that ran while the replayed jobs were submitted or ran: the peak
    use is read from them only (a year of accounting would take 20 s; a window, a fraction)."""
    first = int(w.submit_s.min())
    last = int(max(w.recorded_start_s.max(), w.submit_s.max()))
    start = pl.col("start").dt.epoch("s")  # naive times as epochs, as the workload reads them
    ran_until = pl.coalesce(pl.col("end").dt.epoch("s"), start + pl.col("elapsed_s").fill_null(0))
    return jobs.filter((start <= last) & (ran_until >= first))


def missing_words(cluster: str) -> str:
    """What the replay lacks to reproduce the period, by where its cluster came from."""
    if cluster == INFERRED:
        return (
            "the cluster's real description: run on the cluster with --cluster live (scontrol), "
            "or give a platform file (--cluster FILE.yaml) with its nodes and partitions"
        )
    if cluster.startswith("live"):
        return (
            "a cluster as it was in the period: the live one may have changed since, and the "
            "replay does not model QOS or association limits, reservations or preemption; "
            "a platform file (--cluster FILE.yaml) can describe it as it was"
        )
    return (
        "the site's machine and scheduler as they were: a platform file (--cluster FILE.yaml) "
        "with its nodes and partitions"
    )


def checked_compare(
    loaded: LoadedScenario,
    changes: Changes,
    jobs: pl.DataFrame | None = None,
    power_model: PowerModel | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """:func:`~wass_chat.batch.whatif.compare` behind the baseline check: the variant is
    replayed, and the difference given, only when the unchanged replay matches the record.
    ``baseline_check`` says how it went; without a match the report has no ``variant`` and no
    ``difference``. The check is of every job of the period: when a change leaves jobs out
    (too big for the changed cluster) both runs lose them, and their baseline no longer
    compares with the record, which had them; the report says so (``left_out_...``)."""
    checked = checked_baseline(loaded, jobs, progress)
    if checked.matches:
        report = compare(
            checked.scenario,
            changes,
            power_model or loaded.power_model,
            progress,
            baseline=checked.baseline,
        )
    else:
        report = {"changes": changes.labels(), **checked.baseline.figures}
    report["baseline_check"] = checked.check
    return report


def unmatched_words(check: dict[str, Any], changes: list[str]) -> list[str]:
    """Why no difference is shown: the unchanged replay against the record, the calibration
    tried, and what is missing (the command, the chat and the report say the same)."""
    recorded, replayed = check["recorded_wait_mean_s"], check["replayed_wait_mean_s"]
    ratio = f"{check['ratio']:.1f}x the record" if check.get("ratio") else "the record has none"
    lines = [
        f"The unchanged replay waits {human_duration(replayed)} on average, the record "
        f"{human_duration(recorded)} ({ratio}, over {check['jobs']:,} jobs): more than "
        f"{check['tolerance_pct']:.0f}% apart, so the replay is not this site and no "
        "difference is given" + (f" for {'; '.join(changes)}" if changes else "") + "."
    ]
    calibrated = check.get("calibrated")
    if check.get("calibration") and calibrated:
        lines.append(
            "Calibrated from the record (" + "; ".join(check["calibration"]) + "), the replay "
            f"waits {human_duration(calibrated['replayed_wait_mean_s'])} on average: still "
            "outside the tolerance."
        )
    lines.append(f"What is missing: {check['missing']}.")
    return lines


def matched_words(check: dict[str, Any]) -> str:
    """The check, when the differences are shown: how close, and any calibration used."""
    if not check.get("checked"):
        return "No recorded starts: the baseline could not be checked against the record."
    replayed = human_duration(check["replayed_wait_mean_s"])
    words = (
        f"Baseline check: the unchanged replay waits {replayed}"
        f" on average, the record {human_duration(check['recorded_wait_mean_s'])} (within "
        f"{check['tolerance_pct']:.0f}%)"
    )
    if check.get("calibration"):
        words += ", once calibrated from the record (" + "; ".join(check["calibration"]) + ")"
    return words + "."
