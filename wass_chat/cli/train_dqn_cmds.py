"""``wass-chat train dqn``: the DQN scheduler with prioritized replay (policy.learned.dqn)."""

from __future__ import annotations

from pathlib import Path

import typer

from policy.learned.dqn_config import DQNConfig
from wass_chat.cli.output import console, emit

_DQN = DQNConfig()
"""`train dqn`'s defaults are the config's (tests/learned/test_dqn.py)."""


def train_dqn(
    steps: int = typer.Option(
        _DQN.total_steps,
        "--steps",
        min=1,
        help="Decisions to train on (the budget; never wall-clock).",
    ),
    learning_starts: int = typer.Option(
        _DQN.learning_starts,
        "--learning-starts",
        min=0,
        help="Decisions collected before the first update.",
    ),
    seed: int = typer.Option(_DQN.seed, help="Training seed."),
    validation: int = typer.Option(
        _DQN.validation_streams,
        "--validation-streams",
        min=0,
        help="Streams the kept weights are chosen on.",
    ),
    out: Path = typer.Option(Path(_DQN.out_dir), help="Where the checkpoint and metrics go."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Train the DQN on streams of workflows arriving on small GPU clusters, in the simulator."""
    from policy.learned.dqn import train

    cfg = DQNConfig(
        seed=seed,
        total_steps=steps,
        learning_starts=min(learning_starts, steps),
        validation_streams=validation,
        out_dir=str(out),
    )
    result = train(cfg, None if as_json else _print_line)
    data = {
        "checkpoint": str(result.checkpoint),
        "metrics": str(result.metrics_path),
        "steps": result.steps,
        "episodes": result.episodes,
        "minutes": result.seconds / 60,
        "kept": result.kept,
        "validation_ratio_to_eft": result.validation_ratio,
    }

    def render(d: dict[str, object]) -> None:
        console.print(
            f"{result.steps} steps ({result.episodes} episodes) in {result.seconds / 60:.1f} min; "
            f"kept the weights of {result.kept} (validation makespan and SLR / eft "
            f"{result.validation_ratio:.4f}); checkpoint {d['checkpoint']}"
        )

    emit(data, as_json, render)


def _print_line(line: str) -> None:
    """A training progress line, on stdout as training always printed them."""
    print(line, flush=True)
