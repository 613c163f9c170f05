"""The long-session bench through the app: the same questions typed into the chat, headless.

:func:`wass_chat.agent.session_bench.bench_session` measures the session alone; the app adds
its own per-question cost (a Markdown answer, tool blocks and notices mounted in the chat log,
the conversation saved after each answer). :func:`bench_app` drives the real app
(``App.run_test``) on one offline session and samples memory and each answer's latency, from
Enter to the last worker done, at the chosen question numbers, with the chat log's live items.
"""

from __future__ import annotations

import asyncio
import time
import tracemalloc
from collections.abc import Callable, Sequence
from pathlib import Path

from textual.pilot import Pilot

from tui.app import WassChatApp
from tui.conversation_store import ConversationStore
from tui.screens.chat import ChatScreen
from tui.widgets.chat_input import ChatInput
from tui.widgets.chat_log import ChatLog
from wass_chat.agent.events import ChatSession
from wass_chat.agent.session_bench import BENCH_QUESTIONS, Sample, take_sample


async def _ask(pilot: Pilot[None], text: str) -> None:
    await pilot.app.workers.wait_for_complete()
    prompt = pilot.app.screen.query_one(ChatInput)
    prompt.focus()
    prompt.value = text
    await pilot.press("enter")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def bench_app(
    session: ChatSession,
    history: Path,
    count: int,
    at: Sequence[int],
    trace_heap: bool = False,
    questions: Sequence[str] = BENCH_QUESTIONS,
    progress: Callable[[int, float], None] | None = None,
) -> tuple[list[Sample], list[int]]:
    """Ask ``count`` questions through the app; the samples and, at each, the chat log's
    children (what a long session must keep bounded)."""
    wanted = set(at)
    samples: list[Sample] = []
    live: list[int] = []
    latencies: list[float] = []
    app = WassChatApp(lambda: session, ConversationStore(history))

    async def run() -> None:
        async with app.run_test(size=(140, 40)) as pilot:
            await pilot.app.workers.wait_for_complete()
            await pilot.pause()
            for number in range(1, count + 1):
                text = questions[(number - 1) % len(questions)]
                started = time.perf_counter()
                await _ask(pilot, text)
                latencies.append(time.perf_counter() - started)
                if progress is not None:
                    progress(number, latencies[-1])
                if number in wanted:
                    samples.append(take_sample(number, text, latencies, len(questions), trace_heap))
                    chat = next(s for s in app.screen_stack if isinstance(s, ChatScreen))
                    live.append(len(chat.query_one(ChatLog).children))

    if trace_heap:
        tracemalloc.start()
    try:
        asyncio.run(run())
    finally:
        if trace_heap:
            tracemalloc.stop()
    return samples, live
