"""Tool-call recovery, small-talk detection and the verifier's grounding rules."""

from __future__ import annotations

import pytest

from wass_chat.agent.understanding.parse import (
    RecoveredCall,
    is_small_talk,
    looks_like_tool_json,
    recover_tool_calls,
    unknown_tool_error,
)
from wass_chat.answers.checks.verify import citable_ids, verify_answer


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "simulate", "arguments": {"add_nodes": 4}}',
        '```json\n{"name": "simulate", "parameters": {"add_nodes": 4}}\n```',
        '<tool_call>\n{"name": "simulate", "arguments": "{\\"add_nodes\\": 4}"}\n</tool_call>',
        '{"function": {"name": "simulate", "arguments": {"add_nodes": 4}}}',
        '{"tool_calls": [{"function": {"name": "simulate", "arguments": {"add_nodes": 4}}}]}',
        '[{"tool": "simulate", "args": {"add_nodes": 4}}]',
    ],
)
def test_tool_calls_written_as_json_are_recovered(text: str) -> None:
    assert recover_tool_calls(text) == [RecoveredCall("simulate", {"add_nodes": 4})]


def test_several_calls_and_prose_are_told_apart() -> None:
    two = '{"name": "cluster_status", "arguments": {}}\n{"name": "run_status", "arguments": {}}'
    assert [c.name for c in recover_tool_calls(two)] == ["cluster_status", "run_status"]
    assert recover_tool_calls('The makespan is 12 s. Example: {"name": "simulate"}') == []
    assert recover_tool_calls("{not json at all") == []
    assert looks_like_tool_json('  {"name"') and not looks_like_tool_json("The answer")


@pytest.mark.parametrize(
    "text", ["hi", "Hello there!", "thanks a lot", "good morning", "hey, how are you?"]
)
def test_greetings_are_small_talk(text: str) -> None:
    assert is_small_talk(text)


@pytest.mark.parametrize("text", ["hi, what if I add 4 nodes?", "why did job 12 wait", "submit x"])
def test_requests_are_not_small_talk(text: str) -> None:
    assert not is_small_talk(text)


def test_unknown_tool_error_lists_the_real_tools() -> None:
    message = unknown_tool_error("rm_rf", ["simulate", "job_why"])
    assert '"rm_rf"' in message and "job_why, simulate" in message


FACTS = {
    "kind": "placement",
    "run_id": "demo-genomics-49-heft",
    "task": "merge_bams",
    "chosen_node": "gpu02",
    "baseline_makespan_s": 510.4871,
    "locality": {"input_bytes": 1408803331788},
    "alternatives": [{"node": "gpu01", "makespan_s": 573.9, "delta_s": 63.41, "delta_pct": 12.42}],
    "cases": [
        {"case_id": "case-ab12", "similarity": 0.9731},
        {"case_id": "case-cd34", "similarity": 0.95},
        {"case_id": "case-ef56", "similarity": 0.9},
    ],
}


@pytest.mark.parametrize(
    "text",
    [
        "Task merge_bams of run demo-genomics-49-heft ran on gpu02 (makespan 510.5 s).",
        "On gpu01 the workflow would have finished 63 s later (+12.4%).",
        "It reads 1.41 TB (1,408,803,331,788 bytes); 8.5 min in total.",
        "Similar: case-ab12 (similarity 0.973), case-cd34 and case-ef56; 3 cases in all.",
        "1. first point\n2. second point",
    ],
)
def test_grounded_answers_pass(text: str) -> None:
    verdict = verify_answer(text, FACTS, question="why did task merge_bams go to gpu02?")
    assert verdict.ok, verdict.reason()


@pytest.mark.parametrize(
    ("text", "bad"),
    [
        ("On gpu01 it would have finished 70 s later.", "70 s"),
        ("The makespan was 511.5 s.", "511.5 s"),
        ("It reads 2.5 TB.", "2.5 TB"),
        ("See case-zz99 for a similar run.", "case-zz99"),
        ("Moving it to cpu07 saves time.", "cpu07"),
        ("Run run-20250101-beef shows the same.", "run-20250101-beef"),
    ],
)
def test_invented_numbers_and_ids_fail(text: str, bad: str) -> None:
    verdict = verify_answer(text, FACTS)
    assert not verdict.ok
    assert bad in verdict.unsupported_numbers + verdict.unknown_ids


def test_an_array_task_escaped_by_markdown_is_still_its_id() -> None:
    """``**Job 24 ... /why 24\\_1**``: the rendered answer's escaped underscore is the task id
    the facts hold, not an id ``_1``; an escaped name the facts lack still fails."""
    facts = {"job_id": "24", "array_tasks": [{"job_id": "24_1", "state": "COMPLETED"}]}
    assert verify_answer("Its other tasks: 24\\_1 COMPLETED.", facts).ok
    assert verify_answer("See run\\_9z.", facts).unknown_ids == ("run_9z",)


@pytest.mark.parametrize(
    "text",
    [
        "functions.compare_schedulers:\n{}",
        'I will check.\nfunctions.simulate: {"workflow": "demo"}',
        "<tool_call>\n{}\n</tool_call>",
        "<|python_tag|>simulate()",
    ],
)
def test_a_tool_call_written_as_text_is_not_an_answer(text: str) -> None:
    verdict = verify_answer(text, FACTS)
    assert not verdict.ok and verdict.tool_syntax
    assert "tool call written as text" in verdict.reason()


def test_prose_naming_a_tool_is_an_answer() -> None:
    assert verify_answer("The functions.simulate tool ran on gpu02.", FACTS).ok


def test_the_digits_of_a_hex_digest_are_not_numbers() -> None:
    """A plan's digest (``2e70ab3f``) starts like a number (2e70) but is a word: the checker
    must not call it invented, while a real number glued to its unit still counts."""
    assert verify_answer("Approve with digest 2e70ab3f91c4.", FACTS).ok
    assert verify_answer("Approve plan 7e5d0c11 (digest 12ab34cd).", FACTS).ok
    assert verify_answer("It reads 2.5TB.", FACTS).unsupported_numbers == ("2.5TB",)


def test_numbers_from_the_question_are_allowed_and_citations_found() -> None:
    verdict = verify_answer(
        "Adding 4 nodes: see case-ab12 and demo-genomics-49-heft.",
        FACTS,
        question="what if I add 4 nodes?",
    )
    assert verdict.ok
    assert set(verdict.cited_ids) == {"case-ab12", "demo-genomics-49-heft"}
    assert citable_ids(FACTS)[0] == "demo-genomics-49-heft"


def test_numbers_of_computed_sentences_ground_an_answer_but_outside_text_does_not() -> None:
    """A model repeating a job's verdict ('until about 23:44') is grounded; a number only a job
    name carries, or one nobody computed, is not."""
    facts = {
        "kind": "job_why",
        "job_id": "82",
        "job_name": "makespan 77 s",
        "verdict": "Job 82 waits for CPUs: job 80 of user root holds all 8 CPUs of n4 until "
        "about 23:44; it needs 8 CPUs on one node.",
        "advice": [
            {
                "text": "ask for 4 CPUs instead of 8",
                "outcome": "Slurm would start it at about 23:35 on n3, instead of about 23:44",
                "helps": True,
            }
        ],
    }
    faithful = (
        "Job 82 waits for CPUs: job 80 holds all 8 CPUs of n4 until about 23:44. Asking for 4 "
        "CPUs would let it start at about 23:35 on n3."
    )
    assert verify_answer(faithful, facts).ok
    assert not verify_answer("It starts at 23:50 once 16 CPUs free up.", facts).ok
    assert not verify_answer("The job takes 77 s.", facts).ok


def test_a_gantt_trace_grounds_nothing() -> None:
    """The simulate facts carry every task's start and end for the app's chart; a model that
    quotes a task time from it has not been told it, and is not believed."""
    gantt = {"tasks": [{"task": "merge_bams", "start": 123.4, "end": 456.7}]}
    facts = {"kind": "simulation", "baseline": {"makespan_s": 510.5}, "gantt": gantt}
    assert verify_answer("The makespan is 510.5 s.", facts).ok
    assert not verify_answer("merge_bams starts at 123.4 s.", facts).ok
