"""A long chat session stays flat: answers leave no simulations or networks behind.

The leak this guards against (#45 item 8): every dynamic simulation an answer ran stayed alive
with its forks and its scheduler's network, so memory and latency grew with each question. The
count of live objects of those types must not grow over 30 questions once the session is warm
(the bench with figures: ``wass-chat agent bench-session``, docs/agent.md).
"""

from __future__ import annotations

import gc
from collections import Counter

import torch

from sim.fast import CoreRun
from wass_chat.agent.events import Final
from wass_chat.agent.session import open_session
from wass_chat.agent.session_bench import bench_session
from wass_chat.config import Settings

QUESTIONS = (
    "/simulate fork-join-20 scheduler=dqn",  # a learned policy, simulated dynamically
    "/cases genomics-49 3",
    "/whatif bandwidth 2",
    "/status demo-genomics-49-heft",
    "/simulate montage-60 scheduler=cpop",
)


def _live() -> Counter[str]:
    gc.collect()
    counts: Counter[str] = Counter()
    for obj in gc.get_objects():
        if isinstance(obj, CoreRun):
            counts["CoreRun"] += 1
        elif isinstance(obj, torch.nn.Module):
            counts["Module"] += 1
        elif isinstance(obj, Final):
            counts["Final"] += 1
    return counts


def test_thirty_questions_leave_no_simulation_or_network_behind(settings: Settings) -> None:
    session = open_session(settings, offline=True)
    bench_session(session, len(QUESTIONS), at=[], questions=QUESTIONS)  # warm-up: one round
    warm = _live()
    samples = bench_session(session, 30, at=[30], questions=QUESTIONS)
    assert samples[0].question == 30
    assert _live() == warm, f"after warm-up {dict(warm)}, after 30 more questions {dict(_live())}"
