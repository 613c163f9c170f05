"""`wass-chat` commands of the agent area: ``ask`` (one question, for people and scripts)."""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:
    from wass_chat.agent.events import ApprovalDecision, ChatSession


def register(app: typer.Typer) -> None:
    """Add this area's commands to ``app``."""
    app.command("ask")(ask)


def ask(
    question: str = typer.Argument(..., help="The question, e.g. 'what if I add 4 nodes?'"),
    as_json: bool = typer.Option(False, "--json", help="Print answer, facts and ids as JSON."),
    offline: bool = typer.Option(False, "--offline", help="Do not contact Ollama."),
    yes: bool = typer.Option(
        False, "--yes", help="Approve a submission the answer proposes (otherwise: ask on a TTY)."
    ),
    repeat: int = typer.Option(
        1,
        "--repeat",
        min=1,
        max=100,
        help="Benchmark: answer N times in one session and print the latencies (first, warm).",
    ),
) -> None:
    """Ask the assistant one question; a proposed submission needs your explicit approval.

    Exits with 2 when the question could not be answered (an unknown job, an unreachable
    Slurm, another user's job...), after printing the one-line reason.
    """
    from wass_chat.agent.session import open_session
    from wass_chat.config import settings

    session = open_session(settings(), offline=True if offline else None)
    latencies = []
    for _ in range(repeat):
        started = time.perf_counter()
        result = asyncio.run(_answer(session, question, yes=yes, interactive=not as_json))
        latencies.append(time.perf_counter() - started)
    if repeat > 1:
        warm = statistics.median(latencies[1:])
        result["latency_s"] = {"first": latencies[0], "warm_median": warm}
        line = f"answer latency: first {latencies[0]:.2f} s, warm median {warm:.2f} s"
        print(f"{line} over {repeat - 1}", file=sys.stderr)
    from wass_chat.cli.output import emit

    emit(result, as_json, _render)
    if (result.get("facts") or {}).get("kind") == "error":
        raise typer.Exit(2)  # the answer said, in one line, what could not be answered


async def _answer(
    session: ChatSession, question: str, yes: bool, interactive: bool
) -> dict[str, Any]:
    from wass_chat.agent.events import ApprovalRequest, Final, ModeChanged, ToolCall, ToolResult

    result: dict[str, Any] = {
        "question": question,
        "mode": session.mode,
        "detail": "",
        "tool_calls": [],
        "approval": None,
    }
    request: ApprovalRequest | None = None
    async for event in session.send(question):
        if isinstance(event, ModeChanged):
            result.update(mode=event.mode, detail=event.detail)
        elif isinstance(event, ToolCall):
            result["tool_calls"].append({"name": event.name, "arguments": event.arguments})
        elif isinstance(event, ToolResult) and event.error:
            result.setdefault("tool_errors", []).append(event.error)
        elif isinstance(event, ApprovalRequest):
            request = event
        elif isinstance(event, Final):
            result.update(
                answer=event.text,
                facts=event.facts,
                cited_ids=list(event.cited_ids),
                verified=event.verified,
            )
    if request is not None:
        result["approval"] = await _decide(session, request, yes, interactive, result)
    return result


async def _decide(
    session: ChatSession,
    request: Any,
    yes: bool,
    interactive: bool,
    result: dict[str, Any],
) -> dict[str, Any]:
    """Approve only on ``--yes`` or a confirmation typed on a terminal; otherwise reject.

    ``--yes`` covers only a submission the question itself asked for (as the deterministic
    router reads it): a plan the model proposed for another question is never auto-approved.
    """
    from wass_chat.agent.understanding.router import route

    asked = route(str(result["question"])).tool == "submit_workflow"
    approved = yes and asked
    if not approved and interactive and sys.stdin.isatty():
        _render(result)
        result["answer_shown"] = True
        approved = typer.confirm(f"Submit {len(request.plan.get('jobs', []))} jobs to Slurm?")
    decision: ApprovalDecision = "approve" if approved else "reject"
    outcome = await session.resolve_approval(request.request_id, decision)
    return {
        "request_id": request.request_id,
        "decision": decision,
        "outcome": outcome.data,
        "summary": outcome.summary,
        "error": outcome.error,
    }


def _render(result: dict[str, Any]) -> None:
    from rich.markdown import Markdown

    from wass_chat.cli.output import console, err_console

    if not result.pop("answer_shown", False):
        err_console.print(f"[dim]mode: {result['mode']} ({result['detail']})[/]")
        console.print(Markdown(result.get("answer", "")))
    approval = result.get("approval")
    if approval:
        console.print(Markdown(approval["summary"]))
        if approval["decision"] == "reject" and not approval["error"]:
            err_console.print("Not submitted: pass --yes, or answer the prompt on a terminal.")
