"""Output helpers shared by commands: ``--json`` for scripts, rich tables for people."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
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


def write_atomic(path: Path, content: str | bytes) -> None:
    """Write a file so that a failure never leaves it half-written (temp file + rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = "wb" if isinstance(content, bytes) else "w"
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, mode) as fh:
            fh.write(content)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
