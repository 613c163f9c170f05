"""Every key of the app, in one table: the bindings, the F1 help and the command palette are
built from it, so none of them can miss a key (the help once missed F4, Ctrl+O, Ctrl+F, Ctrl+Y).

A key's ``owner`` says who binds it: the app (``WassChatApp``, whatever screen is open), the
chat screen (``ChatScreen``), or someone else: the prompt widget or Textual itself, which bind
their keys themselves; those rows are here only so the help lists them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from textual.binding import Binding, BindingType

Owner = Literal["app", "chat", "prompt", "textual"]


@dataclass(frozen=True)
class Key:
    """One row of the table: what the keys do, and who binds them to which action."""

    keys: str
    """Textual key names, comma-separated: ``f1,question_mark``. Only the first is in the footer."""
    summary: str
    """What the keys do, as the help and the palette say it."""
    owner: Owner
    action: str = ""
    """The owner's ``action_<name>``; empty for keys bound by the prompt or Textual."""
    label: str = ""
    """The footer's short name."""
    title: str = ""
    """The command palette's entry; empty keeps the action out of the palette."""
    footer: bool = True
    """Whether the first key shows in the footer (the others never do)."""

    @property
    def display(self) -> str:
        """The keys as the help shows them: ``F1 or ?``."""
        return " or ".join(key_display(k) for k in self.keys.split(","))


_NAMES = {"question_mark": "?", "up": "↑", "down": "↓", "right": "→", "escape": "Escape"}


def key_display(key: str) -> str:
    """A Textual key name as people write it: ``ctrl+o`` -> ``Ctrl+O``, ``f4`` -> ``F4``."""
    *modifiers, name = key.split("+")
    short = len(name) == 1 or re.fullmatch(r"f\d+", name)
    shown = _NAMES.get(name, name.upper() if short else name.title())
    return "+".join([*(m.title() for m in modifiers), shown])


KEYS: tuple[Key, ...] = (  # the order of the help; per owner, of the footer
    # keys, what they do, owner, action, footer label, palette title
    Key("enter", "send the message", "prompt"),
    Key("up,down", "walk through sent messages", "prompt"),
    Key("tab,right", "complete a slash command (Tab elsewhere: the next widget)", "prompt"),
    Key("shift+tab", "the previous widget", "textual"),
    Key(
        "escape",
        "cancel the running answer; close a dialog",
        "chat",
        "cancel_answer",
        "Cancel",
        "Cancel answer",
        footer=False,
    ),
    Key(
        "f1,question_mark",
        "keys, slash commands and what to ask; ? only outside the prompt",
        "app",
        "help",
        "Help",
        "Help",
    ),
    Key(
        "f2",
        "show or hide the run panel (Gantt, utilisation, cases)",
        "chat",
        "toggle_panel",
        "Run panel",
        "Run panel",
    ),
    Key("f3", "open the run in full screen", "chat", "open_run", "Run detail", "Run detail"),
    Key(
        "ctrl+n",
        "start a new conversation",
        "chat",
        "new_conversation",
        "New chat",
        "New conversation",
    ),
    Key(
        "ctrl+o",
        "switch to, rename or delete a saved conversation",
        "chat",
        "conversations",
        "Conversations",
        "Conversations",
    ),
    Key("ctrl+f", "find in the conversation", "chat", "find", "Find", "Find"),
    Key(
        "ctrl+y",
        "copy the found answer, else the last one, as Markdown",
        "chat",
        "copy_answer",
        "Copy answer",
        "Copy answer",
    ),
    Key(
        "ctrl+t",
        "switch between the light and the dark theme",
        "app",
        "toggle_theme",
        "Theme",
        "Toggle light/dark theme",
    ),
    Key(
        "ctrl+s",
        "export the conversation as a Markdown report",
        "app",
        "export_report",
        "Export",
        "Export report",
    ),
    Key("f4", "choose the server's model that answers", "app", "choose_model", "Model", "Model"),
    Key("ctrl+c,super+c", "copy the selected text", "textual"),
    Key("ctrl+p", "command palette", "textual"),
    Key("ctrl+q", "quit", "textual"),
)


def bindings(owner: Owner) -> list[BindingType]:
    """The Textual bindings of ``owner``'s rows, in table order."""
    made: list[BindingType] = []
    for key in (k for k in KEYS if k.owner == owner):
        first, *others = key.keys.split(",")
        made.append(Binding(first, key.action, key.label, show=key.footer))
        made += [Binding(other, key.action, key.label, show=False) for other in others]
    return made


def palette_entries() -> tuple[Key, ...]:
    """The rows the command palette offers (they have a title), in table order."""
    return tuple(k for k in KEYS if k.title)
