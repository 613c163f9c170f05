"""Measure the offline router on the evaluation questions: intent, intent + slots, misroutes.

The questions live in :mod:`wass_chat.agent.understanding.eval_set` (``dev.json`` for tuning,
``heldout.json`` for reporting; ``scope_tuning.json`` and ``scope_heldout.json``, questions no tool
answers or naming what does not exist, likewise). Each expected ``slots`` dict is the tool's
arguments; arguments equal to the tool's default (``k=5``, ``period=7d``, ...) are dropped on both
sides before comparing, so "last week" and saying nothing both mean ``7d``. Relative periods
("yesterday") are resolved against the set's ``reference_date``. A *side-effecting misroute* is a
side-effecting tool (:data:`~wass_chat.agent.understanding.intents.SIDE_EFFECTING_TOOLS`) chosen
for a question that did not ask for it; a *wrong action* is any tool run that is not the expected
one (asking back is not).

An *out-of-scope* question (expected intent ``none``, or an ``unknown`` name) must be refused or
asked back, never answered as something else: refused is the router's "I can't answer that
here" (``none``), or, for an unknown name, the name passed as typed to the expected tool, which
refuses it with the nearest real names (``UnknownName``); asked back is ``clarify``.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from datetime import date
from importlib import resources
from typing import Any

from wass_chat.agent.understanding.intents import SIDE_EFFECTING_TOOLS, Intent

SPLITS = ("dev", "heldout", "scope-tuning", "scope-heldout")
TOOL_DEFAULTS: dict[str, dict[str, Any]] = {
    "similar_cases": {"k": 5},
    "compare_schedulers": {"schedulers": []},
    "top_waiters": {"period": "7d", "count": 5},
    "sacct_summary": {"period": "7d"},
    "efficiency": {"period": "30d", "count": 5},
    "generate_report": {"period": "7d", "format": "html"},
    "simulate": {"add_nodes": 0, "remove_nodes": [], "remove_count": 0, "bandwidth_factor": 1.0},
    "cluster_whatif": {
        "add_nodes": 0,
        "remove_nodes": 0,
        "boot_time_s": 300,
        "predict_walltime": False,
    },
    "energy_usage": {"period": "30d"},
    "gpu_usage": {"count": 5},
}
"""Arguments that mean the same as leaving them out (the tools' schema defaults)."""


@dataclass(frozen=True)
class Question:
    text: str
    intent: str
    slots: dict[str, Any]
    split: str
    unknown: str | None = None
    """A name the question uses that does not exist (the tool must refuse it)."""

    @property
    def out_of_scope(self) -> bool:
        """No tool answers it as asked: it must be refused or asked back."""
        return self.intent == "none" or self.unknown is not None


@dataclass
class Report:
    """The figures for one split (or all)."""

    split: str
    questions: int
    intent_correct: int = 0
    all_correct: int = 0
    side_effecting_misroutes: int = 0
    wrong_actions: int = 0
    asked_back: int = 0
    out_of_scope: int = 0
    out_of_scope_refused: int = 0
    """Out-of-scope questions refused or asked back."""
    out_of_scope_answered: int = 0
    """Out-of-scope questions answered as something else (a tool run, a reply)."""
    load_model_s: float = 0.0
    load_exemplars_s: float = 0.0
    mean_route_ms: float = 0.0
    max_route_ms: float = 0.0
    errors: list[dict[str, Any]] = field(default_factory=list)

    @property
    def intent_accuracy(self) -> float:
        return self.intent_correct / self.questions if self.questions else 0.0

    @property
    def slot_accuracy(self) -> float:
        return self.all_correct / self.questions if self.questions else 0.0

    def as_dict(self, with_errors: bool = False) -> dict[str, Any]:
        data = asdict(self)
        data["intent_accuracy"] = round(self.intent_accuracy, 4)
        data["intent_and_slots_accuracy"] = round(self.slot_accuracy, 4)
        if not with_errors:
            data.pop("errors")
        return data


def load_questions(split: str) -> tuple[list[Question], date]:
    """The questions of ``dev``, ``heldout`` or ``all``, and the date relative periods use."""
    names = SPLITS if split == "all" else (split,)
    questions: list[Question] = []
    reference = date.today()
    for name in names:
        raw = (
            resources.files("wass_chat.agent.understanding.eval_set")
            .joinpath(f"{name.replace('-', '_')}.json")
            .read_text()
        )
        data = json.loads(raw)
        reference = date.fromisoformat(data["reference_date"])
        questions += [
            Question(q["text"], q["intent"], q["slots"], name, q.get("unknown"))
            for q in data["questions"]
        ]
    return questions, reference


def normalise(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """Arguments without ``None`` and without values equal to the tool's default."""
    defaults = TOOL_DEFAULTS.get(tool, {})
    return {
        k: v
        for k, v in arguments.items()
        if v is not None and not (k in defaults and defaults[k] == v)
    }


def evaluate(split: str = "dev", limit: int | None = None) -> Report:
    """Route every question of ``split`` and count what came out right."""
    from wass_chat.agent.understanding.nlu import load_times, shared_classifier
    from wass_chat.agent.understanding.router import route

    if split not in (*SPLITS, "all"):
        raise ValueError(f"unknown split {split!r}; use {', '.join(SPLITS)} or all")
    questions, reference = load_questions(split)
    questions = questions[:limit] if limit else questions
    shared_classifier()
    times = load_times()
    report = Report(split, len(questions))
    if times is not None:
        report.load_model_s = round(times.model_s, 3)
        report.load_exemplars_s = round(times.exemplars_s, 3)
    elapsed: list[float] = []
    for q in questions:
        start = time.perf_counter()
        intent = route(q.text, today=reference)
        elapsed.append(time.perf_counter() - start)
        got_intent = intent.name or ("tool" if intent.tool else "none")
        intent_ok = got_intent == q.intent
        slots_ok = intent_ok and normalise(intent.tool, intent.arguments) == normalise(
            intent.tool, q.slots
        )
        report.intent_correct += intent_ok
        report.all_correct += slots_ok
        report.asked_back += got_intent == "clarify"
        if q.out_of_scope:
            report.out_of_scope += 1
            if refused_or_asked_back(q, intent):
                report.out_of_scope_refused += 1
            else:
                report.out_of_scope_answered += 1
                slots_ok = False
        if intent.tool and intent.tool != q.intent:
            report.wrong_actions += 1
            report.side_effecting_misroutes += intent.tool in SIDE_EFFECTING_TOOLS
        if not slots_ok:
            report.errors.append(
                {
                    "text": q.text,
                    "expected": [q.intent, q.slots],
                    "got": [got_intent, normalise(intent.tool, intent.arguments)],
                }
            )
    report.mean_route_ms = round(1000 * sum(elapsed) / max(len(elapsed), 1), 2)
    report.max_route_ms = round(1000 * max(elapsed, default=0.0), 2)
    return report


def refused_or_asked_back(question: Question, intent: Intent) -> bool:
    """Whether an out-of-scope question was refused or asked back (see the module's docstring)."""
    if intent.name in ("none", "clarify") and not intent.tool:
        return True
    unknown = question.unknown
    if not unknown or intent.tool != question.intent:
        return False
    passed = [
        v
        for value in intent.arguments.values()
        for v in (value if isinstance(value, list) else [value])
    ]
    return unknown in passed  # a node to remove comes in a list


def format_report(report: Report) -> str:
    """The figures as a few plain lines."""
    return "\n".join(
        [
            f"split {report.split}: {report.questions} questions",
            f"intent accuracy:            {report.intent_accuracy:.1%} ({report.intent_correct})",
            f"intent + all slots:         {report.slot_accuracy:.1%} ({report.all_correct})",
            f"side-effecting misroutes:   {report.side_effecting_misroutes}",
            f"wrong tool runs:            {report.wrong_actions}",
            f"asked back:                 {report.asked_back}",
            f"out of scope: {report.out_of_scope_refused} refused or asked back / "
            f"{report.out_of_scope}, {report.out_of_scope_answered} answered as something else",
            f"model load {report.load_model_s:.2f} s, exemplar embedding "
            f"{report.load_exemplars_s:.2f} s, routing {report.mean_route_ms:.1f} ms mean "
            f"({report.max_route_ms:.1f} ms max)",
        ]
    )
