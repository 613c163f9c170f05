"""`wass-chat bench`: compare schedulers on a matrix of workflows x platforms x seeds."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from wass_chat.atomic_files import write_atomic
from wass_chat.cli.array_run import ARRAY_DIR_HELP, SLURM_ARRAY_HELP
from wass_chat.cli.bench_arrivals import ARRIVALS_HELP, bench_arrivals
from wass_chat.cli.output import console, emit

if TYPE_CHECKING:
    from sim.background import BackgroundConfig

DEFAULT_RECIPES = "montage:60,genome:60,epigenomics:50"
DEFAULT_SCHEDULERS = "heft,cpop,peft,minmin,maxmin,sjf,ljf,slurm,wass,random"


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
    slurm_array: int = typer.Option(0, "--slurm-array", min=0, help=SLURM_ARRAY_HELP),
    array_dir: Path | None = typer.Option(None, "--array-dir", help=ARRAY_DIR_HELP),
    memory_mb: int = typer.Option(1000, "--slurm-mem", help="MB per array task."),
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
            "--workflows": bool(workflows), "--recipes": bool(recipes), "--peers": bool(peers),
            "--optimal": optimal, "--estimates": bool(estimates), "--load": bool(load),
            "--kb": kb_dir is not None, "--perfect-history": perfect_history,
            "--reruns": bool(reruns), "--slurm-array": bool(slurm_array),
        }  # fmt: skip
        bench_arrivals(
            arrivals, window, stream_ccr, platforms, schedulers, seeds, network_model, jobs,
            json_path, markdown_path, plots, as_json, conflicting,
        )  # fmt: skip
        return
    platforms = platforms or "hetero:8"
    schedulers = schedulers or DEFAULT_SCHEDULERS
    from rich.progress import Progress

    from policy.bench.document import bench_document
    from policy.bench.matrix import (
        BenchSpecError,
        build_matrix,
        parse_platforms,
        parse_recipes,
        parse_workflow_files,
    )
    from policy.bench.report import summarize, to_markdown
    from policy.bench.runner import RunSpec, run_matrix
    from policy.registry import canonical_name

    if network_model not in ("fair", "ideal"):
        raise BenchSpecError("--network-model", [f"{network_model!r} is not fair or ideal"])
    names = tuple(canonical_name(n) for n in schedulers.split(",") if n.strip())
    peer_names = _peer_names(peers)
    sources = parse_workflow_files(workflows) + parse_recipes(
        recipes or DEFAULT_RECIPES * (not workflows)
    )
    instances = build_matrix(sources, parse_platforms(platforms), seeds)
    background = _check_uncertainty(estimates, noise, load, kb_dir, perfect_history, reruns)
    idle_only = [f"saga-{p}" for p in peer_names]  # SAGA's conversions assume an idle machine
    if background is not None and idle_only:  # they would fail after minutes of work
        raise BenchSpecError("--load", [f"{n} plans on an idle cluster only" for n in idle_only])
    spec = RunSpec(
        names, network_model, peer_names, estimates,  # type: ignore[arg-type]
        noise, uncertainty_seed, background, reruns,
    )  # fmt: skip
    if slurm_array:  # before the retrieval, which takes minutes on a real history
        from wass_chat.slurm.commands import SlurmCommands

        SlurmCommands().ping()
    predictions = None
    if perfect_history:
        from wass_chat.cli.estimate_cmds import perfect_predictions

        predictions = perfect_predictions(instances, noise, uncertainty_seed)
    elif estimates == "kb" or (estimates == "user" and kb_dir is not None):
        from wass_chat.cli.estimate_cmds import predictions_for

        # Here, also under --slurm-array: the tasks read them from the plan, not the store.
        predictions = predictions_for(kb_dir, instances, noise, uncertainty_seed)
    if slurm_array:
        from wass_chat.cli.slurm_array_cmds import bench_on_slurm

        outcomes = bench_on_slurm(
            instances, spec, slurm_array, jobs, array_dir, memory_mb, predictions
        )

    with Progress(console=console, transient=True) as bar:
        if not slurm_array:
            task = bar.add_task(f"{len(instances)} instances", total=len(instances))
            outcomes = run_matrix(
                instances,
                spec,
                jobs,
                lambda done, total: bar.update(task, completed=done),
                predictions,
            )
        gaps = None
        if optimal:
            from policy.bench.optimality import optimality_study

            study = bar.add_task("optimality gap (CP-SAT)", total=50)
            gaps = optimality_study(
                names, 50, 0, jobs, lambda done, total: bar.update(study, completed=done)
            )
    summary = summarize(outcomes)
    settings: dict[str, Any] = {
        "workflows": workflows,
        "recipes": recipes,
        "platforms": platforms,
        "seeds": seeds,
        "network_model": network_model,
        "jobs": jobs,
        "peers": peers,
        "optimal": optimal,
        "estimates": estimates,
        "noise": noise,
        "uncertainty_seed": uncertainty_seed,
        "load": asdict(background) if background else None,
        "kb": str(kb_dir) if kb_dir else None,
        "perfect_history": perfect_history,
        "reruns": reruns,
    }
    document = bench_document(settings, spec, outcomes, summary, gaps)
    markdown = to_markdown(summary, f"wass-chat bench ({network_model} network)")
    if gaps is not None:
        markdown += _gap_markdown(document["optimality"])
    if json_path:
        write_atomic(json_path, json.dumps(document, indent=2, default=str))
    if markdown_path:
        write_atomic(markdown_path, markdown)
    if plots:
        from policy.bench.plots import family_box_plots, plot_file_name

        for family, png in family_box_plots(outcomes).items():
            write_atomic(plot_file_name(plots, family), png)
    emit(
        summary | ({"optimality": document["optimality"]} if gaps else {}),
        as_json,
        lambda _: _render(summary, document.get("optimality")),
    )


def _check_uncertainty(
    estimates: str,
    noise: float,
    load: str,
    kb_dir: Path | None,
    perfect_history: bool = False,
    reruns: int = 0,
) -> BackgroundConfig | None:
    """Every problem with the uncertainty and load flags, as one BenchSpecError; the load."""
    from policy.bench.matrix import BenchSpecError
    from sim.background import parse_load
    from sim.errors import InputError
    from sim.uncertainty import ESTIMATE_MODES

    problems = []
    if estimates and estimates not in ESTIMATE_MODES:
        problems.append(f"--estimates {estimates!r} is not one of {', '.join(ESTIMATE_MODES)}")
    if not noise >= 0:
        problems.append(f"--noise must be >= 0, got {noise}")
    background = None
    try:
        background = parse_load(load)
    except InputError as error:
        problems += [f"--load: {p}" for p in error.problems]
    if perfect_history:
        if kb_dir is not None or estimates not in ("user", "kb"):
            problems.append("--perfect-history replaces --kb, under --estimates user or kb")
    elif (estimates == "kb" or kb_dir is not None) and (kb_dir is None or not kb_dir.is_dir()):
        problems.append(
            "--estimates kb needs --kb DIR, a knowledge base filled by `wass-chat estimates seed`"
        )
    if reruns and (estimates in ("", "oracle") or not noise > 0):
        problems.append(
            "--reruns redraws the run's own variation: it needs --estimates user, mean or kb "
            "and --noise above 0"
        )
    if problems:
        raise BenchSpecError("uncertainty", problems)
    return background


def _peer_names(peers: str) -> tuple[str, ...]:
    from policy.bench.matrix import BenchSpecError

    chosen = [p.strip().lower() for p in peers.split(",") if p.strip()]
    unknown = [p for p in chosen if p != "saga"]
    if unknown:
        raise BenchSpecError("--peers", [f"unknown peer {p!r} (peers: saga)" for p in unknown])
    if not chosen:
        return ()
    from policy.peers.saga import SAGA_SCHEDULERS, saga_available
    from sim.errors import ServiceUnavailable

    if not saga_available():
        raise ServiceUnavailable("SAGA is not installed: pip install 'wass-chat[bench]'")
    return tuple(SAGA_SCHEDULERS)


def _gap_markdown(optimality: dict[str, Any]) -> str:
    lines = [
        "",
        "## Optimality gap (CP-SAT, ideal network)",
        "",
        f"{optimality['instances']} random instances of 6-10 tasks on 3 heterogeneous one-core "
        f"nodes; {optimality['proven_optimal']} proven optimal.",
        "",
        "| scheduler | mean gap |",
        "|---|---|",
    ]
    for name, gap in optimality["mean_gap"].items():
        lines.append(f"| {name} | {100 * gap:.2f}% |")
    return "\n".join(lines) + "\n"


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
