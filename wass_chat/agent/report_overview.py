"""The report's summary written by the local model, every number checked before it is used.

:func:`local_model_writer` probes the model server as the chat does
(:func:`wass_chat.agent.model_server.probe`: Ollama or an OpenAI-compatible one, within its
timeout) and returns a
writer for :func:`wass_chat.report.overview.build_overview`: it shows the model the report's facts
(headline numbers and findings, nothing else), asks for a short summary with recommendations, and
checks the answer with the agent's verifier (:func:`.verify.verify_answer`) and then against the
figures recomputed from the tables (:func:`.overview_check.overview_problems`: a leader who is
not the exact leader, a figure rounded away): either marks the draft ungrounded, and the report
keeps its deterministic text.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from wass_chat.agent.model_server import ModelServer, chat_model, connection_errors, probe
from wass_chat.answers.checks.overview_check import overview_problems
from wass_chat.answers.checks.verify import verify_answer
from wass_chat.config import Settings
from wass_chat.report.overview import Draft, SummaryWriter

INSTRUCTIONS = (
    "You write the opening summary of a Slurm cluster's scheduling audit report for its "
    "administrators: one paragraph of at most 120 words on what the figures say together, then "
    "one to three recommendations. Use only the numbers in the facts below, written as they "
    "appear there; do not compute new ones, and name no user, account or partition the facts "
    "do not name. Plain text, no Markdown, no headings."
)


def summary_prompt(facts: Mapping[str, Any], draft: str) -> str:
    """The user message: the facts as JSON, and the draft the rules wrote, to improve on."""
    return (
        "Facts (JSON):\n"
        + json.dumps(facts, indent=1, default=str)
        + "\n\nA draft written by rules from the same facts (rewrite it for a reader):\n"
        + draft
    )


def local_model_writer(settings: Settings) -> tuple[SummaryWriter | None, str]:
    """A writer on the configured model, or None and the reason none is available."""
    checked = probe(settings)
    if not checked.ok:
        return None, checked.detail
    return ModelSummaryWriter(settings), ""


class ModelSummaryWriter:
    """Ask the local model once (no tools, temperature 0) and verify its answer."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def __call__(
        self, facts: Mapping[str, Any], fallback: str, figures: Mapping[str, Any]
    ) -> Draft:
        import httpx
        from langchain_core.messages import HumanMessage, SystemMessage

        model = ModelServer.of(self.settings).model
        failures: tuple[type[BaseException], ...] = (
            httpx.HTTPError,
            *connection_errors(self.settings),
            OSError,
            ValueError,
        )
        try:
            reply = chat_model(self.settings).invoke(
                [SystemMessage(INSTRUCTIONS), HumanMessage(summary_prompt(facts, fallback))]
            )
        except failures as exc:
            return Draft("", model, False, f"the model did not answer ({type(exc).__name__})")
        text = reply.content if isinstance(reply.content, str) else ""
        verdict = verify_answer(text, facts)
        wrong = overview_problems(text, figures) if verdict.ok else []
        why = "; ".join(wrong) if wrong else verdict.reason()
        return Draft(text, model, verdict.ok and not wrong and bool(text.strip()), why)
