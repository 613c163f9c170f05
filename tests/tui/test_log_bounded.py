"""A long conversation keeps the chat log's live widgets bounded (issue #45 item 7)."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.geometry import Region

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


ANSWER = "**Answer {n}**\n\n- one\n- two\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"


async def test_older_answers_are_drawn_as_one_widget_each_and_stay_findable() -> None:
    """Textual's Markdown mounts a widget per block, list item and table cell; every one is laid
    out again on each new item. Answers older than the newest LIVE_ANSWERS_FROM items become one
    widget each, so the widgets the layout walks stop growing with the log."""
    from tui.widgets.chat_log import LIVE_ANSWERS_FROM, SettledAnswer

    async with LogApp().run_test(size=(80, 24)) as pilot:
        log = pilot.app.query_one(ChatLog)
        log.max_items = 100
        counts = []
        for n in range(40):
            log.add_user(f"question {n}")
            log.start_answer(ANSWER.format(n=n))
            await pilot.pause()
            counts.append(len(list(log.query("*"))))
        settled = list(log.query(SettledAnswer))
        live = list(log.query(AnswerMessage))
        assert len(live) == LIVE_ANSWERS_FROM // 2 and len(settled) == 40 - len(live)
        assert settled[0].text == ANSWER.format(n=0)
        shown = settled[0].render_lines(Region(0, 0, *settled[0].size))
        drawn = "\n".join(strip.text for strip in shown)
        assert "Answer 0" in drawn and "two" in drawn and "**" not in drawn, drawn
        assert [a.text for a in live][-1] == ANSWER.format(n=39)
        per_question = (counts[-1] - counts[19]) / 20  # once answers settle: 2 widgets each
        assert per_question == 2, counts
        assert counts[19] - counts[0] > 0  # a live answer alone is many widgets
        assert live[0].query("*") and not settled[0].children
