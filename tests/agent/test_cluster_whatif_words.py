"""Whole-cluster what-ifs read out of words, and whose what-if a question is (issue 33)."""

from __future__ import annotations

from datetime import date

import pytest

from wass_chat.agent.understanding.cluster_whatif_words import (
    AGE_ONLY_WEIGHTS,
    cluster_changes,
    whatif_subject,
)
from wass_chat.agent.understanding.router import route
from wass_chat.agent.understanding.slots import find_partition, parse_slots

TODAY = date(2026, 11, 23)


@pytest.mark.parametrize(
    ("text", "changes"),
    [
        ("a 24 h cap on the long partition", {"max_time_h": 24.0, "partition": "long"}),
        ("what if the bigmem partition had a 2 day maxtime", {"max_time_h": 48.0}),
        ("limit jobs on partition debug to 90 minutes", {"max_time_h": 1.5, "partition": "debug"}),
        ("idle nodes off after an hour", {"power_off_after_min": 60.0}),
        ("power saving with a 2 minute boot", {"power_off_after_min": 30.0, "boot_time_s": 120}),
        ("switch nodes off when idle for 45 min", {"power_off_after_min": 45.0}),
        ("twelve more gpu nodes", {"add_nodes": 12, "node_type": "gpu"}),
        ("retire 20 nodes from batch", {"remove_nodes": 20, "partition": "batch"}),
        ("if we lost 100 batch nodes", {"remove_nodes": 100, "partition": "batch"}),
        ("a 10% bigger cluster", {"nodes_pct": 10.0}),
        ("shrink the cluster by 5 percent", {"nodes_pct": -5.0}),
        ("walltimes predicted from history", {"predict_walltime": True}),
        ("shortest job first", {"scheduler": "sjf"}),
        ("fifo with backfill", {"scheduler": "fifo-easy"}),
        ("without backfill", {"scheduler": "priority"}),
        ("fairshare weight 0 and age 2000", {"weights": "fairshare=0,age=2000"}),
        ("turn off fairshare", {"weights": "fairshare=0"}),
        ("what if we had 2 fewer gpu nodes", {"remove_nodes": 2, "node_type": "gpu"}),
        ("priority by age only", {"weights": AGE_ONLY_WEIGHTS}),
        ("an age-only queue order", {"weights": AGE_ONLY_WEIGHTS}),
        ("if fair share weighed 10000", {"weights": "fairshare=10000"}),
        ("the age of my job", {}),  # age without "only" or a weight is no change
        ("turn off the fan", {}),  # power words need nodes or idle
        ("predict the makespan", {}),  # a workflow's prediction, not walltimes
    ],
)
def test_changes_in_words(text: str, changes: dict) -> None:
    assert cluster_changes(text) == changes


@pytest.mark.parametrize(
    ("text", "subject"),
    [
        ("if we add 8 gpu nodes how much shorter are waits", "cluster"),
        ("what if maxtime on extended were 3 days", "cluster"),  # only a replay changes limits
        ("what if we add 8 nodes to the cluster", "unclear"),
        ("what if we had 6 more gpu nodes", "unclear"),
        ("what if we had 5 more nodes", "workflow"),  # the current run, as it always was
        ("would montage-60's makespan and the queue waits drop with 4 more nodes", "both"),
        ("how busy was the cluster", None),
    ],
)
def test_whose_what_if(text: str, subject: str | None) -> None:
    slots = parse_slots(text, TODAY)
    named = bool(slots.workflow or slots.run or slots.task or slots.schedulers)
    assert whatif_subject(text, slots.cluster_changes, named) == subject


def test_durations_of_a_change_are_no_period_and_counts_no_job_id() -> None:
    assert parse_slots("what does a 24 h cap on the long partition do", TODAY).period is None
    assert parse_slots("cap long at 12h over the last 30 days", TODAY).period == "30d"
    intent = route("how much would queue waits drop with 16 more gpu nodes", TODAY)
    assert intent.tool == "cluster_whatif" and "jobid" not in intent.arguments


def test_an_order_is_refused_but_the_same_words_as_a_question_are_a_what_if() -> None:
    assert route("power off idle nodes after 30 minutes", TODAY).tool == ""
    asked = route("power off idle nodes after 30 minutes, how much would we save?", TODAY)
    assert asked.tool == "cluster_whatif"
    assert asked.arguments == {"power_off_after_min": 30.0}


def test_a_cluster_what_if_without_a_change_asks_which() -> None:
    intent = route("what would a change to the cluster do to queue waits?", TODAY)
    assert intent.name == "clarify" and "Which change" in intent.reply


@pytest.mark.parametrize(
    ("text", "partition"),
    [
        ("how much energy did the gpu partition use", "gpu"),
        ("is the debug partition congested", "debug"),
        ("queue for partition gpu", "gpu"),
        ("which partition used the most energy", None),
    ],
)
def test_partition_names_are_not_the_verb_after_them(text: str, partition: str | None) -> None:
    assert find_partition(text) == partition


def test_age_only_weights_are_the_replays() -> None:
    """The understanding package may not import the replay's constant: the two stay equal."""
    from wass_chat.batch.whatif import AGE_ONLY_WEIGHTS as REPLAYED
    from wass_chat.batch.whatif import parse_weights

    assert AGE_ONLY_WEIGHTS == REPLAYED and dict(parse_weights(REPLAYED))["age"] == 1000
