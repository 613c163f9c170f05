"""Choosing the model in the app (F4): the models Ollama has, and a new session on the pick.

Ollama itself cannot run here; the loopback server of the agent's tests speaks its protocol.
"""

from __future__ import annotations

from pathlib import Path

from tests.agent.fake_ollama import FakeOllama
from tests.tui.pilot_steps import chat_screen, settle
from tests.tui.scripted_session import ScriptedSession
from tui.app import ModelSessions, WassChatApp
from tui.conversation_store import ConversationStore
from tui.screens.model_choice import ModelChoiceScreen
from tui.widgets.chat_log import Notice
from tui.widgets.status_header import StatusHeader
from wass_chat.agent.events import ChatSession
from wass_chat.agent.model_server import served_models
from wass_chat.agent.session import open_session
from wass_chat.config import Settings


async def test_f4_lists_ollamas_models_and_answers_with_the_chosen_one(tmp_path: Path) -> None:
    with FakeOllama(models=("qwen2.5:3b", "smollm2:135m")) as server:
        settings = Settings(home=tmp_path / "home", ollama_host=server.url)

        def on_model(model: str) -> ChatSession:
            return open_session(settings.model_copy(update={"ollama_model": model}), offline=False)

        models = ModelSessions(lambda: served_models(settings), on_model)
        store = ConversationStore(tmp_path / "history")
        app = WassChatApp(lambda: ScriptedSession(), store, model_sessions=models)
        async with app.run_test(size=(120, 36)) as pilot:
            await settle(pilot)
            await pilot.press("f4")
            await settle(pilot)
            picker = pilot.app.screen
            assert isinstance(picker, ModelChoiceScreen)
            listed = picker.query_one("#models")
            names = [listed.get_option_at_index(i).id for i in range(listed.option_count)]
            assert names == ["qwen2.5:3b", "smollm2:135m"]
            await pilot.press("down", "enter")
            await settle(pilot)
            header = chat_screen(pilot).query_one(StatusHeader)
            assert header.mode == "ollama" and "smollm2:135m" in header.detail
            assert any("Model: smollm2:135m" in n.text for n in chat_screen(pilot).query(Notice))


async def test_without_ollama_the_picker_says_the_offline_mode_answers(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home", ollama_host="http://127.0.0.1:9")
    models = ModelSessions(lambda: served_models(settings), lambda m: ScriptedSession())
    app = WassChatApp(
        lambda: ScriptedSession(), ConversationStore(tmp_path / "h"), model_sessions=models
    )
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("f4")
        await settle(pilot)
        status = str(pilot.app.screen.query_one("#model-status").render())
        assert "offline mode answers" in status
        await pilot.press("escape")
        await settle(pilot)
        assert chat_screen(pilot).query_one(StatusHeader).mode == "offline"
