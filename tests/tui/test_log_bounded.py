"""A long conversation keeps the chat log's live widgets bounded (issue #45 item 7)."""

from __future__ import annotations

from textual.app import App, ComposeResult

from tui.widgets.chat_log import AnswerMessage, ChatLog, Notice, UserMessage


class LogApp(App[None]):
    def compose(self) -> ComposeResult:
        yield ChatLog(id="chat-log", max_items=10)


async def test_the_log_keeps_the_newest_items_and_counts_the_hidden_ones() -> None:
    async with LogApp().run_test(size=(80, 24)) as pilot:
        log = pilot.app.query_one(ChatLog)
        for n in range(30):
            log.add_user(f"question {n}")
            log.start_answer(f"answer **{n}**")
        await pilot.pause()
        items = list(log.children)
        assert len(items) == 11  # 10 items and the notice counting the hidden ones
        marker = items[0]
        assert isinstance(marker, Notice) and marker.text.startswith("50 earlier items")
        assert str(marker.render()).startswith("50 earlier items")
        assert [w.text for w in items[1:3]] == ["question 25", "answer **25**"]
        assert isinstance(items[-1], AnswerMessage) and items[-1].text == "answer **29**"
        assert len(list(log.query(UserMessage))) == 5
        log.clear()
        await pilot.pause()
        log.add_user("again")
        await pilot.pause()
        assert [type(w) for w in log.children] == [UserMessage] and log.hidden == 0
