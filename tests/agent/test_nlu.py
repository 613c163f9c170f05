"""Offline understanding: the MiniLM encoder, the slot parsers, the ask-back rules, the figures."""

from __future__ import annotations

import math
from datetime import date

import numpy as np
import pytest

from wass_chat.agent.facts.accounting_periods import parse_period
from wass_chat.agent.tools import TOOL_NAMES
from wass_chat.agent.understanding.minilm import erf, shared_model
from wass_chat.agent.understanding.nlu import (
    VECTORS_FILE,
    Reading,
    exemplars,
    shared_classifier,
    texts_digest,
)
from wass_chat.agent.understanding.nlu_eval import evaluate
from wass_chat.agent.understanding.router import decide
from wass_chat.agent.understanding.slots import Slots, delexicalise, find_period, parse_slots

TODAY = date(2026, 11, 23)


def test_erf_is_exact_enough_for_gelu() -> None:
    xs = np.linspace(-4, 4, 81, dtype=np.float32)
    assert (
        np.max(np.abs(erf(xs) - np.array([math.erf(x) for x in xs]))) < 5e-7
    )  # float32 rounding on top of 1.5e-7


def test_embeddings_are_unit_vectors_that_put_paraphrases_close() -> None:
    a, b, c = shared_model().encode(
        ["why is my job still pending", "why hasn't job 42 started yet", "compare the schedulers"]
    )
    assert np.allclose([np.linalg.norm(v) for v in (a, b, c)], 1.0, atol=1e-5)
    assert float(a @ b) > float(a @ c) + 0.2


def test_the_shipped_exemplar_vectors_match_the_exemplars() -> None:
    from pathlib import Path

    import wass_chat.agent.understanding.nlu as nlu

    texts = [t for group in exemplars().values() for t in group]
    with np.load(Path(nlu.__file__).with_name(VECTORS_FILE)) as data:
        assert str(data["digest"]) == texts_digest(texts), "run write_exemplar_vectors()"
        assert data["vectors"].shape == (len(texts), 384)


def test_every_tool_has_an_intent_with_exemplars() -> None:
    table = exemplars()
    assert set(TOOL_NAMES) <= set(table)
    assert all(len(table[name]) >= 8 for name in TOOL_NAMES)


@pytest.mark.parametrize(
    ("text", "period"),
    [
        ("how busy was the cluster last week", "7d"),
        ("usage over the past 3 days", "3d"),
        ("in the last 24 hours", "24h"),
        ("past two weeks", "2w"),
        ("last month", "30d"),
        ("yesterday", "2026-11-22..2026-11-23"),
        ("who waited most in may", "2026-05"),
        ("in december", "2025-12"),
        ("october 2024", "2024-10"),
        ("this month", "2026-11"),
        ("since 2026-11-01", "2026-11-01.."),
        ("from 2026-10-01 to 2026-10-15", "2026-10-01..2026-10-15"),
        ("all time", "all"),
        ("sacct 30d", "30d"),
        ("which jobs finished in the last hour?", "1h"),  # a week's summary, before
        ("how many jobs failed in the last 30 minutes?", "30m"),
    ],
)
def test_periods_come_out_in_forms_parse_period_accepts(text: str, period: str) -> None:
    assert find_period(text, TODAY) == period
    parse_period(period)  # raises on a form the accounting tools would refuse


def test_may_the_verb_is_not_a_month() -> None:
    assert find_period("may I see the queue", TODAY) is None


def test_slots_are_read_in_any_order_and_through_typos() -> None:
    slots = parse_slots("on gpu02, why did merge_bams go there? run demo-genomics-49-HEFT")
    assert (slots.node, slots.task, slots.run) == ("gpu02", "merge_bams", "demo-genomics-49-heft")
    # a run id with a typo is kept as typed: the tool refuses it, offering the nearest runs
    assert parse_slots("run demo-genomcs-49-heft").run == "demo-genomcs-49-heft"
    assert parse_slots("simulate montgae with min-min").schedulers == ("minmin",)
    assert parse_slots("simulate montgae with min-min").workflow == "montage-60"
    assert parse_slots("top five users by wait").count == 5
    assert parse_slots("accounting for alice").user == "alice"
    # "user" before a verb names no one (it was read as the user "has", an empty queue)
    assert parse_slots("which user has the most pending jobs?").user is None
    assert parse_slots("the queue of user wassbob").user == "wassbob"
    # the whole site's summary answered this, 5 users' jobs as if hers
    assert parse_slots("how many jobs did wassalice run today?").user == "wassalice"
    assert parse_slots("what did the cluster run last week?").user is None
    lengths = {
        "which partition should I use for a 2 hour job?": "2h",
        "where can I run a job of 90 minutes": "90min",
        "a 3-day run": "3d",
        "which partition for --time=2:00:00": "2:00:00",
        "how busy was the cluster in the last 2 hours": None,  # a period, not a job's length
    }
    assert {text: parse_slots(text).job_time for text in lengths} == lengths
    assert parse_slots("queue of the gpu partition").partition == "gpu"
    assert parse_slots("what if gpu02 goes down").changes == {"remove_nodes": ["gpu02"]}


def test_names_are_hidden_from_the_classifier() -> None:
    assert delexicalise("why did merge_bams of run demo-genomics-49-heft go to gpu02") == (
        "why did the task of the run go to the node"
    )
    assert delexicalise("a report") == "a report"


def _readings(*pairs: tuple[str, float]) -> list[Reading]:
    return [Reading(name, score, "") for name, score in pairs]


def test_a_near_tie_between_two_tools_asks_back_with_both() -> None:
    intent = decide("x", "x", _readings(("sacct_summary", 0.62), ("top_waiters", 0.61)), Slots())
    assert intent.tool == "" and intent.readings[:2] == ("sacct_summary", "top_waiters")
    assert "/sacct" in intent.reply and "/waiters" in intent.reply


def test_a_weak_best_reading_is_not_acted_on() -> None:
    intent = decide("x", "x", _readings(("cluster_status", 0.3), ("run_status", 0.1)), Slots())
    assert intent.tool == "" and intent.name == "none"


def test_a_submission_reading_without_submit_wording_asks_back_instead() -> None:
    readings = _readings(("submit_workflow", 0.9), ("simulate", 0.5), ("run_status", 0.4))
    intent = decide("montage on the cluster", "montage on the cluster", readings, Slots())
    assert intent.tool == "" and "submit_workflow" not in intent.readings


def test_the_classifier_loads_from_the_package_once_per_process() -> None:
    assert shared_classifier() is shared_classifier()
    assert shared_classifier().matrix.shape[0] == len(shared_classifier().texts)


@pytest.mark.parametrize("split", ["dev", "heldout"])
def test_the_router_meets_its_targets_on_the_evaluation_set(split: str) -> None:
    report = evaluate(split)
    assert report.questions >= 150
    assert report.intent_accuracy >= 0.97  # issue 31's target
    assert report.slot_accuracy >= 0.97
    assert report.side_effecting_misroutes == 0
