"""`wass-chat` commands of the agent area: ``ask`` (one question, for people and scripts)."""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from wass_chat.cli import model_options

if TYPE_CHECKING:
    from wass_chat.agent.events import ApprovalDecision, ChatSession


def register(app: typer.Typer) -> None:
    """Add this area's commands to ``app``."""
    app.command("ask")(ask)


def ask(
    question: str = typer.Argument(..., help="The question, e.g. 'what if I add 4 nodes?'"),
    as_json: bool = typer.Option(False, "--json", help="Print answer, facts and ids as JSON."),
    offline: bool = typer.Option(False, "--offline", help="Do not contact the model server."),
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
    model_backend: str | None = model_options.BACKEND,
    model_url: str | None = model_options.URL,
    model: str | None = model_options.MODEL,
    api_key_env: str | None = model_options.KEY_ENV,
    api_key_file: Path | None = model_options.KEY_FILE,
) -> None:
    """Ask the assistant one question; a proposed submission needs your explicit approval.

    Exits with 2 when the question could not be answered (an unknown job, an unreachable
    Slurm, another user's job...), after printing the one-line reason. The model server
    (--model-backend, --model-url, --model, the key's --api-key-env or --api-key-file) is the
    settings' unless given here; `--json` names the one that answered under "model".
    """
    from wass_chat.agent.session import open_session
    from wass_chat.config import settings

    model_options.apply_model_options(model_backend, model_url, model, api_key_env, api_key_file)

    session = open_session(settings(), offline=True if offline else None)
    latencies = []
    for _ in range(repeat):
        started = time.perf_counter()
        result = _answered(session, question, yes=yes, interactive=not as_json)
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


def _answered(session: ChatSession, question: str, yes: bool, interactive: bool) -> dict[str, Any]:
    """The answer's result; a failure no layer below turned into an answer is one line and
    exit 2 (``--debug`` shows its traceback), never a traceback instead of ``--json``'s JSON."""
    from sim.errors import UserFacingError

    try:
        return asyncio.run(_answer(session, question, yes=yes, interactive=interactive))
    except (UserFacingError, typer.Exit, typer.Abort):
        raise
    except Exception as exc:
        why = " ".join(str(exc).split())[:200]
        raise UserFacingError(
            f"the answer failed ({type(exc).__name__}{': ' + why if why else ''})"
        ) from exc


async def _answer(
    session: ChatSession, question: str, yes: bool, interactive: bool
) -> dict[str, Any]:
    from wass_chat.agent.events import ApprovalRequest, Final, ModeChanged, ToolCall, ToolResult

    result: dict[str, Any] = {
        "question": question,
        "mode": session.mode,
        "detail": "",
        "model": None,
        "tool_calls": [],
        "approval": None,
    }
    request: ApprovalRequest | None = None
    async for event in session.send(question):
        if isinstance(event, ModeChanged):
            result.update(mode=event.mode, detail=event.detail, model=event.model)
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
                checked=event.checked,
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

    ``--yes`` covers only the plan for the workflow the question itself named
    (:func:`~wass_chat.agent.plan_binding.yes_refusal`, from the person's words, never the
    model's tool arguments); a plan for anything else is refused in one line. Either way the
    approval names the digest of the plan shown, so nothing else can be submitted.
    """
    from wass_chat.agent.plan_binding import yes_refusal

    refusal = None
    if yes:
        refusal = yes_refusal(str(result["question"]), request.plan, _workflow_resolver(session))
    approved = yes and refusal is None
    if not yes and interactive and sys.stdin.isatty():
        _render(result)
        result["answer_shown"] = True
        approved = typer.confirm(
            f"Submit these {len(request.plan.get('jobs', []))} jobs to Slurm "
            f"(plan {request.digest[:12]})?"
        )
    decision: ApprovalDecision = "approve" if approved else "reject"
    outcome = await session.resolve_approval(
        request.request_id, decision, None, request.digest if approved else None
    )
    return {
        "request_id": request.request_id,
        "decision": decision,
        "digest": request.digest,
        "refused": refusal,
        "outcome": outcome.data,
        "summary": outcome.summary,
        "error": outcome.error,
    }


def _workflow_resolver(session: ChatSession) -> Any:
    """How the session resolves a workflow name (a file, a demo): the same meaning as its tools."""
    facts = getattr(session, "facts", None)
    if facts is None:  # a session without sources cannot have the plan checked: refuse
        from sim.errors import InputError

        def unresolvable(ref: str) -> Any:
            raise InputError(ref, ["this session cannot resolve workflows"])

        return unresolvable
    return facts.sources.workflow


def _render(result: dict[str, Any]) -> None:
    from rich.markdown import Markdown

    from wass_chat.answers.submission_plan import PENDING_PREFIX
    from wass_chat.cli.output import console, err_console

    approval = result.get("approval")
    if not result.pop("answer_shown", False):
        # One line however long (a pipe's console is 80 wide), the detail never read as markup.
        mode = f"mode: {result['mode']} ({result['detail']})"
        err_console.print(mode, style="dim", markup=False, highlight=False, soft_wrap=True)
        answer = result.get("answer", "")
        if approval:  # decided: the outcome line below replaces "nothing submitted yet"
            lines = answer.splitlines()
            answer = "\n".join(x for x in lines if not x.startswith(PENDING_PREFIX)).rstrip()
        console.print(Markdown(answer))
    if approval:
        if approval.get("refused"):
            err_console.print(f"Refused: {approval['refused']}", markup=False, highlight=False)
        console.print(Markdown(approval["summary"]))
        if approval["decision"] == "reject" and not approval["error"] and not approval["refused"]:
            err_console.print("Not submitted: pass --yes, or answer the prompt on a terminal.")
