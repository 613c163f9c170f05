"""Comparisons across bench runs that share instances: the figures issue #18 asks for.

Each run is a bench JSON document (``wass-chat bench ... --json``) made under one estimate
mode. Makespans are paired by instance id, so a ratio compares one scheduler planning on one
kind of estimate with another scheduler (or the same) planning on another, on the same
realised execution (the realisation depends on the instance seed only).

A mode may pool several runs (the same instances under an idle cluster and two loads, or two
regimes): its records are keyed by (which run, instance), the n-th run of one mode pairs with
the n-th run of another, and the confidence intervals resample whole instances, so an instance
measured under three loads is one draw of the bootstrap, not three.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from policy.bench.stats import geometric_mean_bootstrap_ci

Key = tuple[int, str]
"""(which of a mode's pooled runs, instance id)."""

Makespans = dict[str, dict[Key, float]]
"""scheduler -> (run, instance id) -> makespan."""

Run = Mapping[str, Any]
"""One bench JSON document."""


EXPECTED = "expected_makespan"
"""The records' mean makespan over fresh runs of the instance (``bench --reruns``)."""


def makespans(*documents: Run, field: str = "makespan") -> Makespans:
    """scheduler -> (run, instance) -> makespan over the records of one or more pooled runs;
    ``field`` :data:`EXPECTED` reads each plan's mean over reruns instead of the one run
    (records without it are left out)."""
    table: Makespans = {}
    for run, document in enumerate(documents):
        for record in document["records"]:
            if record.get(field) is not None:
                key = (run, record["instance"])
                table.setdefault(record["scheduler"], {})[key] = record[field]
    return table


def _ratios(
    ours: Mapping[Key, float], theirs: Mapping[Key, float]
) -> tuple[list[float], list[str]]:
    """``ours / theirs`` on every key both have, and the instance each ratio belongs to."""
    keys = [k for k in ours if k in theirs and theirs[k] > 0]
    return [ours[k] / theirs[k] for k in keys], [instance for _, instance in keys]


def _estimate(values: list[float], instances: list[str]) -> dict[str, Any]:
    estimate: dict[str, Any] = geometric_mean_bootstrap_ci(values, clusters=instances).as_dict()
    estimate["instances"] = len(set(instances))
    return estimate


def paired(ours: Mapping[Key, float], theirs: Mapping[Key, float]) -> dict[str, Any]:
    """Geometric mean of ``ours / theirs`` over shared keys, 95% CI (resampling instances),
    wins and losses."""
    values, instances = _ratios(ours, theirs)
    estimate = _estimate(values, instances)
    estimate["wins"] = sum(v < 1 - 1e-9 for v in values)
    estimate["losses"] = sum(v > 1 + 1e-9 for v in values)
    return estimate


CHOOSER = "heft-or-peft"
"""The guard's bar (:class:`policy.learned.rag_guarded.ClassicChooser`): HEFT or PEFT, judged
alike."""


def guard_check(
    table: Makespans, guarded: str = "rag-guarded", against: str = ""
) -> dict[str, Any] | None:
    """``guarded`` against min(HEFT, PEFT) per instance (or against the scheduler
    ``against``): losses and the worst ratio; None when the run lacks one of them."""
    if against:
        if not {guarded, against} <= set(table):
            return None
        best = table[against]
    else:
        if not {guarded, "heft", "peft"} <= set(table):
            return None
        peft = table["peft"]
        best = {i: min(span, peft[i]) for i, span in table["heft"].items() if i in peft}
    values, instances = _ratios(table[guarded], best)
    return {
        "instances": len(values),
        "losses": sum(v > 1 + 1e-9 for v in values),
        "worst": max(values, default=float("nan")),
        "ratio": _estimate(values, instances),
    }


def compare_runs(
    runs: Mapping[str, Run | Sequence[Run]],
    schedulers: Sequence[str] = (),
    baseline: str = "",
    field: str = "makespan",
) -> dict[str, Any]:
    """Per mode (one run, or several pooled): every scheduler over HEFT on the same estimates,
    policy over policy-norag, the guard check (and, when the run has :data:`CHOOSER`, the
    chooser's check and the guard against it: can the guard beat choosing between the
    classics?); across modes: each scheduler over HEFT planning on ``kb`` estimates, and over
    itself in the ``baseline`` run (e.g. a busy cluster over an idle one, or plans that see the
    load over plans that do not). ``field`` :data:`EXPECTED`: every figure on the plans' mean
    makespans over fresh runs instead of on the measured run."""
    pooled = {mode: [run] if isinstance(run, Mapping) else list(run) for mode, run in runs.items()}
    tables = {mode: makespans(*documents, field=field) for mode, documents in pooled.items()}
    out: dict[str, Any] = {
        "field": field,
        "runs": {mode: len(documents) for mode, documents in pooled.items()},
        "modes": {},
        "versus_heft_on_kb": {},
        "versus_baseline": {},
    }
    for mode, table in tables.items():
        names = [s for s in (schedulers or table) if s in table]
        entry: dict[str, Any] = {
            "over_heft": {s: paired(table[s], table["heft"]) for s in names if "heft" in table},
            "guard": guard_check(table),
            "chooser": guard_check(table, CHOOSER),
            "guard_over_chooser": guard_check(table, against=CHOOSER),
        }
        if {"policy", "policy-norag"} <= set(table):
            entry["rag_over_norag"] = paired(table["policy"], table["policy-norag"])
        out["modes"][mode] = entry
    base = tables.get(baseline, {})
    for mode, table in tables.items():
        if base and mode != baseline:
            out["versus_baseline"][mode] = {
                s: paired(table[s], base[s])
                for s in (schedulers or table)
                if s in table and s in base
            }
    kb_heft = tables.get("kb", {}).get("heft")
    if kb_heft:
        for mode, table in tables.items():
            out["versus_heft_on_kb"][mode] = {
                s: paired(table[s], kb_heft) for s in (schedulers or table) if s in table
            }
    return out
