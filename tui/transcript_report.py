"""A conversation as a self-contained Markdown report: questions, answers, tool facts, schedule.

Auditors get what the chat showed, including every tool call with its arguments and result, the
last schedule's per-node utilisation and the cases that were retrieved. Nothing here imports
Textual.
"""

from __future__ import annotations

import json

from tui.case_records import case_id, case_makespan
from tui.conversation_store import Conversation
from tui.gantt_data import format_seconds, node_utilisation, trace_from_json


def render_conversation_report(conversation: Conversation) -> str:
    """The Markdown text of the report."""
    lines = [f"# wass-chat conversation {conversation.id}", ""]
    lines += [f"Started {conversation.created}.", ""]
    for entry in conversation.entries:
        if entry.role == "user":
            lines += [f"## Q: {entry.text}", ""]
        elif entry.role == "assistant":
            lines += [entry.text, ""]
        elif entry.role == "notice":
            lines += [f"> {entry.text}", ""]
        elif entry.tool is not None:
            tool = entry.tool
            status = f"failed: {tool['error']}" if tool.get("error") else tool.get("summary", "")
            arguments = json.dumps(tool.get("arguments", {}), default=str, sort_keys=True)
            lines += [f"- tool `{tool.get('name', '?')}` `{arguments}`: {status}", ""]
    if conversation.gantt:
        trace = trace_from_json(conversation.gantt)
        lines += [f"## Last schedule: {trace.title}", "", "| node | tasks | utilisation |"]
        lines.append("|---|---:|---:|")
        for node, used in node_utilisation(trace).items():
            lines.append(f"| {node} | {len(trace.bars_on(node))} | {used:.0%} |")
        lines.append("")
    if conversation.cases:
        lines += ["## Retrieved cases", "", "| case | similarity | makespan |", "|---|---:|---:|"]
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
