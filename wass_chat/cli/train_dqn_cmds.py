"""``wass-chat train dqn``: the DQN scheduler with prioritized replay (policy.learned.dqn)."""

from __future__ import annotations

from pathlib import Path

import typer

from wass_chat.cli.output import console, emit


def train_dqn(
    steps: int = typer.Option(
        10_000, "--steps", min=1, help="Decisions to train on (the budget; never wall-clock)."
    ),
    learning_starts: int = typer.Option(
        500, "--learning-starts", min=0, help="Decisions collected before the first update."
    ),
    seed: int = typer.Option(0, help="Training seed."),
    validation: int = typer.Option(
        10, "--validation-streams", min=0, help="Streams the kept weights are chosen on."
    ),
    out: Path = typer.Option(Path("out/dqn"), help="Where the checkpoint and metrics go."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Train the DQN on streams of workflows arriving on small GPU clusters, in the simulator."""
    from policy.learned.dqn import DQNConfig, train

    cfg = DQNConfig(
        seed=seed,
        total_steps=steps,
        learning_starts=min(learning_starts, steps),
        validation_streams=validation,
        out_dir=str(out),
    )
    result = train(cfg, progress=not as_json)
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
