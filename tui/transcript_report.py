"""A conversation as a self-contained Markdown report: questions, answers, tool facts, schedule.

Auditors get what the chat showed, including every tool call with its arguments and result, the
last schedule's per-node utilisation and the cases that were retrieved. Nothing here imports
Textual.
"""

from __future__ import annotations

import json

from tui.case_records import case_id, case_makespan
from tui.conversation_store import Conversation, Entry
from tui.gantt_data import format_seconds, node_utilisation, trace_from_json


def render_conversation_report(conversation: Conversation) -> str:
    """The Markdown text of the report: every answer once.

    A tool's summary is printed only when no answer of the same turn already says it (offline,
    the answer *is* the summary; online, the model's words may differ from the facts).
    """
    lines = [f"# {conversation.name or 'wass-chat conversation'} ({conversation.id})", ""]
    lines += [f"Started {conversation.created}.", ""]
    entries = conversation.entries
    for index, entry in enumerate(entries):
        if entry.role == "user":
            lines += [f"## Q: {entry.text}", ""]
        elif entry.role == "assistant":
            lines += [entry.text, ""]
        elif entry.role == "notice":
            lines += [f"> {entry.text}", ""]
        elif entry.tool is not None:
            tool = entry.tool
            arguments = json.dumps(tool.get("arguments", {}), default=str, sort_keys=True)
            call = f"- tool `{tool.get('name', '?')}` `{arguments}`"
            summary = str(tool.get("summary", "")).strip()
            if tool.get("error"):
                lines += [f"{call}: failed: {tool['error']}", ""]
            elif not summary or _answered(entries, index, summary):
                lines += [f"{call}: its result is the answer below", ""]
            else:
                lines += [f"{call}:", "", summary, ""]
    if conversation.gantt:
        trace = trace_from_json(conversation.gantt)
        lines += [f"## Last schedule: {trace.title}", "", "| node | tasks | utilisation |"]
        lines.append("|---|---:|---:|")
        for node, used in node_utilisation(trace).items():
            lines.append(f"| {node} | {len(trace.bars_on(node))} | {used:.0%} |")
        lines.append("")
    if conversation.cases:
        about = f" similar to {conversation.cases_subject}" if conversation.cases_subject else ""
        lines += [
            f"## Retrieved cases{about}",
            "",
            "| case | similarity | makespan |",
            "|---|---:|---:|",
        ]
        for case in conversation.cases:
            similarity = case.get("similarity")
            makespan = case_makespan(case)
            lines.append(
                f"| {case_id(case)} "
                f"| {similarity if similarity is not None else '–'} "
                f"| {format_seconds(makespan) if makespan is not None else '–'} |"
            )
        lines.append("")
    return "\n".join(lines)


def _answered(entries: list[Entry], index: int, summary: str) -> bool:
    """Whether an answer after ``entries[index]``, before the next question, contains
    ``summary``."""
    for entry in entries[index + 1 :]:
        if entry.role == "user":
            return False
        if entry.role == "assistant" and summary in entry.text:
            return True
    return False
