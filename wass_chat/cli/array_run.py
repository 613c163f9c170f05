"""The CLI side of ``--slurm-array``: the flags' help, the array's progress on stderr, and a
failed task as exit 1. The arrays themselves run below the CLI (:mod:`wass_chat.slurm.arrays`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import typer

from wass_chat.cli.output import err_console

if TYPE_CHECKING:
    from rich.status import Status

    from wass_chat.slurm.arrays.status import ArrayProgress

SLURM_ARRAY_HELP = "Run as N Slurm array tasks, then merge (re-running submits only the missing)."
ARRAY_DIR_HELP = (
    "Shards and logs, on a filesystem the nodes share (default: WASS_HOME/arrays/KIND-DIGEST)."
)


class ConsoleReport:
    """An array's progress on stderr: kept lines printed, each poll on one status line."""

    def __init__(self) -> None:
        self._status: Status | None = None

    def note(self, line: str) -> None:
        """Print ``line`` (after closing the status line, if one is showing)."""
        self.close()
        err_console.print(line, soft_wrap=True)

    def poll(self, state: ArrayProgress) -> None:
        """Show the array's state on the status line."""
        if self._status is None:
            self._status = err_console.status("waiting for the array")
            self._status.start()
        self._status.update(state.line())

    def close(self) -> None:
        """Take the status line down."""
        if self._status is not None:
            self._status.stop()
            self._status = None


@contextmanager
def array_report() -> Iterator[ConsoleReport]:
    """A :class:`ConsoleReport`; an array task that ended without its shard is printed as one
    error line and exit 1 (nothing written: the same command again re-runs only it)."""
    from wass_chat.slurm.arrays.run import ArrayIncomplete

    report = ConsoleReport()
    try:
        yield report
    except ArrayIncomplete as exc:
        report.close()
        err_console.print(f"error: {exc}", soft_wrap=True)
        raise typer.Exit(1) from None
    finally:
        report.close()
