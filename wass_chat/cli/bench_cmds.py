"""`wass-chat bench`: compare schedulers on a matrix of workflows x platforms x seeds."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from policy.bench.run import DEFAULT_RECIPES, DEFAULT_SCHEDULERS
from sim.atomic_files import write_atomic, write_output
from wass_chat.cli.array_run import ARRAY_DIR_HELP, SLURM_ARRAY_HELP
from wass_chat.cli.bench_arrivals import ARRIVALS_HELP, bench_arrivals
from wass_chat.cli.output import console, emit
from wass_chat.slurm.arrays.config import ArrayConfig

if TYPE_CHECKING:
    from policy.bench.matrix import Instance
    from policy.bench.run import InstanceRunner
    from policy.bench.runner import InstanceOutcome, RunSpec
    from sim.uncertainty import RuntimePredictions


ESTIMATES_HELP = (
    "Plan on estimates, replay on realised values: user (walltime requests), mean (per-category"
    " means), kb (predicted from the knowledge base's realised executions, see --kb), oracle "
    "(the realised values). Default: the exact setting."
)
LOAD_HELP = (
    "A seeded background load every scheduler plans around and runs on: share=S,horizon=H,"
    "seed=K,seen=1 (defaults 0.5, 1.0, 0, 1: half the nodes held whole from time 0 until a "
    "uniform time in [0, H] lower bounds of the workflow's makespan; seen=0 hides it from the "
    "planners). Default: an idle cluster."
)
_ARRAY = ArrayConfig()
"""`--slurm-array`'s defaults are the config's (tests/slurm/test_array_config.py)."""


def register(app: typer.Typer) -> None:
    """Add this area's commands to ``app``."""
    app.command("bench")(bench)
    from wass_chat.cli.estimate_cmds import estimates_app

    app.add_typer(estimates_app, name="estimates")


def bench(
    workflows: list[str] = typer.Option(
        [], "--workflows", help="WfFormat files or directories (repeatable)."
    ),
    recipes: str = typer.Option(
        "", "--recipes", help=f"Recipes with task budgets, e.g. {DEFAULT_RECIPES}."
    ),
    platforms: str = typer.Option(
        "",
        "--platforms",
        help="KIND:NODES specs (KIND hetero, homo or gpu) or platform files, comma-separated "
        "(default hetero:8; gpu:16 with --arrivals).",
    ),
    schedulers: str = typer.Option(
        "", "--schedulers", help=f"Comma-separated (default {DEFAULT_SCHEDULERS})."
    ),
    seeds: int = typer.Option(3, "--seeds", min=1, help="Seeds 0..N-1 per workflow/platform."),
    network_model: str = typer.Option("fair", "--network-model", help="fair or ideal."),
    jobs: int = typer.Option(1, "--jobs", "-j", min=1, help="Worker processes."),
    peers: str = typer.Option("", "--peers", help="'saga' adds SAGA's schedulers as peers."),
    optimal: bool = typer.Option(
        False, "--optimal", help="Also solve 50 small instances exactly (CP-SAT): optimality gaps."
    ),
    json_path: Path | None = typer.Option(None, "--json", help="Write the full JSON here."),
    markdown_path: Path | None = typer.Option(None, "--markdown", help="Write Markdown here."),
    plots: Path | None = typer.Option(None, "--plots", help="Directory for box-plot PNGs."),
    as_json: bool = typer.Option(False, "--print-json", help="Print the summary as JSON."),
    estimates: str = typer.Option("", "--estimates", help=ESTIMATES_HELP),
    noise: float = typer.Option(
        1.0, "--noise", help="Scale of every realised-value spread (0: actual = nominal)."
    ),
    uncertainty_seed: int = typer.Option(
        0, "--uncertainty-seed", help="Seeds node-class slowdowns and request factors."
    ),
    load: str = typer.Option("", "--load", help=LOAD_HELP),
    kb_dir: Path | None = typer.Option(
        None,
        "--kb",
        help="Knowledge base of realised executions for --estimates kb, and for the "
        "learned policy's own retrieval under --estimates user (`wass-chat estimates seed`).",
    ),
    perfect_history: bool = typer.Option(
        False,
        "--perfect-history",
        help="Instead of --kb: the predictions infinitely many earlier runs would give (every "
        "task's typical runtime and every node's slowdown exact; the run's own variation "
        "unknown). The bound on what retrieval can give; with --estimates user or kb.",
    ),
    reruns: int = typer.Option(
        0,
        "--reruns",
        min=0,
        help="Under --estimates user, mean or kb: also replay every plan on N fresh runs of "
        "each instance (the run's own variation redrawn) and record its mean makespan "
        "(expected_makespan; `estimates compare --expected`): what a plan gives on average, "
        "not on one run's luck.",
    ),
    slurm_array: int = typer.Option(_ARRAY.tasks, "--slurm-array", min=0, help=SLURM_ARRAY_HELP),
    array_dir: Path | None = typer.Option(_ARRAY.directory, "--array-dir", help=ARRAY_DIR_HELP),
    memory_mb: int = typer.Option(_ARRAY.memory_mb, "--slurm-mem", help="MB per array task."),
    arrivals: str = typer.Option("", "--arrivals", help=ARRIVALS_HELP),
    window: float = typer.Option(
        300.0, "--window", help="With --arrivals: seconds over which each stream arrives."
    ),
    stream_ccr: float = typer.Option(
        0.1, "--stream-ccr", help="With --arrivals: CCR of the streams' generated workflows."
    ),
) -> None:
    """Run every scheduler on every instance in the simulator and compare makespans."""
    if arrivals:
        conflicting = {
            "--workflows": bool(workflows),
            "--recipes": bool(recipes),
            "--peers": bool(peers),
            "--optimal": optimal,
            "--estimates": bool(estimates),
            "--load": bool(load),
            "--kb": kb_dir is not None,
            "--perfect-history": perfect_history,
            "--reruns": bool(reruns),
            "--slurm-array": bool(slurm_array),
        }
        bench_arrivals(
            arrivals,
            window,
            stream_ccr,
            platforms,
            schedulers,
            seeds,
            network_model,
            jobs,
            json_path,
            markdown_path,
            plots,
            as_json,
            conflicting,
        )
        return
    from rich.progress import Progress, TaskID

    from policy.bench.run import BenchConfig, plan_bench, run_bench

    cfg = BenchConfig(
        workflows=tuple(workflows),
        recipes=recipes,
        platforms=platforms,
        schedulers=schedulers,
        seeds=seeds,
        network_model=network_model,
        jobs=jobs,
        peers=peers,
        optimal=optimal,
        estimates=estimates,
        noise=noise,
        uncertainty_seed=uncertainty_seed,
        load=load,
        kb_dir=kb_dir,
        perfect_history=perfect_history,
        reruns=reruns,
    )
    plan = plan_bench(cfg)
    if slurm_array:  # before the retrieval, which takes minutes on a real history
        from wass_chat.slurm.commands import SlurmCommands

        SlurmCommands().ping()
    predictions = None
    if perfect_history:
        from wass_chat.cli.estimate_cmds import perfect_predictions

        predictions = perfect_predictions(plan.instances, noise, uncertainty_seed)
    elif cfg.wants_kb_predictions():
        from wass_chat.cli.estimate_cmds import predictions_for

        # Here, also under --slurm-array: the tasks read them from the plan, not the store.
        predictions = predictions_for(kb_dir, plan.instances, noise, uncertainty_seed)
    array = ArrayConfig(slurm_array, array_dir, memory_mb)
    run_instances = _array_runner(array, jobs) if slurm_array else None

    with Progress(console=console, transient=True) as bar:
        stages: dict[str, TaskID] = {}

        def progress(stage: str, done: int, total: int) -> None:
            if stage not in stages:
                stages[stage] = bar.add_task(stage, total=total)
            bar.update(stages[stage], completed=done)

        result = run_bench(
            cfg, progress, plan=plan, predictions=predictions, run_instances=run_instances
        )
    if json_path:
        write_output(json_path, json.dumps(result.document, indent=2, default=str))
    if markdown_path:
        write_output(markdown_path, result.markdown)
    if plots:
        from policy.bench.plots import family_box_plots, plot_file_name

        for family, png in family_box_plots(result.outcomes).items():
            write_atomic(plot_file_name(plots, family), png)
    emit(
        result.printed_summary(),
        as_json,
        lambda _: _render(result.summary, result.document.get("optimality")),
    )


def _array_runner(cfg: ArrayConfig, jobs: int) -> InstanceRunner:
    """Runs a bench's instances as a Slurm job array (``--slurm-array``)."""
    from wass_chat.cli.array_run import array_report
    from wass_chat.slurm.arrays.work import bench_on_slurm

    def run(
        instances: list[Instance],
        spec: RunSpec,
        predictions: Mapping[str, RuntimePredictions] | None,
    ) -> list[InstanceOutcome]:
        with array_report() as report:
            return bench_on_slurm(instances, spec, cfg, jobs, predictions, report)

    return run


def _render(summary: dict[str, Any], optimality: dict[str, Any] | None) -> None:
    from rich.table import Table

    table = Table(title=f"{summary['instances']} instances: makespan relative to HEFT")
    for column in ("scheduler", "/ HEFT (95% CI)", "/ best", "SLR", "W/T/L vs HEFT", "best on"):
        table.add_column(column, justify="left" if column == "scheduler" else "right")
    for name in summary["schedulers"]:
        o = summary["overall"][name]
        r, w = o["ratio_to_heft"], o["vs_heft"]
        table.add_row(
            name,
            f"{r['value']:.3f} ({r['low']:.3f}-{r['high']:.3f})",
            f"{o['ratio_to_best']['value']:.3f}",
            f"{o['mean_slr']:.2f}",
            f"{w['wins']}/{w['ties']}/{w['losses']}",
            str(o["best_count"]),
        )
    console.print(table)
    if optimality:
        gaps = ", ".join(f"{n} {100 * g:.2f}%" for n, g in optimality["mean_gap"].items())
        console.print(f"Mean optimality gap on {optimality['instances']} small instances: {gaps}")
