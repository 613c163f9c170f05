"""A long offline session, measured: memory and answer latency as the questions pile up.

A chat session lives as long as the app is open, so whatever one answer leaves behind adds up:
:func:`bench_session` asks one offline session the questions of :data:`BENCH_QUESTIONS` in turn
(a comparison, simulations, a placement explained, cases, a what-if, the cluster's status) and
samples the process's resident memory (``VmRSS``), Python's own heap (tracemalloc, when asked)
and each answer's latency at chosen question numbers. ``wass-chat agent bench-session`` prints
it; docs/agent.md has the figures.
"""

from __future__ import annotations

import asyncio
import gc
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from wass_chat.agent.events import ChatSession, Final
from wass_chat.config import Settings

BENCH_QUESTIONS: tuple[str, ...] = (
    "compare schedulers on fork-join-20",
    "/simulate montage-60 scheduler=cpop",
    "why did task merge_bams of run demo-genomics-49-heft go to node gpu02?",
    "/cases genomics-49 3",
    "/whatif bandwidth 2",
    "/status",
    "/simulate fork-join-20 scheduler=heft",
    "/status demo-genomics-49-heft",
)
"""One of each kind of answer that runs a tool (and so may leave something behind)."""


@dataclass(frozen=True)
class Sample:
    """The process at one question number: after that question's answer."""

    question: int
    text: str
    latency_s: float
    """That question's answer."""
    round_latency_s: float
    """The mean answer of the round of questions ending here (one of each kind, fewer at the
    start): what a latency trend compares, as each question's cost differs."""
    rss_mb: float
    python_heap_mb: float | None
    """tracemalloc's current traced size (None when not traced)."""


def rss_mb() -> float:
    """This process's resident set size (``VmRSS`` of /proc/self/status) in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def take_sample(
    number: int, text: str, latencies: Sequence[float], round_size: int, trace_heap: bool
) -> Sample:
    """The process after question ``number`` (``latencies`` so far, the last one its own),
    read after a full garbage collection so it counts what is kept, not what is not reached."""
    gc.collect()
    heap = tracemalloc.get_traced_memory()[0] / 2**20 if trace_heap else None
    last_round = latencies[-round_size:]
    round_mean = sum(last_round) / len(last_round)
    return Sample(number, text, latencies[-1], round_mean, rss_mb(), heap)


async def _answer(session: ChatSession, text: str) -> Final:
    final: Final | None = None
    async for event in session.send(text):
        if isinstance(event, Final):
            final = event
    if final is None:
        raise RuntimeError(f"the session gave no final answer to {text!r}")
    return final


def bench_session(
    session: ChatSession,
    count: int,
    at: Sequence[int],
    trace_heap: bool = False,
    questions: Sequence[str] = BENCH_QUESTIONS,
    progress: Callable[[int, float], None] | None = None,
) -> list[Sample]:
    """Ask ``count`` questions (cycling through ``questions``) on one event loop, as the app
    does, and return a :class:`Sample` after each question number in ``at``.

    A sampled question's memory is read after a full garbage collection, so it counts what
    the session keeps, not what the collector has not reached yet. An answer that is an error
    raises: a bench of failures would measure nothing.
    """
    wanted = set(at)
    samples: list[Sample] = []
    latencies: list[float] = []
    if trace_heap:
        tracemalloc.start()

    async def run() -> None:
        for number in range(1, count + 1):
            text = questions[(number - 1) % len(questions)]
            started = time.perf_counter()
            final = await _answer(session, text)
            latency = time.perf_counter() - started
            latencies.append(latency)
            if (final.facts or {}).get("kind") == "error":
                raise RuntimeError(f"question {number} ({text!r}) failed: {final.text}")
            if progress is not None:
                progress(number, latency)
            if number in wanted:
                samples.append(take_sample(number, text, latencies, len(questions), trace_heap))

    try:
        asyncio.run(run())
    finally:
        if trace_heap:
            tracemalloc.stop()
    return samples


def bench_report(samples: Sequence[Sample], settings: Settings) -> dict[str, object]:
    """The samples as ``--json`` prints them."""
    return {"home": str(settings.home), "samples": [asdict(s) for s in samples]}
