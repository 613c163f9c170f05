"""`wass-chat whatif cluster` (replay the site's workload before and after a change) and
`wass-chat whatif validate-slurm` (a recorded job stream on the real cluster, replayed).

Heavy libraries load inside the commands so ``wass-chat --help`` stays fast.
"""

from __future__ import annotations

import time
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

import typer

from wass_chat.cli import whatif_study_cmds
from wass_chat.cli.output import console, emit, err_console
from wass_chat.cli.period_options import parse_when
from wass_chat.cli.whatif_inputs import duration, jobs_table

whatif_app = typer.Typer(
    help="Whole-cluster what-ifs on the site's own workload (docs/cluster-whatif.md)."
)
PROGRESS_MIN_JOBS = 20_000


def register(app: typer.Typer) -> None:
    """Add this area's commands to ``app``: ``cluster`` here, the studies (validate-slurm,
    bench, learn) from :mod:`wass_chat.cli.whatif_study_cmds`."""
    whatif_study_cmds.add_commands(whatif_app)
    app.add_typer(whatif_app, name="whatif")


@whatif_app.command("cluster")
def cluster_command(
    swf: Path | None = typer.Option(
        None, "--swf", help="Replay a Standard Workload Format trace (.swf, .swf.gz)."
    ),
    sacct_file: Path | None = typer.Option(
        None, "--sacct", help="A sacct -P export or .parquet instead of the cache."
    ),
    start: str | None = typer.Option(
        None, "--start", help="Period start (submission), ISO date or time."
    ),
    end: str | None = typer.Option(None, "--end", help="Period end, exclusive."),
    cluster: str = typer.Option(
        "auto",
        "--cluster",
        help="auto, live (scontrol), jobs (nodes seen), or a platform FILE.yaml.",
    ),
    scheduler: str | None = typer.Option(
        None,
        "--scheduler",
        help="fifo, sjf, priority, easy, fifo-easy, slurm (default: the live config's, else easy).",
    ),
    bf_depth: int | None = typer.Option(
        None, "--bf-depth", min=0, help="Backfill reservation depth (1 = EASY)."
    ),
    add_nodes: list[str] = typer.Option(
        [], "--add-nodes", help="PARTITION:N copies of its usual node (repeatable)."
    ),
    remove_nodes: list[str] = typer.Option(
        [], "--remove-nodes", help="PARTITION:N of its last nodes (repeatable)."
    ),
    max_time: list[str] = typer.Option(
        [], "--max-time", help="PARTITION:HOURS as its MaxTime (repeatable)."
    ),
    weights: str | None = typer.Option(
        None, "--weights", help="Priority weights, e.g. age=1000,fairshare=0."
    ),
    compare_scheduler: str | None = typer.Option(
        None, "--compare-scheduler", help="Replay the variant under this scheduler."
    ),
    predict: bool = typer.Option(
        False, "--predict-walltime", help="Plan with walltimes predicted from each user's history."
    ),
    power_off: float | None = typer.Option(
        None, "--power-off-after", min=0, help="Idle nodes off after MINUTES."
    ),
    boot: int = typer.Option(300, "--boot-time", min=0, help="Seconds a node takes to come back."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Replay the workload, then again with the changes; waits, utilisation, makespan, energy.

    The changes are replayed only when the unchanged replay's mean wait is within 25% of the
    recorded one (docs/cluster-whatif.md, "Is the baseline the site?"); otherwise the baseline
    is compared with the record, no difference is printed, and the exit code is still 0."""
    from wass_chat.batch.baseline_match import checked_compare
    from wass_chat.batch.whatif import Changes, parse_pairs, parse_weights

    changes = Changes(
        add_nodes=parse_pairs(add_nodes, "--add-nodes"),
        remove_nodes=parse_pairs(remove_nodes, "--remove-nodes"),
        max_time=parse_pairs(max_time, "--max-time", 3600.0),
        weights=parse_weights(weights),
        scheduler=compare_scheduler,
        predict_walltime=predict,
        power_off_after_s=None if power_off is None else int(power_off * 60),
        boot_s=boot,
    )
    if compare_scheduler is not None:
        from sim.batch.config import scheduler_preset

        scheduler_preset(compare_scheduler)  # unknown names fail here, before any replay
    began = time.process_time()
    loaded, jobs = _scenario(swf, sacct_file, start, end, cluster, scheduler, bf_depth)
    with _progress(len(loaded.scenario.workload), as_json) as bar:
        report = checked_compare(loaded, changes, jobs, progress=bar)
    report["source"] = loaded.source
    report["cpu_s"] = time.process_time() - began
    emit(report, as_json, _render)


def _scenario(
    swf: Path | None,
    sacct_file: Path | None,
    start: str | None,
    end: str | None,
    cluster: str,
    scheduler: str | None,
    bf_depth: int | None,
) -> tuple[Any, Any]:
    """The loaded scenario, and the sacct table it came from (None for an SWF trace)."""
    from sim.errors import InputError
    from wass_chat.batch.scenario import load_scenario

    if swf is not None and sacct_file is not None:
        raise InputError("options", ["--swf and --sacct are two workloads: give one"])
    jobs = None if swf is not None else jobs_table(sacct_file)
    loaded = load_scenario(
        jobs,
        swf,
        parse_when(start, "--start"),
        parse_when(end, "--end"),
        cluster,
        scheduler,
        bf_depth,
        str(sacct_file or "sacct cache"),
    )
    return loaded, jobs


def _progress(jobs: int, as_json: bool) -> AbstractContextManager[Any]:
    if as_json or jobs < PROGRESS_MIN_JOBS:
        return nullcontext(None)
    return _ProgressBar(jobs)


class _ProgressBar:
    """A rich progress bar on stderr, one task per replay (baseline, variant)."""

    def __init__(self, total: int) -> None:
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        self.total = total
        self.bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("{task.completed:,}/{task.total:,} jobs"),
            TimeElapsedColumn(),
            console=err_console,
            transient=True,
        )
        self.tasks: dict[str, Any] = {}

    def __enter__(self) -> Any:
        self.bar.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.bar.__exit__(*exc)  # type: ignore[arg-type]

    def __call__(self, name: str, done: int, total: int) -> None:
        if name not in self.tasks:
            self.tasks[name] = self.bar.add_task(name, total=total)
        self.bar.update(self.tasks[name], completed=done)


def scheduler_in_words(s: dict[str, Any]) -> str:
    """The replay's scheduler as a person reads it, from the report's ``source.scheduler``."""
    order = f"{s['order']} order"
    if not s["backfill"]:
        return f"{order}, no backfill"
    return (
        f"{order} with backfill (reservation depth {s['reservation_depth']}, a pass every "
        f"{s['bf_interval_s']} s)"
    )


def _render(report: dict[str, Any]) -> None:
    from rich.table import Table

    src = report["source"]
    console.print(
        f"[bold]{src['jobs']:,} jobs[/] from {src['workload']}; cluster: {src['cluster']}; "
        f"scheduler: {scheduler_in_words(src['scheduler'])}"
    )
    for key in (
        "never_started",
        "still_running",
        "left_out_fit_nowhere",
        "left_out_partition_gone",
        "skipped_without_run",
    ):
        if src.get(key):
            console.print(f"  {key.replace('_', ' ')}: {src[key]:,}")
    if report.get("left_out_unfit_after_change"):
        n = report["left_out_unfit_after_change"]
        console.print(f"  left out of both runs, too big for the changed cluster: {n:,}")
    check = report.get("baseline_check") or {}
    if not check.get("matches", True):
        _render_unmatched(report, check)
        return
    runs = [("baseline", report["baseline"])] + (
        [("variant", report["variant"])] if "variant" in report else []
    )
    table = Table(title="What-if: " + ("; ".join(report["changes"]) or "replay only"))
    table.add_column("figure")
    for name, _ in runs:
        table.add_column(name, justify="right")
    if "difference" in report:
        table.add_column("change", justify="right")
    d = report.get("difference", {})
    rows = [
        (
            "wait mean",
            lambda s: duration(s["waits"]["mean_s"]),
            _dur_delta(d.get("wait_mean_s")) + _ci(d),
        ),
        (
            "wait median",
            lambda s: duration(s["waits"]["median_s"]),
            _dur_delta(d.get("wait_median_s")),
        ),
        ("wait p95", lambda s: duration(s["waits"]["p95_s"]), _dur_delta(d.get("wait_p95_s"))),
        (
            "utilisation",
            lambda s: f"{100 * s['utilisation']:.1f}%",
            "" if not d else f"{100 * d['utilisation']:+.1f} pts",
        ),
        ("makespan", lambda s: duration(s["makespan_s"]), _dur_delta(d.get("makespan_s"))),
        (
            "energy (facility)",
            lambda s: f"{s['energy']['facility_kwh']:,.0f} kWh",
            "" if not d else f"{d['energy_facility_kwh']:+,.0f} kWh",
        ),
        ("backfilled jobs", lambda s: f"{s['backfilled']:,}", ""),
        ("killed at limit", lambda s: f"{s['killed_at_limit']:,}", ""),
    ]
    for label, cell, change in rows:
        table.add_row(label, *[cell(s) for _, s in runs], *([change] if d else []))
    console.print(table)
    for group in ("waits_by_partition", "waits_by_size"):
        sub = Table(title=f"mean wait by {group.removeprefix('waits_by_')}")
        sub.add_column(group.removeprefix("waits_by_"))
        sub.add_column("jobs", justify="right")
        for name, _ in runs:
            sub.add_column(name, justify="right")
        for key, stats in report["baseline"][group].items():
            cells = [duration(s[group].get(key, {}).get("mean_s", 0.0)) for _, s in runs]
            sub.add_row(key, f"{stats['jobs']:,}", *cells)
        console.print(sub)
    rec = report.get("baseline_vs_recorded", {})
    if rec.get("jobs"):
        console.print(
            f"baseline against the recorded starts: {100 * rec['within_tolerance']:.1f}% within "
            f"{rec['tolerance_s']:.0f} s, start-order rank correlation "
            f"{rec['start_rank_correlation']:.3f}; mean wait recorded "
            f"{duration(rec['recorded_wait_mean_s'])}, "
            f"replayed {duration(rec['simulated_wait_mean_s'])}"
        )
    if check:
        from wass_chat.batch.baseline_match import matched_words

        console.print(matched_words(check))
    energy = report.get("recorded_energy") or {}
    if energy:
        parts = ", ".join(f"{p} {v:,.0f}" for p, v in energy["by_partition_kwh"].items())
        console.print(
            f"recorded schedule: {energy['facility_kwh']:,.0f} kWh at the facility "
            f"({energy['it_kwh']:,.0f} kWh IT); jobs by partition (kWh): {parts}"
        )
    if "prediction_accuracy" in report:
        acc = report["prediction_accuracy"]
        console.print(
            f"walltime predictions for {acc['predicted']:,} of {acc['jobs']:,} jobs: "
            f"prediction {acc['prediction']}, requested limits {acc['requested_limit']}"
        )
    console.print(f"[dim]{report['cpu_s']:.1f} s CPU[/]")


def _render_unmatched(report: dict[str, Any], check: dict[str, Any]) -> None:
    from wass_chat.batch.baseline_match import unmatched_words

    for line in unmatched_words(check, report["changes"]):
        console.print(line)
    rec = report.get("baseline_vs_recorded", {})
    if rec.get("jobs"):
        console.print(
            f"Starts within {rec['tolerance_s']:.0f} s of the recorded ones: "
            f"{100 * rec['within_tolerance']:.1f}%; start-order rank correlation "
            f"{rec['start_rank_correlation']:.3f}."
        )
    console.print(f"[dim]{report['cpu_s']:.1f} s CPU[/]")


def _dur_delta(seconds: float | None) -> str:
    if seconds is None:
        return ""
    return ("+" if seconds >= 0 else "-") + duration(abs(seconds))


def _delta(d: dict[str, Any], key: str) -> str:
    return _dur_delta(d.get(key))


def _ci(d: dict[str, Any]) -> str:
    if not d:
        return ""
    low, high = d["wait_mean_ci95_s"]
    return f" (95% CI {_dur_delta(low)} to {_dur_delta(high)})"
