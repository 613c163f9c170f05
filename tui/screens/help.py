"""Key bindings and slash commands (F1 or ?)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

from tui.keys import KEYS
from tui.widgets.chat_input import SLASH_COMMANDS
from wass_chat.agent.understanding.intents import INTENTS


def help_markdown() -> str:
    """The help text; built from the same tables the app binds, so it cannot drift."""
    keys = "\n".join(f"| `{key.display}` | {key.summary} |" for key in KEYS)
    commands = "\n".join(f"| `{c.usage}` | {c.summary} |" for c in SLASH_COMMANDS)
    asked = "\n".join(f"- {spec.examples[0]}" for spec in INTENTS if spec.tool)
    return (
        "# wass-chat\n\nAsk about placements, simulate what-ifs, submit workflows. "
        "Anything that acts on the cluster asks for your approval first.\n\n"
        f"## Keys\n\n| key | action |\n|---|---|\n{keys}\n\n"
        f"## Slash commands\n\n| command | does |\n|---|---|\n{commands}\n\n"
        "## Or ask in plain English (no slash, typos are fine)\n\n"
        f"{asked}\n"
    )


class HelpScreen(ModalScreen[None]):
    """A modal page of help; any of Escape, F1, ? or q closes it."""

    BINDINGS = [  # noqa: RUF012
        Binding("escape,f1,question_mark,q", "close", "Close"),
    ]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-dialog"):
            yield Markdown(help_markdown())

    def action_close(self) -> None:
        self.dismiss(None)
