"""Output helpers shared by commands: ``--json`` for scripts, rich tables for people."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import typer
from rich.console import Console

console = Console()
err_console = Console(stderr=True)


def progress_line(text: str) -> None:
    """One progress update on stderr: rewritten in place on a terminal, a line of its own in a
    pipe or a file (where a carriage return runs the updates together into one long line)."""
    if err_console.is_terminal:
        err_console.print(text, end="\r", highlight=False, soft_wrap=True)
    else:
        err_console.print(text, highlight=False, soft_wrap=True)


def progress_done() -> None:
    """End a run of :func:`progress_line` updates (on a terminal, the line they rewrote)."""
    if err_console.is_terminal:
        err_console.print()


def emit(data: Any, as_json: bool, render: Callable[[Any], None]) -> None:
    """Print ``data`` as JSON (one document on stdout) or through ``render`` for people."""
    if as_json:
        typer.echo(json.dumps(data, indent=2, default=str))
    else:
        render(data)
