"""`wass-chat` commands of the Slurm area: submit, status, sim-to-real, cancel, runs, platform
from-slurm (the plugin's: :mod:`wass_chat.cli.plugin_cmds`).

Nothing is ever submitted without a human's approval: ``submit`` shows the plan and asks, and
with no terminal to ask on it refuses unless ``--yes`` is given. ``status`` and ``runs`` learn
every run they see end into the knowledge base (:mod:`wass_chat.learn`).
"""

from __future__ import annotations

import math
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

import typer
from typer.core import TyperGroup

from sim.atomic_files import write_output
from sim.errors import InputError
from wass_chat.cli.kb_cmds import kb_opener
from wass_chat.cli.output import console, emit, err_console


class RunByDefault(TyperGroup):
    """A group whose first argument, when it names none of its commands, goes to ``run``:
    ``wass-chat sim-to-real WORKFLOW`` keeps working beside ``sim-to-real report``."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["run", *args]
        return super().parse_args(ctx, args)


platform_app = typer.Typer(
    help="Generate, inspect and export cluster platforms, or read the live Slurm cluster's.",
    no_args_is_help=True,
)
sim_to_real_app = typer.Typer(
    cls=RunByDefault,
    no_args_is_help=True,
    help="Simulated against real: run a workflow under each scheduler (`sim-to-real WORKFLOW`),"
    " or the errors over every learned run (`sim-to-real report`).",
)


def _settings() -> Any:
    from wass_chat.config import settings

    return settings()


def _runlog() -> Any:
    from wass_chat.runlog import RunLog

    return RunLog(_settings().runs_dir)


def _confirm_or_refuse(question: str) -> None:
    if not sys.stdin or not sys.stdin.isatty():
        raise InputError("submit", ["no terminal to confirm on: review the plan and pass --yes"])
    typer.confirm(question, abort=True)


def _platform(ref: str, partition: str | None) -> Any:
    """``from-slurm`` (the live cluster's nodes), ``demo``, or a platform file."""
    from sim.demo import resolve_platform
    from wass_chat.slurm.nodes import platform_from_slurm

    if ref == "from-slurm":
        return platform_from_slurm(partition=partition).platform
    return resolve_platform(ref)


def submit(
    workflow: str = typer.Argument(..., help="WfFormat JSON file, or demo:<name>."),
    scheduler: str = typer.Option("heft", "--scheduler", "-s", help="Scheduler name."),
    platform: str = typer.Option("from-slurm", "--platform", help="from-slurm, demo, or a file"),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the sbatch argv lists only."),
    yes: bool = typer.Option(False, "--yes", help="Submit without asking."),
    scale: float | None = typer.Option(None, "--scale", help="Jobs sleep simulated time x S."),
    via_plugin: bool = typer.Option(
        False, "--via-plugin", help="Leave out --nodelist: the plugin applies the token."
    ),
    estimates: str = typer.Option(
        "workflow",
        "--estimates",
        help="Runtimes to plan on: workflow (as stated) or kb (what earlier runs measured, real"
        " ones first; the workflow's where the knowledge base knows nothing).",
    ),
    kb_dir: Path | None = typer.Option(
        None, "--kb", help="Knowledge base for --estimates kb (default: the settings')."
    ),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Plan WORKFLOW with a scheduler and submit one Slurm job per task."""
    from sim.demo import resolve_workflow
    from wass_chat.slurm.commands import SlurmCommands
    from wass_chat.slurm.plan_digest import plan_digest, submit_approved
    from wass_chat.slurm.submission import plan_new_run

    cfg = _settings()
    if scale is not None and not (math.isfinite(scale) and scale > 0):  # NaN passes `<= 0`
        raise InputError("--scale", [f"must be a finite number > 0, got {scale}"])
    if estimates not in ("workflow", "kb"):
        raise InputError("--estimates", [f"choose workflow or kb, got {estimates!r}"])
    wf = resolve_workflow(workflow)
    commands = SlurmCommands()
    pf = _platform(platform, cfg.slurm_partition)
    live = platform == "from-slurm"
    predictions, said = _history(wf, pf, kb_dir) if estimates == "kb" else (None, "workflow")
    plan = plan_new_run(
        wf,
        pf,
        scheduler,
        cfg.runs_dir,
        live=commands if live else None,
        scale=scale,
        pin=not via_plugin,
        partition=cfg.slurm_partition,
        network_model=cfg.network_model,
        predictions=predictions,
        estimates=said,
    )
    run_id, occupancy, digest = plan.run_id, plan.occupancy, plan_digest(plan)
    summary = {
        "run_id": run_id,
        "workflow": wf.name,
        "scheduler": plan.scheduler,
        "platform": pf.name,
        "planned_makespan": plan.planned_makespan,
        "scale": scale,
        "estimates": plan.estimates,
        "plan_digest": digest,
        "jobs": [
            {
                "task": j.task,
                "node": j.node,
                "command": list(j.command),
                "argv": ["sbatch", "--parsable", *j.argv()],
            }
            for j in plan.jobs
        ],
    }
    if live:  # the plan starts from what running jobs hold (demo and file platforms: idle)
        summary["cluster"] = occupancy.summary(pf)
        summary["occupancy"] = occupancy.to_dict()["holds"]
        summary["busy_jobs"] = plan.busy_lines()
        summary["predicted_start"] = plan.start_lines()
    if dry_run:
        emit(summary, as_json, _render_argv)
        return
    if not as_json:
        _render_plan(summary)
    if not yes:
        _confirm_or_refuse(f"Submit these {len(plan.jobs)} jobs to Slurm (plan {digest[:12]})?")
    record = submit_approved(plan, digest, commands, _runlog())  # the plan shown, exactly
    result = {
        "run_id": record.run_id,
        "state": record.state,
        "estimates": record.estimates,
        "plan_digest": digest,
        "jobs": {d.task: d.job_id for d in record.decisions},
    }
    emit(
        result,
        as_json,
        lambda r: console.print(f"submitted run [bold]{r['run_id']}[/]: {len(r['jobs'])} jobs"),
    )


def _history(workflow: Any, platform: Any, kb_dir: Path | None) -> tuple[Any, str]:
    """The knowledge base's runtime predictions for ``workflow`` on ``platform`` (real runs
    first, :func:`kb.estimates.retrieve_predictions`) and the words saying which it used."""
    from kb.estimates import history_words, retrieve_predictions

    with kb_opener(kb_dir)() as kb:
        predictions = retrieve_predictions(kb, workflow, platform)
    return predictions, history_words(predictions)


def _render_argv(summary: dict[str, Any]) -> None:
    import shlex

    console.print(
        f"# run {summary['run_id']}: {summary['scheduler']} on {summary['platform']}, "
        f"planned makespan {summary['planned_makespan']:.1f} s"
    )
    console.print(f"# runtimes: {summary['estimates']}", markup=False)
    if "cluster" in summary:
        console.print(f"# {summary['cluster']}")
    for line in summary.get("busy_jobs", []):
        console.print(f"#   held by {line}", markup=False)
    for line in summary.get("predicted_start", []):
        console.print(f"# {line}", markup=False)
    for job in summary["jobs"]:
        typer.echo(shlex.join(job["argv"]))


def _render_plan(summary: dict[str, Any]) -> None:
    import shlex

    from rich.table import Table
    from rich.text import Text

    table = Table(title=f"{summary['workflow']}: {summary['scheduler']} on {summary['platform']}")
    table.add_column("task")
    table.add_column("node")
    table.add_column("runs")
    table.add_column("sbatch options")
    for job in summary["jobs"]:
        options = [a for a in job["argv"][2:] if not a.startswith("--wrap=")]
        runs = shlex.join(job["command"]) if job["command"] else "(sleeps)"
        cells = (job["task"], job["node"], runs, shlex.join(options))
        table.add_row(*(Text(cell) for cell in cells))
    console.print(table)
    console.print(f"plan digest {summary['plan_digest'][:12]}", markup=False)
    console.print(f"planned makespan {summary['planned_makespan']:.1f} s")
    console.print(f"runtimes: {summary['estimates']}", markup=False)
    if "cluster" in summary:
        console.print(f"planned from now: {summary['cluster']}")
    for line in summary.get("busy_jobs", []):
        console.print(f"  held by {line}", markup=False)
    for line in summary.get("predicted_start", []):
        console.print(f"  {line}", markup=False)


def status(
    run: str = typer.Argument(...),
    learn: bool = typer.Option(
        True, "--learn/--no-learn", help="Learn the run into the knowledge base once it ended."
    ),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Per-task Slurm state of a submitted run (also saved to the decision log); once every job
    completed, the simulated against the real makespan (see docs/slurm.md, Sim-to-real); once
    every job ended, the run learned into the knowledge base (docs/kb.md, Real runs)."""
    from wass_chat.demo_home import site_record
    from wass_chat.learn.learner import refresh_and_learn
    from wass_chat.slurm.commands import SlurmCommands
    from wass_chat.slurm.sim_to_real import compare_run

    runlog = _runlog()
    seen = refresh_and_learn(
        site_record(runlog, run), SlurmCommands(), runlog, kb_opener() if learn else None
    )
    statuses, learned, note = seen.statuses, seen.learned, seen.learn_error
    record = runlog.get(run)
    comparison = compare_run(record, statuses)
    data = {
        "run_id": run,
        "plan_digest": record.plan_digest,
        "moved": [{"task": t, "approved_node": a, "real_node": r} for t, a, r in record.moved],
        "tasks": [asdict(s) for s in statuses],
        "sim_to_real": comparison.to_dict() if comparison else None,
        "learned": learned.to_dict() if learned else None,
        "learn_error": note or None,
    }
    columns = ("task", "job_id", "planned_node", "node", "state", "start", "end")

    def render(d: dict[str, Any]) -> None:
        from rich.table import Table

        table = Table(title=f"run {run}")
        for col in columns:
            table.add_column(col)
        for r in d["tasks"]:
            table.add_row(*(str(r[c] or "") for c in columns))
        console.print(table)
        for m in d["moved"]:  # Slurm's placement, beside the plan approved
            console.print(
                f"{m['task']}: approved on {m['approved_node']}, Slurm ran it on {m['real_node']}",
                markup=False,
            )
        if comparison is not None:
            console.print(_sim_to_real_line(comparison))
        if learned is not None:
            console.print(learned.line(), markup=False)
        if note:
            err_console.print(f"not learned into the knowledge base: {note}", markup=False)

    emit(data, as_json, render)


def _sim_to_real_line(c: Any) -> str:
    line = (
        f"makespan: simulated {c.simulated_s:.2f} s, real {c.real_s:.2f} s "
        f"({c.timing_source}), error {100 * c.raw_error:.1f}%"
    )
    if c.corrected_simulated_s is not None:
        line += (
            f"; with the measured dispatch overhead {c.overhead_applied_s:.2f} s per "
            f"dependent job: {c.corrected_simulated_s:.2f} s, "
            f"error {100 * c.corrected_error:.1f}%"
        )
    return line


def sim_to_real(
    workflow: str = typer.Argument(..., help="WfFormat JSON file, or demo:<name>."),
    schedulers: str = typer.Option("heft,minmin", "--schedulers", help="Comma-separated."),
    platform: str = typer.Option("from-slurm", "--platform", help="from-slurm, demo, or a file"),
    scale: float | None = typer.Option(None, "--scale", help="Jobs sleep simulated time x S."),
    timeout: float = typer.Option(900.0, "--timeout", help="Seconds to wait for each run."),
    yes: bool = typer.Option(False, "--yes", help="Submit without asking."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Run WORKFLOW on the cluster under each scheduler in turn; print the simulated against the
    real makespan (raw, with the measured dispatch overhead, and with the other run's)."""
    from sim.demo import resolve_workflow
    from wass_chat.slurm.commands import SlurmCommands
    from wass_chat.slurm.sim_to_real import bench_sim_to_real

    cfg = _settings()
    names = [s.strip() for s in schedulers.split(",") if s.strip()]
    if not names:
        raise InputError("--schedulers", ["no scheduler given"])
    if scale is not None and not (math.isfinite(scale) and scale > 0):  # NaN passes `<= 0`
        raise InputError("--scale", [f"must be a finite number > 0, got {scale}"])
    wf = resolve_workflow(workflow)
    pf = _platform(platform, cfg.slurm_partition)
    if not yes:
        _confirm_or_refuse(f"Submit {len(wf.tasks)} jobs per scheduler ({', '.join(names)})?")
    rows = bench_sim_to_real(
        wf, pf, names, SlurmCommands(), _runlog(), cfg.runs_dir, scale=scale, timeout_s=timeout
    )

    def render(data: list[dict[str, Any]]) -> None:
        for row, raw in zip(rows, data, strict=True):
            console.print(
                f"[bold]{row.scheduler}[/] (run {row.run_id}): " + _sim_to_real_line(row.comparison)
            )
            if raw["out_of_sample_error"] is not None:
                console.print(
                    f"  with the other run's overhead "
                    f"{raw['out_of_sample_overhead_s']:.2f} s: error "
                    f"{100 * raw['out_of_sample_error']:.1f}%"
                )

    emit([r.to_dict() for r in rows], as_json, render)


def cancel(run: str = typer.Argument(...), yes: bool = typer.Option(False, "--yes")) -> None:
    """Cancel every unfinished job of a run."""
    from wass_chat.slurm.commands import SlurmCommands
    from wass_chat.slurm.runs import cancel_run

    runlog = _runlog()
    record = runlog.get(run)
    if not yes:
        if not sys.stdin or not sys.stdin.isatty():
            raise InputError("cancel", ["no terminal to confirm on: pass --yes"])
        typer.confirm(f"Cancel the unfinished jobs of run {run}?", abort=True)
    cancelled = cancel_run(record, SlurmCommands(), runlog)
    console.print(f"cancelled {len(cancelled)} jobs of run {run}")


def resume(
    run: str = typer.Argument(...),
    yes: bool = typer.Option(False, "--yes", help="Submit the rest without asking."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Submit the rest of a run whose submission stopped part-way (partly submitted or
    interrupted): the approved plan's jobs of the tasks Slurm has no job for, after checking
    the record still holds the plan approved and reconciling the run with Slurm, nothing
    re-planned (docs/slurm.md, Resuming a run that stopped)."""
    import shlex

    from wass_chat.slurm.commands import SlurmCommands
    from wass_chat.slurm.resume import resume_run, resumption, resumption_digest

    runlog = _runlog()
    commands = SlurmCommands()
    rest = resumption(runlog.get(run), commands, runlog)
    digest = resumption_digest(rest)
    if not as_json:
        console.print(
            f"run {run}: {rest.record.jobs_line} in Slurm; {len(rest.jobs)} to submit "
            f"(digest {digest[:12]})",
            markup=False,
        )
        for task, argv in rest.shown():
            console.print(f"  {task}: sbatch {shlex.join(argv)}", markup=False, soft_wrap=True)
    if rest.jobs and not yes:
        if not sys.stdin or not sys.stdin.isatty():
            raise InputError("resume", ["no terminal to confirm on: review the jobs, pass --yes"])
        typer.confirm(
            f"Submit these {len(rest.jobs)} jobs of run {run} (digest {digest[:12]})?", abort=True
        )
    record = resume_run(rest, digest, commands, runlog)  # the jobs shown, exactly
    result = {
        "run_id": run,
        "state": record.state,
        "resumed": [j.task for j in rest.jobs],
        "digest": digest,
        "jobs": {d.task: d.job_id for d in record.decisions},
    }
    emit(
        result,
        as_json,
        lambda r: console.print(
            f"resumed run {run}: {len(r['resumed'])} jobs submitted, {record.jobs_line}"
        ),
    )


def runs(
    learn: bool = typer.Option(
        True,
        "--learn/--no-learn",
        help="Look up runs not learned yet in Slurm and learn those that ended.",
    ),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Runs in the decision log, oldest first; runs that ended since are learned into the
    knowledge base first (Slurm away: listed as logged, saying so). The demo's runs are not the
    site's and are never listed; a record that cannot be read is one warning line."""
    from wass_chat.demo_home import is_demo_record
    from wass_chat.learn.learner import learn_ended_runs, waits_for_learning
    from wass_chat.slurm.commands import SlurmCommands
    from wass_chat.slurm.recovery import needs_reconciling, reconcile_unsettled

    runlog = _runlog()
    commands = SlurmCommands(timeout=10)
    unsettled = any(needs_reconciling(r) for r in runlog.scan()[0])  # interrupted submissions
    if unsettled and (note := reconcile_unsettled(runlog, commands)):
        err_console.print(note, markup=False, soft_wrap=True)
    if learn and any(waits_for_learning(r) and not is_demo_record(r) for r in runlog.scan()[0]):
        found, note = learn_ended_runs(runlog, commands, kb_opener())
        for learned in found:
            err_console.print(learned.line(), markup=False)
        if note:
            err_console.print(note, markup=False)
    records, broken = runlog.scan()
    records = [r for r in records if not is_demo_record(r)]
    for line in broken:
        err_console.print(f"warning: {line}", markup=False, soft_wrap=True)
    rows = [
        {
            "run_id": r.run_id,
            "created": r.created,
            "workflow": r.workflow_name,
            "scheduler": r.scheduler,
            "state": r.state,
            "jobs": len(r.job_ids),
            "tasks": len(r.decisions),
            "planned_makespan": r.planned_makespan,
            "learned": r.learned,
            "error": r.error,
        }
        for r in records
    ]

    def render(data: list[dict[str, Any]]) -> None:
        if not data:  # an empty list printed as nothing reads as a failure
            console.print(
                f"No runs in {_settings().runs_dir} yet (wass-chat submit WORKFLOW makes one; "
                "the demo's runs are the app's, under the demo home).",
                markup=False,
                soft_wrap=True,
            )
        for r, record in zip(data, records, strict=True):
            learned = f", learned {r['learned']}" if r["learned"] else ""
            console.print(
                f"{r['run_id']}  {r['state']:<10} {r['workflow']} "
                f"({r['scheduler']}, {record.jobs_line}{learned})",
                markup=False,
            )
            if r["state"] in ("partly submitted", "interrupted") and r["error"]:
                console.print(f"    {r['error']}", markup=False)

    emit(rows, as_json, render)


@platform_app.command("from-slurm")
def platform_from_slurm_cmd(
    output: Path | None = typer.Option(None, "-o", "--output", help="Write the platform JSON."),
    partition: str | None = typer.Option(None, "--partition"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Build a platform from `scontrol show nodes` (down and drained nodes left out)."""

    from sim.platforms import dumps_platform, platform_to_dict
    from wass_chat.slurm.nodes import platform_from_slurm

    found = platform_from_slurm(partition=partition or _settings().slurm_partition)
    doc = platform_to_dict(found.platform)
    if output is not None:
        write_output(output, dumps_platform(found.platform, as_json=output.suffix == ".json"))
    data = {**doc, "partition": found.partition, "excluded": [asdict(e) for e in found.excluded]}

    def render(d: dict[str, Any]) -> None:
        for n in d["nodes"]:
            features = ",".join(n.get("features", ())) or "-"
            console.print(
                f"{n['name']}: {n['cores']} cores, {n['memory'] // 2**20} MiB, "
                f"{n['gpus']} GPUs, features {features}"
            )
        for e in d["excluded"]:
            err_console.print(f"excluded {e['name']}: {e['state']} ({e['reason']})")

    emit(data, as_json, render)


def register(app: typer.Typer) -> None:
    """Add this area's commands to ``app``."""
    app.command("submit")(submit)
    app.command("status")(status)
    sim_to_real_app.command("run")(sim_to_real)
    app.add_typer(sim_to_real_app, name="sim-to-real")
    app.command("cancel")(cancel)
    app.command("resume")(resume)
    app.command("runs")(runs)
    app.add_typer(platform_app, name="platform")
