"""A job that reports its own start and end, to well under a millisecond.

sacct's Start and End are whole seconds, too coarse to compare a few-second task with the
simulator, or to learn its runtime from. Every job therefore frames its work with
``echo wass-start <epoch>`` and ``echo wass-end <epoch>`` (``date +%s.%N``, GNU coreutils, present
on every Linux compute node): a ``--scale`` job (or a task without a command) around a sleep, a
task's own command around that command, its words quoted as the workflow file gives them (never
expanded by the job's shell), run in a subshell so its exit status is the job's. The times sit
in the job's own output file, taken on the node, independent of the controller's clock
resolution.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from pathlib import Path

START_MARK = "wass-start"
END_MARK = "wass-end"
_STAMP = re.compile(rf"^({START_MARK}|{END_MARK}) (\d+(?:\.\d+)?)$", re.MULTILINE)


def stamped_sleep(seconds: float) -> str:
    """The job script: sleep ``seconds``, printing the epoch time before and after."""
    return f"echo {START_MARK} $(date +%s.%N); sleep {seconds:.3f}; echo {END_MARK} $(date +%s.%N)"


def literal_command(argv: Sequence[str]) -> str:
    """``argv`` as one shell command line that runs exactly these words: each one quoted
    (:func:`shlex.quote`), so ``$(...)``, backticks, ``;``, globs and newlines in a workflow file
    reach the program as text and are never run or expanded by the job's shell."""
    if not argv:
        raise ValueError("an empty command has no program to run")
    return shlex.join(argv)


def stamped_command(argv: Sequence[str]) -> str:
    """The job script of a task's own command (its argument vector): stamped before and after,
    run in a subshell, the job exiting with the command's status. The words are quoted
    (:func:`literal_command`): the script never expands what the workflow file says."""
    return (
        f"echo {START_MARK} $(date +%s.%N); ( {literal_command(argv)} ); rc=$?; "
        f"echo {END_MARK} $(date +%s.%N); exit $rc"
    )


def read_stamps(output: Path) -> tuple[float, float] | None:
    """(start, end) epoch seconds from a finished job's output; None if absent or incomplete."""
    try:
        text = output.read_text(errors="replace")
    except OSError:
        return None
    found = {mark: float(value) for mark, value in _STAMP.findall(text)}
    if START_MARK in found and END_MARK in found:
        return found[START_MARK], found[END_MARK]
    return None
