"""Whole-cluster what-ifs: the same workload replayed before and after one or more changes.

Changes: nodes added to or removed from a partition, a partition's MaxTime, the priority
weights, another scheduler (fifo, sjf, priority, easy, slurm), walltimes predicted from each
user's history (:mod:`wass_chat.batch.predict`, its accuracy reported), and power saving
(idle nodes off after N minutes, with a boot time). Both runs are simulated; the replay is
deterministic, so the before/after difference is exact for this workload. The baseline is
also compared with the starts the trace recorded (``baseline_vs_recorded``): how far the
simulated cluster is from the real one before anything changes. The confidence
interval printed with the mean-wait difference is a paired bootstrap over jobs: how much the
difference depends on which jobs the period happened to hold, not simulation noise.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from sim.batch.config import PowerSaving, SchedulerConfig, scheduler_preset
from sim.batch.energy import PowerModel, recorded_energy
from sim.batch.engine import simulate_batch, unfit_jobs
from sim.batch.metrics import agreement, summarise
from sim.batch.model import BatchCluster, Workload
from sim.batch.result import BatchResult
from sim.errors import InputError
from wass_chat.batch.cluster_source import add_nodes, remove_nodes, set_max_time
from wass_chat.batch.predict import accuracy, predicted_runtimes

Progress = Callable[[int, int], None]
WEIGHT_KEYS = ("age", "fairshare", "job_size", "partition", "qos", "estimate")
AGE_ONLY_WEIGHTS = "age=1000,fairshare=0,job_size=0,partition=0,qos=0"
"""A queue ordered by age alone (FIFO-like): the weights the chat and the report try."""


@dataclass(frozen=True)
class Changes:
    """What differs in the variant; the default changes nothing."""

    add_nodes: tuple[tuple[str, int], ...] = ()
    remove_nodes: tuple[tuple[str, int], ...] = ()
    max_time: tuple[tuple[str, int], ...] = ()
    weights: tuple[tuple[str, int], ...] = ()
    scheduler: str | None = None
    predict_walltime: bool = False
    power_off_after_s: int | None = None
    boot_s: int = 300

    def labels(self) -> list[str]:
        out = [f"+{n} nodes in {p}" for p, n in self.add_nodes]
        out += [f"-{n} nodes in {p}" for p, n in self.remove_nodes]
        out += [f"{p} MaxTime {s / 3600:g} h" for p, s in self.max_time]
        out += [f"weight {k}={v}" for k, v in self.weights]
        out += [f"scheduler {self.scheduler}"] if self.scheduler else []
        out += ["walltimes predicted from user history"] if self.predict_walltime else []
        if self.power_off_after_s is not None:
            out.append(
                f"idle nodes off after {self.power_off_after_s / 60:g} min (boot {self.boot_s} s)"
            )
        return out


def parse_pairs(
    values: Sequence[str], option: str, scale: float = 1.0
) -> tuple[tuple[str, int], ...]:
    """``PART:N`` items (``N`` times ``scale``); every bad item is reported at once."""
    pairs, problems = [], []
    for value in values:
        name, sep, number = value.rpartition(":")
        try:
            amount = float(number)
        except ValueError:
            amount = -1.0
        if not sep or not name or amount < 0:
            problems.append(f"{option} takes PARTITION:NUMBER, got {value!r}")
        else:
            pairs.append((name, round(amount * scale)))
    if problems:
        raise InputError("options", problems)
    return tuple(pairs)


def parse_weights(text: str | None) -> tuple[tuple[str, int], ...]:
    """``age=1000,fairshare=0`` -> pairs; unknown names are refused."""
    if not text:
        return ()
    pairs, problems = [], []
    for item in text.split(","):
        key, sep, value = item.partition("=")
        key = key.strip().lower().replace("-", "_")
        if not sep or key not in WEIGHT_KEYS or not re.fullmatch(r"\d+", value.strip()):
            problems.append(
                f"--weights item {item!r}: expected NAME=INTEGER, NAME one of "
                + ", ".join(WEIGHT_KEYS)
            )
        else:
            pairs.append((key, int(value)))
    if problems:
        raise InputError("options", problems)
    return tuple(pairs)


@dataclass(frozen=True)
class Scenario:
    """Everything one replay needs."""

    cluster: BatchCluster
    workload: Workload
    scheduler: SchedulerConfig
    power_saving: PowerSaving | None = None


def apply_changes(base: Scenario, changes: Changes) -> tuple[Scenario, dict[str, Any]]:
    """The variant scenario, and notes (prediction accuracy) for the report."""
    cluster, workload, sched, power = base.cluster, base.workload, base.scheduler, base.power_saving
    notes: dict[str, Any] = {}
    for part, count in changes.add_nodes:
        cluster = add_nodes(cluster, part, count)
    for part, count in changes.remove_nodes:
        cluster = remove_nodes(cluster, part, count)
    for part, seconds in changes.max_time:
        cluster = set_max_time(cluster, part, seconds)
    if changes.scheduler:
        sched = scheduler_preset(
            changes.scheduler,
            weights=sched.weights,
            bf_interval_s=sched.bf_interval_s,
            bf_window_s=sched.bf_window_s,
            calc_period_s=sched.calc_period_s,
        )
    if changes.weights:
        new_weights: dict[str, Any] = dict(changes.weights)
        sched = replace(sched, weights=replace(sched.weights, **new_weights))
    if changes.predict_walltime:
        prediction = predicted_runtimes(workload)
        notes["prediction_accuracy"] = accuracy(workload, prediction)
        workload = workload.replace_columns(estimate_s=prediction)
    if changes.power_off_after_s is not None:
        power = PowerSaving(changes.power_off_after_s, changes.boot_s)
    return Scenario(cluster, workload, sched, power), notes


def run(
    scenario: Scenario, power_model: PowerModel, progress: Progress | None = None
) -> BatchResult:
    return simulate_batch(
        scenario.cluster,
        scenario.workload,
        scenario.scheduler,
        scenario.power_saving,
        power_model,
        progress,
    )


@dataclass(frozen=True)
class Baseline:
    """A replay of the unchanged scenario and its figures, reusable by several what-ifs."""

    result: BatchResult
    figures: dict[str, Any]
    """``baseline``, ``baseline_vs_recorded`` and ``recorded_energy`` of the report."""


def replay_baseline(
    base: Scenario, power_model: PowerModel, progress: Progress | None = None
) -> Baseline:
    """Replay ``base`` as it is: its figures, its agreement with the recorded starts, and the
    energy the recorded schedule drew."""
    before = run(base, power_model, progress)
    return Baseline(
        before,
        {
            "baseline": summarise(base.cluster, base.workload, before, power_model),
            "baseline_vs_recorded": agreement(base.workload, before),
            "recorded_energy": recorded_energy(base.cluster, base.workload, power_model),
        },
    )


def compare(
    base: Scenario,
    changes: Changes,
    power_model: PowerModel | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    seed: int = 0,
    baseline: Baseline | None = None,
) -> dict[str, Any]:
    """Replay the baseline and the variant; the figures of both and their differences.

    ``baseline`` (of the same ``base``) saves replaying it again; it is not used when the
    change leaves jobs out (the baseline is then replayed without them, to compare the same
    jobs)."""
    power_model = power_model or PowerModel()
    report: dict[str, Any] = {"changes": changes.labels()}

    def step(name: str) -> Progress | None:
        return (lambda done, total: progress(name, done, total)) if progress else None

    if not report["changes"]:
        baseline = baseline or replay_baseline(base, power_model, step("baseline"))
        return report | baseline.figures
    variant, notes = apply_changes(base, changes)
    lost = unfit_jobs(variant.cluster, variant.workload)
    if len(lost):  # jobs the changed cluster cannot host leave both runs: same jobs compared
        keep = np.setdiff1d(np.arange(len(base.workload)), lost)
        base = replace(base, workload=base.workload.take(keep))
        variant = replace(variant, workload=variant.workload.take(keep))
        report["left_out_unfit_after_change"] = len(lost)
        baseline = None
    baseline = baseline or replay_baseline(base, power_model, step("baseline"))
    report |= baseline.figures
    after = run(variant, power_model, step("variant"))
    report["variant"] = summarise(variant.cluster, variant.workload, after, power_model)
    report.update(notes)
    report["difference"] = difference(
        base.workload, baseline.result, after, report["baseline"], report["variant"], seed
    )
    return report


def difference(
    w: Workload,
    before: BatchResult,
    after: BatchResult,
    a: dict[str, Any],
    b: dict[str, Any],
    seed: int,
) -> dict[str, Any]:
    """Variant minus baseline, with a paired bootstrap 95% CI of the mean-wait difference."""
    wait_a, wait_b = before.waits_s(w), after.waits_s(w)
    both = ~np.isnan(wait_a) & ~np.isnan(wait_b)
    delta = (wait_b - wait_a)[both]
    rng = np.random.default_rng(seed)
    if len(delta):
        draws = (
            rng.integers(0, len(delta), size=(200, len(delta))) if len(delta) <= 200_000 else None
        )
        means = delta[draws].mean(axis=1) if draws is not None else _chunked_bootstrap(delta, rng)
        low, high = np.percentile(means, [2.5, 97.5])
    else:
        low = high = 0.0
    return {
        "wait_mean_s": b["waits"]["mean_s"] - a["waits"]["mean_s"],
        "wait_mean_ci95_s": [float(low), float(high)],
        "wait_median_s": b["waits"]["median_s"] - a["waits"]["median_s"],
        "wait_p95_s": b["waits"]["p95_s"] - a["waits"]["p95_s"],
        "utilisation": b["utilisation"] - a["utilisation"],
        "makespan_s": b["makespan_s"] - a["makespan_s"],
        "energy_facility_kwh": b["energy"]["facility_kwh"] - a["energy"]["facility_kwh"],
        "jobs_waiting_less": int((delta < 0).sum()),
        "jobs_waiting_more": int((delta > 0).sum()),
    }


def _chunked_bootstrap(delta: np.ndarray, rng: np.random.Generator, draws: int = 200) -> np.ndarray:
    """Bootstrap means for large samples without a (draws x n) index matrix."""
    return np.array([delta[rng.integers(0, len(delta), len(delta))].mean() for _ in range(draws)])
