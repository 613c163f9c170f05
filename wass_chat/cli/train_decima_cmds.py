"""``wass-chat train decima``: the Decima-style task selector (policy.learned.decima_train)."""

from __future__ import annotations

from pathlib import Path

import typer

from policy.learned.decima_config import CHECKPOINT, DecimaTraining
from sim.atomic_files import require_folder
from wass_chat.cli.output import console, emit

_DECIMA = DecimaTraining()
"""`train decima`'s defaults are the training config's (they made the shipped checkpoint)."""


def train_decima(
    steps: int = typer.Option(
        _DECIMA.steps, "--steps", min=1, help="Updates to train for (the budget; never wall-clock)."
    ),
    seed: int = typer.Option(_DECIMA.seed, help="Training seed."),
    out: Path = typer.Option(CHECKPOINT, help="Where the checkpoint goes."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Train the Decima-style selector with REINFORCE on small streams, in the planner."""
    from dataclasses import replace

    from policy.learned.decima_train import train_and_save

    require_folder(out)  # before the training, not after it
    cfg = replace(_DECIMA, steps=steps, seed=seed)
    result = train_and_save(cfg, out, None if as_json else _print_line)
    data = {
        "checkpoint": str(out),
        "steps": result.steps,
        "cpu_seconds": result.cpu_seconds,
        "kept_step": result.kept_step,
        "validation": result.validation,
    }

    def render(d: dict[str, object]) -> None:
        console.print(
            f"{result.steps} steps in {result.cpu_seconds:.0f} s of CPU; kept the weights of "
            f"step {result.kept_step}; checkpoint {d['checkpoint']}"
        )

    emit(data, as_json, render)


def _print_line(line: str) -> None:
    """A training progress line, on stdout."""
    print(line, flush=True)
