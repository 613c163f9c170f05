"""A job that reports its own start and end, to well under a millisecond.

sacct's Start and End are whole seconds, too coarse to compare a few-second task with the
simulator, or to learn its runtime from. Every job therefore frames its work with
``echo wass-start <epoch>`` and ``echo wass-end <epoch>`` (``date +%s.%N``, GNU coreutils, present
on every Linux compute node): a ``--scale`` job (or a task without a command) around a sleep, a
task's own command around that command, run in a subshell so its exit status is the job's and an
``exit`` inside it still reaches the end stamp. The times sit in the job's own output file, taken
on the node, independent of the controller's clock resolution.
"""

from __future__ import annotations

import re
from pathlib import Path

START_MARK = "wass-start"
END_MARK = "wass-end"
_STAMP = re.compile(rf"^({START_MARK}|{END_MARK}) (\d+(?:\.\d+)?)$", re.MULTILINE)


def stamped_sleep(seconds: float) -> str:
    """The job script: sleep ``seconds``, printing the epoch time before and after."""
    return f"echo {START_MARK} $(date +%s.%N); sleep {seconds:.3f}; echo {END_MARK} $(date +%s.%N)"


def stamped_command(command: str) -> str:
    """The job script of a task's own ``command``: stamped before and after, in a subshell, the
    job exiting with the command's status."""
    return (
        f"echo {START_MARK} $(date +%s.%N); ( {command}\n); rc=$?; "
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
