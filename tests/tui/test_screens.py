"""Every secondary screen opens, shows what it should, and closes back to the chat."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from textual.widgets import Markdown

from tests.tui.pilot_steps import ask, chat_screen, settle
from tests.tui.scripted_session import CASES
from tui.app import DARK_THEME, LIGHT_THEME, WassChatApp
from tui.keys import KEYS, key_display
from tui.screens.approval import ApprovalScreen
from tui.screens.case_detail import CaseDetailScreen
from tui.screens.chat import ChatScreen
from tui.screens.help import HelpScreen
from tui.screens.report_export import ReportExportScreen
from tui.screens.run_detail import RunDetailScreen
from tui.widgets.chat_input import ChatInput
from tui.widgets.gantt import GanttChart


async def test_f1_opens_help_and_escape_closes_it(make_app: Callable[..., WassChatApp]) -> None:
    async with make_app().run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("f1")
        assert isinstance(pilot.app.screen, HelpScreen)
        await pilot.press("escape")
        assert isinstance(pilot.app.screen, ChatScreen)
        assert pilot.app.screen.query_one(ChatInput).has_focus


async def test_f1_help_lists_every_key_the_app_and_the_chat_screen_bind(
    make_app: Callable[..., WassChatApp],
) -> None:
    """Every binding of the running app and of its chat screen, Textual's own included (not
    its hidden system ones), is a row of the help F1 opens; and every palette action too."""
    async with make_app().run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app, chat = pilot.app, pilot.app.screen
        bound = {
            (b.key, b.action)
            for node in (app, chat)
            for group in node._bindings.key_to_bindings.values()
            for b in group
            if not b.system
        }
        assert {("f4", "choose_model"), ("ctrl+o", "conversations"), ("ctrl+q", "quit")} <= bound
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        keys_section = app.screen.query_one(Markdown).source.split("## Keys")[1].split("\n## ")[0]
        rows = re.findall(r"^\| `([^`]+)` \| (.+) \|$", keys_section, re.M)
        listed = {shown for keys, _ in rows for shown in keys.split(" or ")}
        missing = sorted(
            f"{key} ({action})" for key, action in bound if key_display(key) not in listed
        )
        assert not missing, f"F1 help misses {missing}: add them to tui/keys.py's KEYS"
        titles = {c.title for c in app.get_system_commands(chat)}
        assert {k.title for k in KEYS if k.owner in ("app", "chat")} <= titles


async def test_question_mark_types_in_the_prompt_but_opens_help_elsewhere(
    make_app: Callable[..., WassChatApp],
) -> None:
    async with make_app().run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        assert pilot.app.screen.query_one(ChatInput).value == "?"
        pilot.app.screen.set_focus(None)
        await pilot.press("question_mark")
        assert isinstance(pilot.app.screen, HelpScreen)


async def test_run_detail_and_case_detail(make_app: Callable[..., WassChatApp]) -> None:
    async with make_app().run_test(size=(80, 24)) as pilot:
        await ask(pilot, "/simulate")
        await pilot.press("f3")
        screen = pilot.app.screen
        assert isinstance(screen, RunDetailScreen)
        gantt = screen.query_one(GanttChart)
        assert gantt.trace is not None and len(gantt.trace.bars) == 5
        assert gantt.max_rows_per_node is None
        table = screen.query_one("#run-detail-cases")
        table.focus()
        await pilot.press("enter")
        case_screen = pilot.app.screen
        assert isinstance(case_screen, CaseDetailScreen)
        assert case_screen.case == CASES[0]
        placements = case_screen.query_one("#case-placements")
        assert placements.row_count == 2
        await pilot.press("escape")
        await pilot.press("escape")
        assert isinstance(pilot.app.screen, ChatScreen)


async def test_case_opens_from_the_run_panel(make_app: Callable[..., WassChatApp]) -> None:
    async with make_app().run_test(size=(140, 40)) as pilot:
        await ask(pilot, "/simulate")
        table = chat_screen(pilot).query_one("#cases")
        table.focus()
        await pilot.press("down", "enter")
        assert isinstance(pilot.app.screen, CaseDetailScreen)
        assert pilot.app.screen.case["id"] == "case-4"


async def test_export_writes_a_markdown_report(
    make_app: Callable[..., WassChatApp], tmp_path: Path
) -> None:
    async with make_app().run_test(size=(80, 24)) as pilot:
        await ask(pilot, "/simulate")
        await pilot.press("ctrl+s")
        dialog = pilot.app.screen
        assert isinstance(dialog, ReportExportScreen)
        target = tmp_path / "out" / "report.md"
        dialog.query_one("#export-path").value = str(target)  # type: ignore[attr-defined]
        await pilot.click("#export")
        await settle(pilot)
        text = target.read_text()
        assert "## Q: /simulate" in text
        assert "| node-1 | 3 |" in text
        assert "case-17" in text


async def test_ctrl_t_toggles_the_theme(make_app: Callable[..., WassChatApp]) -> None:
    async with make_app().run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert pilot.app.theme == DARK_THEME
        await pilot.press("ctrl+t")
        assert pilot.app.theme == LIGHT_THEME
        await pilot.press("ctrl+t")
        assert pilot.app.theme == DARK_THEME


async def test_command_palette_offers_the_app_commands(
    make_app: Callable[..., WassChatApp],
) -> None:
    async with make_app().run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        titles = {c.title for c in pilot.app.get_system_commands(pilot.app.screen)}
        assert {"Help", "Export report", "Run panel", "New conversation"} <= titles
        await pilot.press("ctrl+p")
        await pilot.press(*"export")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(pilot.app.screen, ReportExportScreen)


async def test_usable_at_80x24(make_app: Callable[..., WassChatApp]) -> None:
    """At the smallest size the prompt, the header and the answer all fit on the screen, the
    panel replaces the chat when opened, and the approval buttons are on screen."""
    async with make_app().run_test(size=(80, 24)) as pilot:
        await ask(pilot, "/simulate")
        screen = chat_screen(pilot)
        assert screen.has_class("-narrow") and not screen.panel_open
        prompt = screen.query_one(ChatInput)
        assert prompt.region.bottom <= 23 and prompt.region.width >= 70
        await pilot.press("f2")
        assert screen.panel_open
        assert screen.query_one("#run-panel").region.width == 80
        assert not screen.query_one("#chat-column").display or (
            screen.query_one("#chat-column").region.width == 0
        )
        await pilot.press("escape")
        assert not screen.panel_open
        await ask(pilot, "/submit montage.json")
        modal = pilot.app.screen
        assert isinstance(modal, ApprovalScreen)
        for button in ("#reject", "#edit", "#approve"):
            region = modal.query_one(button).region
            assert region.y >= 0 and region.bottom <= 24, (button, region)
        await pilot.click("#edit")
        region = modal.query_one("#approve").region
        assert region.bottom <= 24
