"""Output helpers shared by commands: ``--json`` for scripts, rich tables for people."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import typer
from rich.console import Console

console = Console()
err_console = Console(stderr=True)


def emit(data: Any, as_json: bool, render: Callable[[Any], None]) -> None:
    """Print ``data`` as JSON (one document on stdout) or through ``render`` for people."""
    if as_json:
        typer.echo(json.dumps(data, indent=2, default=str))
    else:
        render(data)
