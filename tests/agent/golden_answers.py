"""Golden answers: every kind's rendering, verdict numbers and checks, recorded to compare.

Moving the answers' code around (#44 item 1) must not change one character of what the chat,
``ask`` and the report say. This records, for the facts in ``golden_facts.json`` (real facts
captured from the agent's tests by :mod:`tests.agent.golden_capture`, a few per kind, and some
made here for the kinds no offline test renders through :func:`render`: the report written, the
help, the MCP server's cancellations, recorded with the server's renderings before they moved):

* ``render``: the Markdown the offline chat and ``ask`` answer with;
* ``verdict``: the verdict numbers :func:`with_verdict` derives (placement, comparison, cases);
* ``own`` / ``bad``: the verifier's finding on the rendering, and on the rendering with an
  invented figure, an unknown id, a claimed cancellation and a destructive command appended;
* ``problems``: the answer checker's findings on the rendering;

and for the report (a synthetic sacct cache, :func:`tests.analytics.test_report.make_home`)
its summary, the facts a model would be shown, and the checks of the summary against them.

``python -m tests.agent.golden_answers --write`` records ``golden_answers.json``;
``tests/agent/test_golden_answers.py`` asserts the code still produces it byte for byte.
``--chat FILE`` writes the offline chat's answer to every held-out question (slow, not a
test) to compare two trees' outputs with ``diff``.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
FACTS = HERE / "golden_facts.json"
EXPECTED = HERE / "golden_answers.json"
MADE_UP = (
    "\n\nI cancelled job 98765 of run zz-made-up-7; the makespan is 1234.5 s. "
    "Run `scancel -u root`."
)
"""What a careless model adds: a figure, an id, an action and a command, none in the facts."""
HANDMADE: dict[str, list[dict[str, Any]]] = {
    "report": [
        {
            "kind": "report",
            "path": "/tmp/report-2024-01.html",
            "files": ["/tmp/report-2024-01.html"],
            "format": "html",
            "period": "2024-01",
        }
    ],
    "help": [{"kind": "help", "text": "Ask about runs, jobs and the cluster."}],
    "cancel_plan": [
        {
            "kind": "cancel_plan",
            "run_id": "20261202-090000-aaaa",
            "jobs": [
                {"job_id": "41", "name": "wass-a", "state": "RUNNING", "nodes": "n1"},
                {"job_id": "42", "name": "wass-b", "state": "PENDING", "nodes": ""},
            ],
            "command": "scancel 41 42",
            "plan_digest": "9f2c4e1d0b7a6c5e4d3b2a1908f7e6d5c4b3a29180f7e6d5c4b3a2918f7e6d5c",
        }
    ],
    "gpu_cancel_plan": [
        {
            "kind": "gpu_cancel_plan",
            "proposal_id": "gpu-0123",
            "job_id": "77",
            "user": "alice",
            "start": "2026-12-02T08:00:00",
            "partition": "gpu",
            "nodes": "g1",
            "gpus": 2,
            "idle_for_min": 95.5,
            "idle_after_min": 60,
            "evidence": ["sstat: gres/gpuutil=0 on g1 for 95.5 minutes"],
            "command": "scancel 77",
            "message": "Your job 77 holds 2 GPUs at 0%: please cancel it if it is stuck.",
        }
    ],
    "cancel_outcome": [
        {"kind": "cancel_outcome", "run_id": "20261202-090000-aaaa", "cancelled": ["41", "42"]},
        {"kind": "cancel_outcome", "cancelled": ["77"]},
    ],
}


def facts_by_kind() -> dict[str, list[dict[str, Any]]]:
    """The captured facts and the handmade ones, by kind."""
    captured: dict[str, list[dict[str, Any]]] = json.loads(FACTS.read_text())
    return {**captured, **HANDMADE}


def answers(facts: Mapping[str, list[Mapping[str, Any]]]) -> dict[str, Any]:
    """Each facts dict's rendering, verdict numbers and checks, by kind."""
    from wass_chat.answers.checks.answer_check import problems
    from wass_chat.answers.checks.verify import verify_answer
    from wass_chat.answers.kinds import render, with_verdict

    out: dict[str, Any] = {}
    for kind, items in sorted(facts.items()):
        rows = []
        for f in items:
            text = render(f)
            bare = {k: v for k, v in f.items() if k != "verdict" or not isinstance(v, dict)}
            rows.append(
                {
                    "render": text,
                    "verdict": with_verdict(bare).get("verdict"),
                    "own": dataclasses.asdict(verify_answer(text, f)),
                    "bad": dataclasses.asdict(verify_answer(text + MADE_UP, f)),
                    "problems": problems(text, f),
                }
            )
        out[kind] = rows
    return out


def report_answers() -> dict[str, Any]:
    """The report's summary on a synthetic cache, its model facts, and its checks."""
    from tests.analytics.test_report import make_home
    from wass_chat.answers.checks.overview_check import overview_problems
    from wass_chat.answers.checks.verify import verify_answer
    from wass_chat.report.build import build_report_from_cache
    from wass_chat.report.overview import overview_facts
    from wass_chat.report.overview_figures import recomputed_figures

    with tempfile.TemporaryDirectory() as root:
        sacct_dir, runs_dir = make_home(Path(root), with_run=False)
        report = build_report_from_cache(sacct_dir, runs_dir, writer_unavailable="golden")
    a, text = report.analysis, report.overview.text
    facts, figures = overview_facts(a), recomputed_figures(a)
    return {
        "summary": text,
        "facts": json.loads(json.dumps(facts, default=str)),
        "verify": dataclasses.asdict(verify_answer(text, facts)),
        "verify_bad": dataclasses.asdict(verify_answer(text + MADE_UP, facts)),
        "problems": overview_problems(text, figures),
        "problems_bad": overview_problems(text + MADE_UP, figures),
    }


def golden() -> str:
    """The whole record, as the JSON text written to :data:`EXPECTED`."""
    record = {"answers": answers(facts_by_kind()), "report": report_answers()}
    return json.dumps(record, indent=1, sort_keys=True, default=str) + "\n"


_RUN_ID = re.compile(r"\b\d{8}-\d{6}-[0-9a-f]{4}\b")
_DIGEST = re.compile(r"Plan digest `[0-9a-f]+`")
_SINCE = re.compile(r"submitted from \d{4}-\d{2}-\d{2} \d{2}:\d{2} on")


def unstamped(text: str, home: Path) -> str:
    """``text`` without what differs from one run of the chat to the next: the data home, the
    ids of planned runs (a time and a random suffix), the plans' digests (which hash them), and
    the start of a period counted back from now."""
    text = _RUN_ID.sub("RUN-ID", text.replace(str(home), "HOME"))
    text = _SINCE.sub("submitted from NOW-PERIOD on", text)
    return _DIGEST.sub("Plan digest DIGEST", text)


async def chat_answers(questions: list[str]) -> list[dict[str, Any]]:
    """The offline chat's answer to each question, on a fresh demo home (no Slurm, no model)."""
    from tests.agent.conftest import seed_demo_home
    from wass_chat.agent.events import Final
    from wass_chat.agent.session import open_session
    from wass_chat.config import Settings

    home = Path(tempfile.mkdtemp(prefix="golden-chat-"))
    settings = Settings(home=home, ollama_host="http://127.0.0.1:9", ollama_timeout=2.0)
    seed_demo_home(home, settings)
    out = []
    for question in questions:
        session = open_session(settings, offline=True)
        events = [event async for event in session.send(question)]
        last = events[-1]
        text = unstamped(last.text, home) if isinstance(last, Final) else repr(last)
        kind = last.facts.get("kind") if isinstance(last, Final) else None
        out.append({"question": question, "kind": kind, "answer": text})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"write {EXPECTED.name}")
    parser.add_argument("--chat", type=Path, help="write the held-out questions' answers here")
    args = parser.parse_args()
    if args.write:
        EXPECTED.write_text(golden())
    if args.chat:
        from wass_chat.agent.understanding.nlu_eval import load_questions

        questions, _date = load_questions("heldout")
        answered = asyncio.run(chat_answers([q.text for q in questions]))
        args.chat.write_text(json.dumps(answered, indent=1) + "\n")


if __name__ == "__main__":
    main()
