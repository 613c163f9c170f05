"""A scripted :class:`ChatSession` for the TUI's tests: the agent contract, nothing more.

It answers by keyword so each test drives one flow: ``/simulate`` returns a Gantt trace and
similar cases, ``/trace-of NAME`` and ``/cases-of NAME`` only a trace or only cases about
workflow NAME, ``/submit`` asks for approval, ``slow`` streams for a long time (to cancel), and
anything else streams a short Markdown answer. It records every decision it receives, and
``submitted`` stands for the cluster: a plan lands there only through ``approve``/``edit``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from wass_chat.agent.events import (
    ApprovalDecision,
    ApprovalRequest,
    ChatEvent,
    Final,
    Mode,
    ModeChanged,
    Token,
    ToolCall,
    ToolResult,
)

GANTT = {
    "workflow": "montage-demo",
    "platform": "demo",
    "scheduler": "heft",
    "makespan": 100.0,
    "tasks": [
        {"task": "mProject_1", "node": "node-1", "start": 0.0, "end": 40.0},
        {"task": "mProject_2", "node": "node-2", "start": 0.0, "end": 35.0},
        {"task": "mDiff_1", "node": "node-1", "start": 40.0, "end": 70.0},
        {"task": "mDiff_2", "node": "node-1", "start": 45.0, "end": 60.0},
        {"task": "mAdd", "node": "node-2", "start": 70.0, "end": 100.0},
    ],
    "nodes": [{"name": "node-1", "cores": 2}, {"name": "node-2", "cores": 1}],
}
CASES = [
    {
        "id": "case-17",
        "similarity": 0.93,
        "makespan": 96.5,
        "workflow": "montage-50",
        "scheduler": "heft",
        "placements": {"mProject_1": "node-1", "mAdd": "node-2"},
    },
    {"id": "case-4", "similarity": 0.81, "makespan": 130.0, "workflow": "montage-60"},
]
PLAN = {
    "workflow": "montage.json",
    "partition": "debug",
    "jobs": [
        {"name": "mProject_1", "node": "node-1", "dependencies": []},
        {"name": "mAdd", "node": "node-2", "dependencies": ["mProject_1"]},
    ],
}
OFFLINE_SUMMARY = "**Simulation of montage-demo**\n\n- baseline: makespan 100.0 s\n"
"""What the offline agent answers with: its tool's summary, streamed as the answer."""
ANSWER = "Task **mAdd** went to `node-2` because its inputs were there.\n\n- makespan 100 s\n"


@dataclass
class ScriptedSession:
    """Implements the ChatSession protocol with canned, keyword-driven answers."""

    mode: Mode = "offline"
    token_delay: float = 0.0
    sent: list[str] = field(default_factory=list)
    decisions: list[tuple[str, ApprovalDecision, dict[str, Any] | None]] = field(
        default_factory=list
    )
    submitted: list[dict[str, Any]] = field(default_factory=list)
    cancelled: int = 0
    stream_closed: int = 0
    pending_requests: dict[str, dict[str, Any]] = field(default_factory=dict)
    digests: list[str | None] = field(default_factory=list)
    """The plan digest each decision named (the modal passes the one it showed)."""
    plans: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Plans to propose for a given ``/submit ...`` text (default: :data:`PLAN`)."""

    async def send(self, text: str) -> AsyncIterator[ChatEvent]:
        self.sent.append(text)
        if text == "/mode":
            yield ModeChanged("ollama", "qwen2.5:3b")
        if text.startswith("/simulate"):
            yield ToolCall("c1", "simulate", {"workflow": "montage-demo", "scheduler": "heft"})
            yield ToolResult("c1", "simulate", "makespan 100.0 s", {"gantt": GANTT})
            yield ToolCall("c2", "similar_cases", {"workflow": "montage-demo", "k": 2})
            yield ToolResult(
                "c2", "similar_cases", "2 cases", {"workflow": "montage-demo", "cases": CASES}
            )
            yield Final("Simulated **montage-demo** with heft: makespan 100.0 s.", {}, ("case-17",))
            return
        if text.startswith(("/trace-of ", "/cases-of ")):  # one result about workflow NAME
            workflow = text.split(maxsplit=1)[1]
            if text.startswith("/trace-of"):
                data: dict[str, Any] = {"gantt": {**GANTT, "workflow": workflow}}
            else:
                data = {"workflow": workflow, "cases": CASES}
            yield ToolCall("c6", "simulate", {"workflow": workflow})
            yield ToolResult("c6", "simulate", f"about {workflow}", data)
            yield Final(f"About {workflow}.")
            return
        if text.startswith("/submit"):
            request_id = f"req-{len(self.pending_requests) + 1}"
            plan = self.plans.get(text, PLAN)
            self.pending_requests[request_id] = plan
            digest = f"digest-of-{request_id}"
            yield ApprovalRequest(request_id, "submit montage.json", plan, digest)
            yield Final("The plan above waits for your approval.")
            return
        if text == "/offline-answer":
            yield ToolCall("c5", "simulate", {"workflow": "montage-demo"})
            yield ToolResult("c5", "simulate", OFFLINE_SUMMARY, {"kind": "simulation"})
            for line in OFFLINE_SUMMARY.splitlines(keepends=True):
                yield Token(line)
            yield Final(OFFLINE_SUMMARY)
            return
        if text.startswith("slow"):
            try:
                for index in range(10_000):
                    await asyncio.sleep(self.token_delay or 0.03)
                    yield Token(f"word{index} ")
                yield Final("never reached")
            finally:
                self.stream_closed += 1
            return
        for word in ANSWER.split(" "):
            if self.token_delay:
                await asyncio.sleep(self.token_delay)
            yield Token(word + " ")
        yield Final(ANSWER.replace("  ", " "), {"makespan": 100.0}, ("run-1",))

    async def resolve_approval(
        self,
        request_id: str,
        decision: ApprovalDecision,
        edited_plan: dict[str, Any] | None = None,
        digest: str | None = None,
    ) -> ToolResult:
        self.decisions.append((request_id, decision, edited_plan))
        self.digests.append(digest)
        plan = self.pending_requests.pop(request_id)
        if decision == "approve" and digest != f"digest-of-{request_id}":  # as the real gate
            return ToolResult("approval", "submit_workflow", "refused", {}, "wrong plan digest")
        if decision == "reject":
            return ToolResult("approval", "submit_workflow", "rejected: nothing submitted")
        self.submitted.append(edited_plan if decision == "edit" and edited_plan else plan)
        return ToolResult("approval", "submit_workflow", "submitted as job 4242", {"jobs": [4242]})

    def cancel(self) -> None:
        self.cancelled += 1
