"""`wass-chat whatif validate-slurm`, `validate-swf`, `bench` and `learn`: the studies behind
docs/cluster-whatif.md's figures (the real-Slurm comparison, a public log's recorded waits,
the year replay; the learned queue orders in :mod:`wass_chat.cli.whatif_learn_cmds`). Heavy
libraries load inside the commands.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import typer

from wass_chat.cli.output import console, emit, progress_done, progress_line
from wass_chat.cli.whatif_inputs import duration
from wass_chat.cli.whatif_learn_cmds import learn_command

PROGRESS_MIN_JOBS = 20_000
"""Replays of fewer jobs end before a progress line would help."""


def add_commands(group: typer.Typer) -> None:
    """Attach the five study commands to the ``whatif`` group."""
    group.command("validate-slurm")(validate_command)
    group.command("validate-start")(validate_start_command)
    group.command("validate-swf")(validate_swf_command)
    group.command("bench")(bench_command)
    group.command("learn")(learn_command)


def validate_command(
    jobs: int = typer.Option(300, "--jobs", min=5, help="Jobs in the stream."),
    seed: int = typer.Option(0, "--seed", help="Stream seed (same seed, same stream)."),
    output: Path | None = typer.Option(
        None, "-o", "--output", help="Save the recording (JSON) here."
    ),
    replay: Path | None = typer.Option(
        None, "--replay", help="Replay a saved recording instead of running a stream."
    ),
    per_job: bool = typer.Option(
        False, "--per-job", help="Also list every job's real and simulated wait."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Run short jobs on the live cluster (or read a recording); compare simulated starts.

    The stream is submitted in real time, recorded, replayed from the cluster's own
    configuration, and each simulated start is compared with the real one.
    """
    from sim.atomic_files import write_output
    from wass_chat.batch.validation import (
        load_recording,
        make_stream,
        record_stream,
        replay_recording,
        scheduler_variants,
    )

    if replay is not None:
        recording = load_recording(replay)
    else:
        stream = make_stream(jobs, seed)
        show = None if as_json else (lambda what, k, total: progress_line(f"{what} {k}/{total}"))
        recording = record_stream(stream, progress=show)
        if show is not None:
            progress_done()
        recording["seed"] = seed
        if output is not None:
            write_output(output, json.dumps(recording))
    base = replay_recording(recording)
    variants = {
        name: replay_recording(recording, cfg).agreement
        for name, cfg in scheduler_variants(base.scheduler).items()
    }
    report: dict[str, Any] = {
        "jobs": len(recording["job_ids"]),
        "agreement": base.agreement,
        "variants": variants,
    }
    if per_job:
        report["per_job"] = base.per_job()
    emit(report, as_json, _render_validation)


def _render_validation(report: dict[str, Any]) -> None:
    a = report["agreement"]
    console.print(
        f"{report['jobs']} jobs replayed: {100 * a['within_tolerance']:.1f}% start within "
        f"{a['tolerance_s']:.0f} s of the real start (goal 90%), start-order rank correlation "
        f"{a['start_rank_correlation']:.3f} (goal 0.95)"
    )
    console.print(
        f"  mean wait real {a['recorded_wait_mean_s']:.1f} s, simulated "
        f"{a['simulated_wait_mean_s']:.1f} s; |error| median {a['error_median_abs_s']:.0f} s, "
        f"p95 {a['error_p95_abs_s']:.0f} s"
    )
    for name, v in report["variants"].items():
        console.print(
            f"  {name}: {100 * v['within_tolerance']:.1f}% within tolerance, "
            f"rank correlation {v['start_rank_correlation']:.3f}"
        )


def validate_start_command(
    jobs: int = typer.Option(20, "--jobs", min=1, help="Pending jobs whose copies are run."),
    seed: int = typer.Option(0, "--seed", help="Queue seed (same seed, same queue)."),
    yes: bool = typer.Option(False, "--yes", help="Submit without asking (it asks otherwise)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    replay: Path | None = typer.Option(
        None,
        "--replay",
        help="A saved run (this command's --json) predicted again by today's model, no Slurm.",
    ),
) -> None:
    """Predict when changed copies of pending jobs start, then run them on the live cluster.

    A queue of short jobs is built; for each of ``--jobs`` pending jobs a changed copy
    (shorter --time or fewer CPUs) is predicted by our replay of the whole queue, the
    originals are cancelled, the copies submitted, and their real starts compared (minutes).
    """
    import sys

    from sim.errors import InputError
    from wass_chat.slurm.start_validation import replay_validation, run_validation

    if replay is not None:
        try:
            saved = json.loads(replay.read_text())
        except (OSError, ValueError) as exc:
            raise InputError("validate-start --replay", [f"{replay}: {exc}"]) from exc
        if not isinstance(saved, dict):
            raise InputError("validate-start --replay", [f"{replay}: not a saved run"])
        emit(replay_validation(saved), as_json, _render_start)
        return
    if not yes:
        if not sys.stdin or not sys.stdin.isatty():
            raise InputError("validate-start", ["no terminal to confirm on: pass --yes"])
        typer.confirm(
            f"Submit about {jobs * 2 + 10} short jobs (sleep, 1-3 minutes) to the live cluster "
            "and cancel the pending ones among them?",
            abort=True,
        )
    show = None if as_json else progress_line
    result = run_validation(n_jobs=jobs, seed=seed, progress=show)
    if show is not None:
        progress_done()
    emit(result, as_json, _render_start)


def _render_start(report: dict[str, Any]) -> None:
    width = report["window_width_s"]
    console.print(
        f"{report['within']} of {report['jobs']} changed copies started within "
        f"{report['bound_s']} s ({report['bound']}) of the queue model's prediction "
        f"(goal 18 of 20); its point alone: {report['within_point']}; sbatch --test-only "
        f"alone: {report['test_only_within']} of {report['jobs']}"
    )
    if width["median"] is not None:
        console.print(
            f"  window of the rules in doubt: median {width['median']:.0f} s, "
            f"max {width['max']:.0f} s wide"
        )
    errors = [abs(r["error_s"]) for r in report["per_job"] if r["error_s"] is not None]
    if errors:
        median = sorted(errors)[len(errors) // 2]
        console.print(f"  |error| median {median:.0f} s, max {max(errors):.0f} s")
    for note in report["caveats"]:
        console.print(f"  {note}")


def validate_swf_command(
    trace: Path = typer.Argument(..., help="An SWF log (.swf, .swf.gz) with recorded waits."),
    schedulers: list[str] = typer.Option(
        [],
        "--scheduler",
        help="Replay under this preset (repeatable; default fifo-easy, easy, fifo, sjf).",
    ),
    launch_delay: int = typer.Option(
        0, "--launch-delay", min=0, help="Seconds no job may start before (a launch latency)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Replay a public SWF log on its own machine; compare simulated and recorded waits.

    The machine is one pool of the header's MaxProcs; jobs run their recorded run time and
    are planned by their requested time. The site's own scheduler made the recorded waits.
    """
    from wass_chat.batch.swf_validation import BASELINES, compare_swf_log, load_swf_log

    began = time.process_time()
    log = load_swf_log(trace)
    show = (
        None
        if as_json or len(log.workload) < PROGRESS_MIN_JOBS
        else (lambda name, k, total: progress_line(f"{name}: {k:,}/{total:,} jobs"))
    )
    report = compare_swf_log(log, schedulers or BASELINES, launch_delay, show)
    if show is not None:
        progress_done()
    report["cpu_s"] = time.process_time() - began
    emit(report, as_json, _render_swf)


def _render_swf(r: dict[str, Any]) -> None:
    from rich.table import Table

    m = r["machine"]
    parts = ", ".join(m["partitions"].values())
    console.print(
        f"[bold]{r['jobs']:,} jobs[/] from {r['source']} ({r['with_recorded_wait']:,} with a "
        f"recorded wait; {r['skipped_without_run']:,} lines without a run left out)"
    )
    console.print(
        f"  machine: {m['installation'] or m['computer'] or 'unnamed'}, {m['max_procs']:,} "
        "processors" + (f"; partitions {parts}" if parts else "")
    )
    if m["note"]:
        console.print(f"  note: {m['note']}")
    shortest = r["recorded_min_wait_s"]
    hint = (
        f" (no job started sooner: --launch-delay {shortest:.0f} models the site's start-up)"
        if not r["launch_delay_s"] and shortest >= 1
        else ""
    )
    console.print(
        f"  shortest recorded wait {duration(shortest)}; launch delay {r['launch_delay_s']} s"
        + hint
    )
    runs = r["runs"]
    first = next(iter(runs.values()))
    table = Table(
        title=f"starts: simulated against recorded (tolerance {first['tolerance_s']:.0f} s)"
    )
    for col in ("scheduler", "within tolerance", "start-order rank corr.", "|error| median"):
        table.add_column(col, justify="left" if col == "scheduler" else "right")
    rows = [*runs.items(), ("no queue (reference)", r["no_queue_reference"])]
    for name, a in rows:
        table.add_row(
            name,
            f"{100 * a['within_tolerance']:.1f}%",
            f"{a['start_rank_correlation']:.3f}",
            duration(a["error_median_abs_s"]),
        )
    console.print(table)
    waits = Table(title="waits")
    for col in ("", "mean", "median", "p95"):
        waits.add_column(col, justify="left" if not col else "right")
    wait_rows = [("recorded", first["recorded_waits"])]
    wait_rows += [(name, a["simulated_waits"]) for name, a in runs.items()]
    for label, stats in wait_rows:
        waits.add_row(label, *[duration(stats[k]) for k in ("mean_s", "median_s", "p95_s")])
    console.print(waits)
    name = next(iter(runs))
    sizes = Table(title=f"{name} by job size (share of the machine)")
    for col in ("size", "jobs", "within tolerance", "median wait recorded", "simulated"):
        sizes.add_column(col, justify="left" if col == "size" else "right")
    for label, a in runs[name]["by_size"].items():
        sizes.add_row(
            label,
            f"{a['jobs']:,}",
            f"{100 * a['within_tolerance']:.1f}%",
            duration(a["recorded_waits"]["median_s"]),
            duration(a["simulated_waits"]["median_s"]),
        )
    console.print(sizes)
    console.print(f"[dim]{r['cpu_s']:.2f} s CPU[/]")


def bench_command(
    jobs: int = typer.Option(1_500_000, "--jobs", min=1, help="Synthetic jobs (sacct synth)."),
    days: float = typer.Option(365.0, "--days", min=1.0, help="Length of the submission window."),
    seed: int = typer.Option(0, "--seed", help="Synthesis seed."),
    scheduler: str = typer.Option("easy", "--scheduler", help="Scheduler preset to replay with."),
    bf_depth: int | None = typer.Option(
        None, "--bf-depth", min=0, help="Backfill reservation depth."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Replay a synthetic year (1.5 M jobs by default) once: CPU seconds and memory."""
    from sim.batch.config import scheduler_preset
    from wass_chat.batch.bench import run_bench

    scheduler_preset(scheduler)
    report = run_bench(jobs, days, seed, scheduler, bf_depth)
    emit(report, as_json, _render_bench)


def _render_bench(r: dict[str, Any]) -> None:
    console.print(
        f"{r['jobs_replayed']:,} jobs over {r['days']:g} days on {r['cluster']['nodes']:,} nodes "
        f"({r['cluster']['cpus']:,} CPUs), {r['scheduler']['name']} (depth "
        f"{r['scheduler']['reservation_depth']}), {r['engine']} engine"
    )
    console.print(
        f"  replay {r['replay_cpu_s']:.1f} s CPU ({r['replay_wall_s']:.1f} s wall), loading "
        f"{r['load_cpu_s']:.1f} s CPU, summary {r['summary_cpu_s']:.1f} s CPU; peak memory "
        f"{r['peak_rss_before_replay_mib']:,.0f} MiB before the replay, "
        f"{r['peak_rss_after_replay_mib']:,.0f} MiB after"
    )
    console.print(
        f"  {r['events']:,} events, {r['passes']['main']:,} main and {r['passes']['backfill']:,} "
        f"backfill passes; {r['backfilled']:,} jobs backfilled; mean wait "
        f"{r['waits']['mean_s']:.0f} s, utilisation {100 * r['utilisation']:.1f}%"
    )
