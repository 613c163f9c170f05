"""`wass-chat estimates`: a history of realised executions, and how good each estimate is.

``estimates seed`` fills a knowledge base with realised executions of the bench's recipes and
platform kinds under history seeds (never the bench's); ``estimates error`` reports, on the
bench's own instances, the error of user requests, per-category means and the knowledge base's
predictions against the realised compute times (MAPE over every task-node pair).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from wass_chat.cli.output import console, emit

if TYPE_CHECKING:
    from policy.bench.matrix import Instance
    from sim.uncertainty import RuntimePredictions

estimates_app = typer.Typer(
    help="Runtime estimates under uncertainty: seed a history, measure estimate errors.",
    no_args_is_help=True,
)

_RECIPES = "montage:60,genome:60,epigenomics:50"


def _matrix(recipes: str, platforms: str, seeds: int) -> list[Instance]:
    from policy.bench.matrix import build_matrix, parse_platforms, parse_recipes

    return build_matrix(parse_recipes(recipes), parse_platforms(platforms), seeds)


def _config(noise: float, uncertainty_seed: int) -> Any:
    from sim.uncertainty import UncertaintyConfig

    return UncertaintyConfig(seed=uncertainty_seed).scaled(noise)


def predictions_for(
    kb_dir: Path | None,
    instances: Sequence[Instance],
    noise: float,
    uncertainty_seed: int,
    k: int = 8,
) -> dict[str, RuntimePredictions]:
    """Each instance's ``kb`` predictions from the knowledge base in ``kb_dir``."""
    from kb.estimate_bench import instance_predictions
    from kb.store import KnowledgeBase

    assert kb_dir is not None, "callers check --kb first"
    kb = KnowledgeBase(kb_dir)
    try:
        return instance_predictions(kb, instances, _config(noise, uncertainty_seed), k)
    finally:
        kb.close()


@estimates_app.command("seed")
def seed(
    kb_dir: Path = typer.Option(..., "--kb", help="Knowledge base directory (created if new)."),
    recipes: str = typer.Option(_RECIPES, "--recipes", help="Recipes with task budgets."),
    platforms: str = typer.Option("hetero:8", "--platforms", help="KIND:NODES specs."),
    seeds: int = typer.Option(10, "--seeds", min=1, help="History seeds per recipe/platform."),
    first_seed: int = typer.Option(1000, "--first-seed", min=0, help="First history seed."),
    noise: float = typer.Option(1.0, "--noise", min=0.0, help="Scale of realised spreads."),
    uncertainty_seed: int = typer.Option(0, "--uncertainty-seed"),
    as_json: bool = typer.Option(False, "--print-json", help="Print the result as JSON."),
) -> None:
    """Store realised executions (HEFT on user requests, replayed on noisy values)."""
    from kb.estimate_bench import fill_history, history_matrix
    from kb.store import KnowledgeBase
    from policy.bench.matrix import parse_platforms, parse_recipes

    history = history_matrix(parse_recipes(recipes), parse_platforms(platforms), seeds, first_seed)
    kb = KnowledgeBase(kb_dir)
    try:
        added = fill_history(kb, history, _config(noise, uncertainty_seed))
        total = kb.count()
    finally:
        kb.close()
    result = {"planned": len(history), "added": added, "cases": total, "kb": str(kb_dir)}
    emit(result, as_json, lambda r: console.print(
        f"{r['added']} realised executions added ({r['planned']} planned); {r['cases']} cases"
        f" in {r['kb']}"
    ))  # fmt: skip


@estimates_app.command("error")
def error(
    kb_dir: Path = typer.Option(..., "--kb", help="Knowledge base filled by `estimates seed`."),
    recipes: str = typer.Option(_RECIPES, "--recipes", help="Recipes with task budgets."),
    platforms: str = typer.Option("hetero:8", "--platforms", help="KIND:NODES specs."),
    seeds: int = typer.Option(3, "--seeds", min=1, help="Bench seeds 0..N-1."),
    noise: float = typer.Option(1.0, "--noise", min=0.0, help="Scale of realised spreads."),
    uncertainty_seed: int = typer.Option(0, "--uncertainty-seed"),
    k: int = typer.Option(8, "--k", min=1, help="Cases retrieved per instance."),
    as_json: bool = typer.Option(False, "--print-json", help="Print the result as JSON."),
) -> None:
    """MAPE of user, per-category-mean and kb estimates against realised compute times."""
    from kb.estimate_bench import estimate_errors
    from policy.bench.matrix import BenchSpecError

    if not kb_dir.is_dir():
        raise BenchSpecError(
            "--kb", [f"no knowledge base at {str(kb_dir)!r}: run `wass-chat estimates seed` first"]
        )
    instances = _matrix(recipes, platforms, seeds)
    predictions = predictions_for(kb_dir, instances, noise, uncertainty_seed, k)
    summary = estimate_errors(instances, _config(noise, uncertainty_seed), predictions)
    emit(summary, as_json, _render)


def _render(summary: dict[str, Any]) -> None:
    from rich.table import Table

    table = Table(title=f"{summary['instances']} instances: planned vs realised compute time")
    for column in ("estimates", "MAPE (95% CI)", "median |log ratio|", "bias (planned/actual)"):
        table.add_column(column, justify="left" if column == "estimates" else "right")
    for mode in ("user", "mean", "kb"):
        m = summary[mode]
        low, high = m["mape_ci"]
        table.add_row(
            mode, f"{100 * m['mape']:.1f}% ({100 * low:.1f}-{100 * high:.1f})",
            f"{m['median_abs_log_ratio']:.3f}", f"{m['bias']['value']:.3f}",
        )  # fmt: skip
    console.print(table)
