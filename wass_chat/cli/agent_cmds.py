"""`wass-chat` commands of the agent area (filled in by its issue)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add this area's commands to ``app``."""


def open_tui(resume: bool = False) -> None:
    """Open the terminal app (until it exists: run the demo simulation and print it)."""
    from wass_chat.demo import run_demo

    run_demo()
