"""`wass-chat workflow ...` and `wass-chat platform ...`: generate, inspect, validate, export.

Workflows are WfFormat files (or ``demo:<name>``); platforms are YAML/JSON files (or ``demo``).
Bad input ends in one error line and exit code 2, and no output file is written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from sim.atomic_files import write_output
from wass_chat.cli.output import console, emit, err_console

workflow_app = typer.Typer(
    help="Generate, inspect and validate workflows (WfFormat JSON).", no_args_is_help=True
)
platform_app = typer.Typer(
    help="Generate, inspect and export cluster platforms.", no_args_is_help=True
)

_JSON = typer.Option(False, "--json", help="Print the result as JSON.")
_PLATFORM = typer.Option(
    None, "--platform", "-p", help="Platform file (YAML/JSON); default: the demo platform."
)


def register(app: typer.Typer) -> None:
    """Add the ``workflow`` and ``platform`` command groups to ``app``.

    Other areas add platform commands too (``platform from-slurm``): when a ``platform`` group
    is already registered, ours join it instead of shadowing it.
    """
    app.add_typer(workflow_app, name="workflow")
    existing = next(
        (
            g.typer_instance
            for g in app.registered_groups
            if g.name == "platform" and g.typer_instance is not None
        ),
        None,
    )
    if existing is None:
        app.add_typer(platform_app, name="platform")
    else:
        existing.registered_commands += platform_app.registered_commands


# --- workflow -----------------------------------------------------------------------------


@workflow_app.command("generate")
def workflow_generate(
    kind: str = typer.Argument(
        ...,
        help="A WfCommons recipe (montage, genome, ...) or a shape "
        "(chain, fan-out, fan-in, fork-join, layered, genomics).",
    ),
    output: Path = typer.Option(..., "--output", "-o", help="WfFormat JSON file to write."),
    tasks: int | None = typer.Option(
        None,
        "--tasks",
        "-n",
        help="Number of tasks (recipes: an upper bound; default: the kind's default size).",
    ),
    seed: int = typer.Option(0, "--seed", "-s", help="Random seed (same seed, same workflow)."),
    ccr: float | None = typer.Option(
        None,
        "--ccr",
        help="Target communication-to-computation "
        "ratio on the reference platform (shapes default to 1).",
    ),
    schema_version: str = typer.Option(
        "1.6", "--schema-version", help="WfFormat version: 1.5 or 1.6."
    ),
    as_json: bool = _JSON,
) -> None:
    """Generate a workflow and write it as WfFormat JSON."""
    from sim.errors import InputError
    from sim.generators import generate_workflow
    from sim.wfformat import WRITE_VERSIONS, dumps_workflow
    from sim.workflow_stats import summarize

    if schema_version not in WRITE_VERSIONS:
        raise InputError(
            "--schema-version",
            [f"must be one of {', '.join(WRITE_VERSIONS)}, got {schema_version!r}"],
        )
    with err_console.status(f"generating {kind}...", spinner="dots"):
        wf = generate_workflow(kind, tasks, seed, ccr=ccr)
    write_output(output, dumps_workflow(wf, schema_version))
    result = {"file": str(output), "schemaVersion": schema_version, **summarize(wf).as_dict()}
    emit(
        result,
        as_json,
        lambda r: console.print(
            f"wrote {r['file']}: {r['tasks']} tasks, {r['files']} files, "
            f"depth {r['depth']}, width {r['width']}, CCR {_ratio(r['ccr_reference'])}"
        ),
    )


@workflow_app.command("show")
def workflow_show(
    workflow: str = typer.Argument(..., help="WfFormat file, or demo:<name>."),
    platform: str | None = _PLATFORM,
    as_json: bool = _JSON,
) -> None:
    """Summarize a workflow: tasks, files, depth, width, work, bytes, CCR."""
    from sim.demo import resolve_platform, resolve_workflow
    from sim.workflow_stats import summarize

    summary = summarize(resolve_workflow(workflow), resolve_platform(platform))
    emit(summary.as_dict(), as_json, _render_summary)


@workflow_app.command("validate")
def workflow_validate(
    workflow: str = typer.Argument(..., help="WfFormat file, or demo:<name>."),
    platform: str | None = _PLATFORM,
    as_json: bool = _JSON,
) -> None:
    """Check a workflow file, and that every task fits some node of the platform."""
    from sim.demo import resolve_platform, resolve_workflow
    from sim.model import check_fits

    wf = resolve_workflow(workflow)
    target = resolve_platform(platform)
    check_fits(wf, target)
    result = {"workflow": workflow, "valid": True, "tasks": len(wf.tasks), "platform": target.name}
    emit(
        result,
        as_json,
        lambda r: console.print(
            f"ok: {r['workflow']} ({r['tasks']} tasks) is valid and fits {r['platform']}"
        ),
    )


@workflow_app.command("demos")
def workflow_demos(as_json: bool = _JSON) -> None:
    """List the shipped demo workflows (use them as demo:<name>)."""
    from sim.demo import DEMO_WORKFLOWS

    def render(demos: dict[str, str]) -> None:
        for name, text in demos.items():
            console.print(f"demo:{name:<16} {text}")

    emit(DEMO_WORKFLOWS, as_json, render)


def _ratio(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3g}"


def _render_summary(s: dict[str, Any]) -> None:
    from rich.table import Table

    from sim.units import format_bytes, format_rate

    table = Table(title=f"workflow {s['name']}", show_header=False)
    rows = [
        ("tasks", str(s["tasks"])),
        ("files", str(s["files"])),
        ("edges", str(s["edges"])),
        ("depth (levels)", str(s["depth"])),
        ("width (max tasks on a level)", str(s["width"])),
        ("task categories", str(s["categories"])),
        ("total work", format_rate(s["total_work"], "flop")),
        ("sequential runtime (reference)", f"{s['sequential_runtime']:.1f} s"),
        ("total bytes", format_bytes(s["total_bytes"])),
        ("workflow input bytes", format_bytes(s["input_bytes"])),
        ("CCR (reference platform)", _ratio(s["ccr_reference"])),
        (f"CCR ({s['platform']})", _ratio(s["ccr_platform"])),
    ]
    for key, value in rows:
        table.add_row(key, value)
    console.print(table)


# --- platform -----------------------------------------------------------------------------


@platform_app.command("generate")
def platform_generate(
    output: Path = typer.Option(..., "--output", "-o", help="YAML (or .json) file to write."),
    nodes: int = typer.Option(8, "--nodes", "-n", help="Number of nodes (4 to 128)."),
    heterogeneous: bool = typer.Option(
        False, "--heterogeneous/--homogeneous", help="Draw speed, cores, NIC and GPUs per node."
    ),
    seed: int = typer.Option(0, "--seed", "-s", help="Random seed."),
    speed_spread: float = typer.Option(
        0.4, "--speed-spread", help="Heterogeneous core speeds vary by +/- this fraction."
    ),
    gpu_fraction: float = typer.Option(
        0.25, "--gpu-fraction", help="Share of heterogeneous nodes with GPUs."
    ),
    name: str = typer.Option("", "--name", help="Platform name (default: derived)."),
    as_json: bool = _JSON,
) -> None:
    """Generate a homogeneous or heterogeneous cluster and write it as YAML or JSON."""
    from sim.platforms import ClusterSpec, dumps_platform, generate_platform

    spec = ClusterSpec(
        nodes=nodes,
        heterogeneous=heterogeneous,
        speed_spread=speed_spread,
        gpu_fraction=gpu_fraction,
        name=name,
    )
    platform = generate_platform(spec, seed)
    write_output(output, dumps_platform(platform, as_json=output.suffix.lower() == ".json"))
    result = {"file": str(output), **_platform_summary(platform)}
    emit(
        result,
        as_json,
        lambda r: console.print(
            f"wrote {r['file']}: {r['nodes']} nodes, {r['cores']} cores, {r['gpus']} GPUs"
        ),
    )


@platform_app.command("show")
def platform_show(
    platform: str = typer.Argument("demo", help="Platform file (YAML/JSON), or demo."),
    as_json: bool = _JSON,
) -> None:
    """List a platform's nodes and totals."""
    from sim.demo import resolve_platform

    emit(_platform_summary(resolve_platform(platform), with_nodes=True), as_json, _render_platform)


@platform_app.command("export-simgrid")
def platform_export_simgrid(
    platform: str = typer.Argument(..., help="Platform file (YAML/JSON), or demo."),
    output: Path = typer.Option(..., "--output", "-o", help="SimGrid XML file to write."),
    as_json: bool = _JSON,
) -> None:
    """Export a platform as a SimGrid platform description (XML, DTD 4.1)."""
    from sim.demo import resolve_platform
    from sim.simgrid_xml import to_simgrid_xml

    target = resolve_platform(platform)
    write_output(output, to_simgrid_xml(target))
    result = {"file": str(output), "platform": target.name, "hosts": len(target.nodes) + 1}
    emit(
        result,
        as_json,
        lambda r: console.print(
            f"wrote {r['file']}: {r['hosts']} hosts (nodes + shared filesystem)"
        ),
    )


def _platform_summary(platform: Any, with_nodes: bool = False) -> dict[str, Any]:
    summary: dict[str, Any] = {
        "name": platform.name,
        "nodes": len(platform.nodes),
        "cores": platform.total_cores,
        "gpus": sum(n.gpus for n in platform.nodes),
        "capacity_flops": platform.total_capacity,
        "latency": platform.latency,
        "shared_fs_bandwidth": platform.shared_fs_bandwidth,
    }
    if with_nodes:
        from sim.platforms import platform_to_dict

        summary["node_list"] = platform_to_dict(platform)["nodes"]
    return summary


def _render_platform(s: dict[str, Any]) -> None:
    from rich.table import Table

    from sim.units import format_bytes, format_rate

    table = Table(
        title=f"platform {s['name']}: {s['nodes']} nodes, {s['cores']} cores, "
        f"{s['gpus']} GPUs, {format_rate(s['capacity_flops'], 'f')}"
    )
    for column in ("node", "cores", "speed/core", "memory", "GPUs", "NIC", "power idle/busy"):
        table.add_column(column)
    for n in s["node_list"]:
        table.add_row(
            n["name"],
            str(n["cores"]),
            format_rate(n["speed"], "f"),
            format_bytes(n["memory"]),
            str(n["gpus"]),
            format_rate(n["bandwidth"] * 8, "bps"),
            f"{n['power_idle']:g} / {n['power_busy']:g} W",
        )
    console.print(table)
    console.print(
        f"latency {s['latency'] * 1e6:g} us, shared filesystem "
        f"{format_rate(s['shared_fs_bandwidth'], 'B/s')}"
    )
