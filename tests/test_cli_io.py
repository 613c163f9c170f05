"""Where the CLI reads and writes: ``demo:<name>`` wherever a workflow file goes, an output
that cannot be written is one line and exit 2, and the help says what each group holds."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from wass_chat.cli import main

WRITERS = [
    ["workflow", "generate", "chain", "--tasks", "5"],
    ["platform", "generate", "--nodes", "4"],
    ["platform", "export-simgrid", "demo"],
    ["plugin", "export", "--no-nodes"],
]


def test_submit_plans_a_demo_workflow(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("WASS_HOME", str(tmp_path))
    argv = ["submit", "demo:fork-join-20", "--platform", "demo", "--dry-run", "--json"]
    assert main(argv) == 0, capsys.readouterr().err
    plan = json.loads(capsys.readouterr().out)
    assert plan["workflow"] == "fork-join-20" and len(plan["jobs"]) == 20
    assert all(job["argv"][:2] == ["sbatch", "--parsable"] for job in plan["jobs"])


@pytest.mark.parametrize("argv", WRITERS, ids=lambda a: " ".join(a[:2]))
@pytest.mark.parametrize("where", ["under a file", "a directory"])
def test_an_output_that_cannot_be_written_is_one_line_and_exit_2(
    tmp_path: Path, argv: list[str], where: str, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("a file, not a directory\n")
    target = blocker / "out.file" if where == "under a file" else tmp_path
    assert main([*argv, "-o", str(target)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: cannot write {target}") and "\n" not in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blocker"]  # no temp file left


def test_help_describes_the_platform_group_as_more_than_slurm(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    platform = [
        row
        for row in (line.strip("│ ") for line in out.splitlines())
        if row.startswith("platform ")
    ]
    assert platform and "Generate" in platform[0], platform
    assert "Platforms from Slurm" not in out


def test_the_commands_page_lists_the_recipes_and_shapes_generate_accepts() -> None:
    from sim.recipes import RECIPES
    from sim.shapes import SHAPES

    page = (Path(__file__).resolve().parents[1] / "docs" / "commands.md").read_text()
    row = next(line for line in page.splitlines() if "`wass-chat workflow generate" in line)
    recipes = re.search(r"WfCommons recipes \(([^)]*)\)", row)
    shapes = re.search(r"synthetic shapes \(([^)]*)\)", row)
    assert recipes and shapes, row
    assert set(recipes[1].split(", ")) == set(RECIPES)
    assert set(shapes[1].split(", ")) == set(SHAPES)


@pytest.mark.parametrize(
    ("terminal", "expected"), [(False, "a 1/2\na 2/2\n"), (True, "a 1/2\ra 2/2\r\n")]
)
def test_progress_goes_one_line_each_into_a_pipe_and_in_place_on_a_terminal(
    terminal: bool, expected: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``validate-swf ... 2>&1 | cat`` printed every update on one line, joined by carriage
    returns: into a pipe or a file each update is a line of its own."""
    import io

    from rich.console import Console

    from wass_chat.cli import output

    written = io.StringIO()
    monkeypatch.setattr(output, "err_console", Console(file=written, force_terminal=terminal))
    output.progress_line("a 1/2")
    output.progress_line("a 2/2")
    output.progress_done()
    assert written.getvalue() == expected
