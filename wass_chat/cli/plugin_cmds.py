"""`wass-chat plugin export|install|bench`: the job_submit.lua plugin (decision and inference
modes, :mod:`wass_chat.slurm.plugin`)."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from sim.atomic_files import write_output
from sim.errors import InputError
from wass_chat.cli.output import console, emit

plugin_app = typer.Typer(help="The job_submit.lua plugin.", no_args_is_help=True)


@plugin_app.command("export")
def plugin_export(
    weights: Path | None = typer.Option(None, "--weights", help=".npz or .pt policy head."),
    output: Path = typer.Option(Path("job_submit.lua"), "-o", "--output"),
    from_slurm: bool = typer.Option(True, "--nodes-from-slurm/--no-nodes"),
) -> None:
    """Write job_submit.lua with the policy head and the cluster's node table."""
    text = _render_plugin(weights, from_slurm)
    write_output(output, text)
    console.print(f"wrote {output}")


@plugin_app.command("install")
def plugin_install(
    weights: Path | None = typer.Option(None, "--weights", help=".npz or .pt policy head."),
    yes: bool = typer.Option(False, "--yes"),
    force: bool = typer.Option(
        False, "--force", help="Replace a site's own job_submit.lua (a backup is kept)."
    ),
) -> None:
    """Install job_submit.lua next to $SLURM_CONF (slurmctld re-reads it on the next job).

    An earlier wass-chat plugin is replaced; a site's own script is refused unless --force,
    which first copies it to job_submit.lua.bak-<time>.
    """
    from wass_chat.slurm.plugin import install_plugin, refuse_site_plugin, slurm_conf_dir

    target = slurm_conf_dir() / "job_submit.lua"
    if not force:
        refuse_site_plugin(target)  # before Slurm is asked anything
    text = _render_plugin(weights, True)
    if not yes:
        if not sys.stdin or not sys.stdin.isatty():
            raise InputError("plugin install", ["no terminal to confirm on: pass --yes"])
        typer.confirm(f"Replace {target}?", abort=True)
    console.print(f"installed {install_plugin(text, force=force)}")


@plugin_app.command("bench")
def plugin_bench(
    jobs: int = typer.Option(300, "--jobs", help="Inference-mode submissions to time."),
    candidates: int = typer.Option(4, "--candidates", help="Candidate nodes per job."),
    dim: int = typer.Option(139, "--dim", help="Features per candidate (the learned head: 139)."),
    hidden: int = typer.Option(64, "--hidden", help="Hidden units of the head."),
    template: Path | None = typer.Option(
        None, "--template", help="Another job_submit.lua source to measure (default: shipped)."
    ),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """CPU time per job of the plugin's inference mode in Lua 5.1 (what slurmctld embeds)."""
    from wass_chat.slurm.plugin.bench import bench_inference

    text = None
    if template is not None:
        if not template.is_file():
            raise InputError(str(template), ["file not found"])
        try:
            text = template.read_text()
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(str(template), [f"not a readable Lua source: {exc}"]) from exc
    result = bench_inference(jobs, candidates, dim, hidden, template=text)
    emit(
        result.to_dict(),
        as_json,
        lambda r: console.print(
            f"inference mode, {r['jobs']} jobs x {r['candidates']} candidates, head "
            f"{r['dim']}-{r['hidden']}-1: mean {r['mean_us']:.0f} us, p50 {r['p50_us']:.0f} us, "
            f"p95 {r['p95_us']:.0f} us, max {r['max_us']:.0f} us per job (CPU time); "
            f"{r['agree']}/{r['jobs']} placements equal numpy's"
        ),
    )


def _render_plugin(weights: Path | None, from_slurm: bool) -> str:
    from wass_chat.slurm.nodes import platform_from_slurm
    from wass_chat.slurm.plugin import render_plugin
    from wass_chat.slurm.plugin.head import load_head

    head = load_head(weights) if weights is not None else None
    nodes = platform_from_slurm().platform if from_slurm else None
    return render_plugin(head, nodes)


def register(app: typer.Typer) -> None:
    """Add this area's commands to ``app``."""
    app.add_typer(plugin_app, name="plugin")
