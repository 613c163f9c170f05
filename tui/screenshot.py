"""Export the README screenshot: the real app, offline, on the demo, as an SVG (headless).

``python -m tui.screenshot docs/screenshot.svg`` runs the app on a temporary ``WASS_HOME`` with
the real offline session, asks it to simulate a demo workflow and to explain a placement, waits
for every worker, and saves what the terminal shows. Fixed size; no clock on screen.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

SIZE = (140, 40)
QUESTIONS = ("/compare demo:montage-60", "/simulate demo:montage-60 scheduler=heft")


async def export_screenshot(target: Path, questions: tuple[str, ...] = QUESTIONS) -> Path:
    """Run the questions through the real offline session and save the screen to ``target``."""
    from tui.app import WassChatApp
    from tui.conversation_store import ConversationStore
    from tui.widgets.chat_input import ChatInput
    from wass_chat.agent.session import open_session
    from wass_chat.config import Settings

    with tempfile.TemporaryDirectory() as home:
        settings = Settings(home=Path(home))
        app = WassChatApp(
            lambda: open_session(settings, offline=True), ConversationStore(Path(home) / "history")
        )
        async with app.run_test(size=SIZE) as pilot:
            for question in questions:
                await app.workers.wait_for_complete()
                prompt = app.screen.query_one(ChatInput)
                prompt.cursor_blink = False
                prompt.value = question
                await pilot.press("enter")
                await app.workers.wait_for_complete()
                await pilot.pause()
            await app.workers.wait_for_complete()
            await pilot.pause(0.5)
            target.parent.mkdir(parents=True, exist_ok=True)
            app.save_screenshot(filename=target.name, path=str(target.parent))
    return target


def main() -> None:
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/screenshot.svg")
    os.environ.setdefault("WASS_HOME", tempfile.mkdtemp())
    print(asyncio.run(export_screenshot(target)))


if __name__ == "__main__":
    main()
