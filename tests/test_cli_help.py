"""Every command's ``--help`` as a user reads it at 80 columns: its docstring reflowed (typer
prints a docstring's own line breaks, so paragraphs came out ragged), and every word of it
printed (rich markup would swallow a ``[...]``)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from wass_chat.cli import app, reflow


def commands(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        yield from commands(sub, (*path, name))


ALL = list(commands(typer.main.get_command(app)))


def test_reflow_joins_a_paragraphs_lines_and_keeps_list_items() -> None:
    text = """First line
    goes on.

    A paragraph
    over two lines:
    - an item
      continued
    1. a numbered one, ``--quoted``"""
    assert reflow(text) == (
        "First line goes on.\n\nA paragraph over two lines:\n- an item\n  continued\n"
        "1. a numbered one, --quoted"
    )


def test_the_tree_is_walked() -> None:
    names = {" ".join(path) for path, _ in ALL}
    assert {"whatif learn", "sacct efficiency", "bench", "kb stats"} <= names


@pytest.mark.parametrize("path", [path for path, _ in ALL], ids=lambda p: " ".join(p) or "root")
def test_help_is_reflowed_and_printed_whole(path: tuple[str, ...], tmp_path: Path) -> None:
    command = dict(ALL)[path]
    text = command.help or ""
    # a line break inside a sentence: the next line starts lower-case or with a bracket
    assert not re.search(r"\n[a-z(]", text) and "``" not in text, text
    out = CliRunner().invoke(
        app, [*path, "--help"], env={"COLUMNS": "80", "WASS_HOME": str(tmp_path)}
    )
    assert out.exit_code == 0, out.output
    printed = " ".join(out.output.split())
    assert [w for w in text.split() if w not in printed] == []
