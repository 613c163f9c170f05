"""Comparisons across bench runs that share instances: the figures issue #18 asks for.

Each run is a bench JSON document (``wass-chat bench ... --json``) made under one estimate
mode. Makespans are paired by instance id, so a ratio compares one scheduler planning on one
kind of estimate with another scheduler (or the same) planning on another, on the same
realised execution (the realisation depends on the instance seed only).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from policy.bench.stats import geometric_mean_ci, ratios

Makespans = dict[str, dict[str, float]]
"""scheduler -> instance id -> makespan."""


def makespans(document: Mapping[str, Any]) -> Makespans:
    """scheduler -> instance -> makespan of one bench document's records."""
    table: Makespans = {}
    for record in document["records"]:
        table.setdefault(record["scheduler"], {})[record["instance"]] = record["makespan"]
    return table


def paired(ours: Mapping[str, float], theirs: Mapping[str, float]) -> dict[str, Any]:
    """Geometric mean of ``ours / theirs`` over shared instances, 95% CI, wins and losses."""
    values = ratios(ours, theirs)
    estimate = geometric_mean_ci(values).as_dict()
    estimate["wins"] = sum(v < 1 - 1e-9 for v in values)
    estimate["losses"] = sum(v > 1 + 1e-9 for v in values)
    return estimate


CHOOSER = "heft-or-peft"
"""The guard's bar (:class:`policy.rag_guarded.ClassicChooser`): HEFT or PEFT, judged alike."""


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
        best = {i: min(table["heft"][i], table["peft"][i]) for i in table["heft"]}
    values = ratios(table[guarded], best)
    return {
        "instances": len(values),
        "losses": sum(v > 1 + 1e-9 for v in values),
        "worst": max(values, default=float("nan")),
        "ratio": geometric_mean_ci(values).as_dict(),
    }


def compare_runs(
    runs: Mapping[str, Mapping[str, Any]], schedulers: Sequence[str] = (), baseline: str = ""
) -> dict[str, Any]:
    """Per mode: every scheduler over HEFT on the same estimates, policy over policy-norag,
    the guard check (and, when the run has :data:`CHOOSER`, the chooser's check and the guard
    against it: can the guard beat choosing between the classics?); across modes: each
    scheduler over HEFT planning on ``kb`` estimates, and over itself in the ``baseline`` run
    (e.g. a busy cluster over an idle one, or plans that see the load over plans that do
    not)."""
    tables = {mode: makespans(doc) for mode, doc in runs.items()}
    out: dict[str, Any] = {"modes": {}, "versus_heft_on_kb": {}, "versus_baseline": {}}
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
