"""`wass-chat simulate`, `wass-chat sim validate` and `wass-chat sim bench`.

Heavy imports (the engine's dependencies, matplotlib, plotly, WfCommons) happen inside the
commands so ``wass-chat --help`` stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from sim.atomic_files import write_output
from wass_chat.cli.output import console, emit, err_console

if TYPE_CHECKING:
    from sim.model import Platform, Workflow
    from sim.schedule import DynamicScheduler, NetworkModel, StaticSchedule

sim_app = typer.Typer(help="Check the simulator against SimGrid and measure its speed.")

BENCH_FAMILIES = ("montage", "genome", "epigenomics")


def register(app: typer.Typer) -> None:
    """Add this area's commands to ``app``."""
    app.command("simulate")(simulate_command)
    app.add_typer(sim_app, name="sim")


def simulate_command(
    workflow: str = typer.Argument(..., help="WfFormat file, or a demo name (e.g. genomics-49)."),
    platform: str = typer.Option("demo", "--platform", "-p", help="Platform file or 'demo'."),
    scheduler: str = typer.Option("heft", "--scheduler", "-s", help="Scheduler name."),
    network_model: str = typer.Option("fair", "--network-model", help="fair or ideal."),
    backend: str = typer.Option("native", "--backend", help="native or simgrid."),
    gantt: Path | None = typer.Option(None, "--gantt", help="Write a Gantt (.png/.svg/.html)."),
    trace_file: Path | None = typer.Option(None, "--trace", help="Write a JSON trace."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Simulate WORKFLOW on a platform under a scheduler and report makespan and metrics."""
    from sim.errors import InputError
    from sim.gantt import GANTT_SUFFIXES, render_gantt, trace
    from sim.metrics import summary

    problems = []
    if network_model not in ("fair", "ideal"):
        problems.append(f"--network-model must be fair or ideal, got {network_model!r}")
    if backend not in ("native", "simgrid"):
        problems.append(f"--backend must be native or simgrid, got {backend!r}")
    if gantt is not None and gantt.suffix.lower() not in GANTT_SUFFIXES:
        problems.append(f"--gantt must end in {', '.join(GANTT_SUFFIXES)}, got {gantt.name!r}")
    if problems:
        raise InputError("options", problems)
    model: NetworkModel = "fair" if network_model == "fair" else "ideal"
    wf, pf = _resolve_workflow(workflow), _resolve_platform(platform)
    result, extra = _run(wf, pf, scheduler, model, backend)
    report = summary(result, wf, pf) | extra
    if gantt is not None:
        write_output(gantt, render_gantt(result, wf, pf, gantt))
        report["gantt"] = str(gantt)
    if trace_file is not None:
        import json

        write_output(trace_file, json.dumps(trace(result, wf, pf), indent=1))
        report["trace"] = str(trace_file)
    emit(report, as_json, _render_summary)


def _run(
    wf: Workflow, pf: Platform, name: str, model: NetworkModel, backend: str
) -> tuple[Any, dict[str, Any]]:
    """Native run; with the SimGrid backend, also the replay of the same decisions."""
    from sim.engine import simulate
    from sim.schedule import StaticSchedule

    scheduler = resolve_scheduler(name, wf, pf)
    native = simulate(wf, pf, scheduler, model)
    if backend == "native":
        return native, {}
    from sim.simgrid_backend import run_simgrid

    static = scheduler if isinstance(scheduler, StaticSchedule) else native.to_schedule()
    replay_native = simulate(wf, pf, static, model)
    simgrid = run_simgrid(wf, pf, static, model)
    reference = simgrid.result.makespan
    extra = {
        "native_makespan": native.makespan,
        "native_static_replay_makespan": replay_native.makespan,
        "simgrid_makespan": reference,
        "deviation": abs(replay_native.makespan - reference) / reference if reference else 0.0,
        "simgrid_seconds": simgrid.wall_seconds,
    }
    return simgrid.result, extra


def resolve_scheduler(name: str, wf: Workflow, pf: Platform) -> StaticSchedule | DynamicScheduler:
    """A scheduler from the policy registry, static ones already planned for ``wf`` on ``pf``.

    ``eft`` (earliest-finish placement, built into ``sim``) works even without the registry.
    """
    from sim.placement import EarliestFinishPlacement

    if name.strip().lower() == "eft":
        return EarliestFinishPlacement()
    try:
        from policy.base import StaticScheduler, check_plannable
        from policy.registry import get_scheduler
    except ImportError as exc:
        from sim.errors import InputError

        raise InputError(name, [f"scheduler registry unavailable ({exc}); use 'eft'"]) from exc
    scheduler = get_scheduler(name)
    if isinstance(scheduler, StaticScheduler):
        check_plannable(wf, scheduler.name)  # every static planner, not only list schedulers
        return scheduler.schedule(wf, pf)
    return scheduler


def _resolve_workflow(spec: str) -> Workflow:
    from sim.demo import DEMO_PREFIX, demo_workflow_names, resolve_workflow

    if not Path(spec).exists() and spec in demo_workflow_names():
        spec = DEMO_PREFIX + spec
    return resolve_workflow(spec)


def _resolve_platform(spec: str) -> Platform:
    from sim.demo import resolve_platform

    return resolve_platform(spec)


def _render_summary(report: dict[str, Any]) -> None:
    from rich.table import Table

    table = Table(title=f"{report['workflow']} on {report['platform']} ({report['scheduler']})")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for key, value in report.items():
        if key in ("workflow", "platform", "scheduler", "utilization"):
            continue
        shown = f"{value:.6g}" if isinstance(value, float) else str(value)
        table.add_row(key, shown)
    console.print(table)


@sim_app.command("validate")
def validate_command(
    against: str = typer.Option("simgrid", "--against", help="Reference simulator (simgrid)."),
    quick: bool = typer.Option(False, "--quick", help="Only the CI subset."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Replay a fixed set of instances on our engine and SimGrid; report deviations."""
    from rich.progress import Progress

    from sim.crossval import cases, run_case, summarize
    from sim.errors import InputError, ServiceUnavailable
    from sim.simgrid_backend import simgrid_available

    if against != "simgrid":
        raise InputError("options", [f"--against supports only simgrid, got {against!r}"])
    if not simgrid_available():
        raise ServiceUnavailable(
            "SimGrid's Python bindings are not importable "
            "(install python3-simgrid, run scripts/link-simgrid .venv)"
        )
    selected = cases(quick=quick)
    rows = []
    with Progress(console=err_console, transient=True) as progress:
        bar = progress.add_task("cross-checking", total=len(selected))
        for case in selected:
            progress.update(bar, description=case.label)
            rows.append(run_case(case))
            progress.advance(bar)
    report = summarize(rows)
    emit(report, as_json, _render_validation)
    if not report["all_within_target"]:
        raise typer.Exit(1)


def _render_validation(report: dict[str, Any]) -> None:
    from rich.table import Table

    table = Table(title="native engine vs SimGrid (same static schedule)")
    for column in ("instance", "tasks", "transfers", "native", "simgrid", "deviation", "speed x"):
        table.add_column(column, justify="left" if column == "instance" else "right")
    for r in report["rows"]:
        table.add_row(
            f"{r['family']}-{r['size']} {r['platform']} {r['network_model']}",
            str(r["tasks"]),
            str(r["transfers"]),
            f"{r['native_makespan']:.6f}",
            f"{r['simgrid_makespan']:.6f}",
            f"{r['deviation']:.1e}",
            f"{r['wall_ratio']:.1f}",
        )
    console.print(table)
    console.print(
        f"max deviation: ideal {report['max_deviation_ideal']:.2e} (target "
        f"{report['target_ideal']:.0e}), fair {report['max_deviation_fair']:.2e} (target "
        f"{report['target_fair']:.0e}); median wall-time ratio SimGrid/native "
        f"{report['median_wall_ratio']:.1f}x"
    )


@sim_app.command("bench")
def bench_command(
    tasks: int = typer.Option(1000, "--tasks", help="Workflow size (WfCommons upper bound)."),
    nodes: int = typer.Option(32, "--nodes", help="Platform size."),
    runs: int = typer.Option(5, "--runs", help="Runs per figure (median reported)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Time the engine on WfCommons workflows: static replay and dynamic eft, both networks.

    The headline is the speed goal's figure: the slowest family's dynamic run on the fair
    network, wall and CPU time (CPU time is the one a loaded machine distorts least).
    """
    from sim.engine_bench import dynamic_headline, run_bench

    rows = run_bench(BENCH_FAMILIES, tasks, nodes, runs)
    report = {"tasks": tasks, "nodes": nodes, "runs": runs, **dynamic_headline(rows), "rows": rows}
    emit(report, as_json, _render_bench)


def _render_bench(report: dict[str, Any]) -> None:
    from rich.table import Table

    table = Table(
        title=f"engine speed, {report['nodes']}-node platform (median of {report['runs']} runs)"
    )
    columns = ("workflow", "tasks", "mode", "network", "transfers", "median ms", "CPU ms")
    for column in columns:
        table.add_column(column, justify="left" if column in ("workflow", "mode") else "right")
    for r in report["rows"]:
        table.add_row(
            r["workflow"],
            str(r["tasks"]),
            r["mode"],
            r["network_model"],
            str(r["transfers"]),
            f"{r['median_ms']:.1f}",
            f"{r['median_cpu_ms']:.1f}",
        )
    console.print(table)
    console.print(
        f"dynamic simulation, {report['tasks']} tasks on {report['nodes']} nodes (slowest "
        f"family, {report['dynamic_workflow']}, fair network, {report['engine']} engine): "
        f"{report['dynamic_ms']:.1f} ms "
        f"wall, {report['dynamic_cpu_ms']:.1f} ms CPU (goal {report['dynamic_target_ms']:.0f} ms)"
    )
