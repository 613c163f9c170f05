"""Whether a Slurm cluster answers from here, as the app's header and greeting say it.

:func:`probe_slurm` runs :func:`wass_chat.slurm.availability.ensure_slurm` for ``squeue`` (the
command that lists the queue needs the controller): a missing command or configuration is found
without starting a process, a controller is asked with ``scontrol ping`` (at most about 2 s,
remembered for 30 s when it answered). It blocks, so the app calls it in a thread worker.
Nothing here imports Textual.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from sim.errors import ServiceUnavailable
from wass_chat.slurm.availability import ensure_slurm

SlurmState = Literal["checking", "reachable", "unreachable", "unchecked"]
"""``unchecked``: the command is installed but the check is switched off
(``WASS_SLURM_PRECHECK=off``), so whether the controller answers is not known."""
PROBE_COMMAND = "squeue"


@dataclass(frozen=True)
class SlurmStatus:
    """The answer of one probe: a state for the header, and in words why (its tooltip)."""

    state: SlurmState
    detail: str = ""

    @property
    def label(self) -> str:
        """What the header shows."""
        return {
            "checking": "Slurm: checking…",
            "reachable": "Slurm: reachable",
            "unreachable": "Slurm: unreachable",
            "unchecked": "Slurm: not checked",
        }[self.state]


CHECKING = SlurmStatus("checking", "asking whether a Slurm controller answers")
SlurmProbe = Callable[[], SlurmStatus]


def probe_slurm() -> SlurmStatus:
    """Ask whether Slurm's controller answers (blocking; see the module's docstring)."""
    try:
        ready = ensure_slurm(PROBE_COMMAND, needs_controller=True)
    except ServiceUnavailable as exc:
        return SlurmStatus("unreachable", exc.one_line())
    except OSError as exc:  # e.g. a slurm.conf that vanished between the check's steps
        return SlurmStatus("unreachable", f"Slurm's configuration could not be read: {exc}")
    if ready.version is None:
        return SlurmStatus("unchecked", f"{PROBE_COMMAND} is installed; the check is off")
    where = f" ({ready.conf.path})" if ready.conf is not None else ""
    return SlurmStatus("reachable", f"Slurm {ready.version} answers{where}")
