"""`wass-chat whatif validate-slurm`, `validate-swf`, `bench` and `learn`: the studies behind
docs/cluster-whatif.md's figures (the real-Slurm comparison, a public log's recorded waits,
the year replay, the learned queue order). Heavy libraries load inside the commands.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import typer

from wass_chat.cli.output import console, emit, err_console
from wass_chat.cli.whatif_inputs import duration, jobs_table

PROGRESS_MIN_JOBS = 20_000
"""Replays of fewer jobs end before a progress line would help."""


def add_commands(group: typer.Typer) -> None:
    """Attach the four study commands to the ``whatif`` group."""
    group.command("validate-slurm")(validate_command)
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
    from wass_chat.atomic_files import write_atomic
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
        show = (
            None
            if as_json
            else (lambda what, k, total: err_console.print(f"{what} {k}/{total}", end="\r"))
        )
        recording = record_stream(stream, progress=show)
        recording["seed"] = seed
        if output is not None:
            write_atomic(output, json.dumps(recording))
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
        else (lambda name, k, total: err_console.print(f"{name}: {k:,}/{total:,} jobs", end="\r"))
    )
    report = compare_swf_log(log, schedulers or BASELINES, launch_delay, show)
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
    console.print(
        f"  shortest recorded wait {duration(r['recorded_min_wait_s'])}; launch delay "
        f"{r['launch_delay_s']} s"
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
    console.print(f"[dim]{r['cpu_s']:.1f} s CPU[/]")


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


def learn_command(
    sacct_file: Path | None = typer.Option(
        None, "--sacct", help="Train on this sacct export instead of two synthetic sites."
    ),
    policy: str = typer.Option(
        "cem",
        "--policy",
        help="cem: linear priority (cross-entropy); gat: graph attention (cloned, PPO optional).",
    ),
    train_weeks: int = typer.Option(
        4, "--train-weeks", min=1, help="Weeks of each workload to train on."
    ),
    test_weeks: int = typer.Option(4, "--test-weeks", min=1, help="Following weeks held out."),
    jobs_per_week: int = typer.Option(
        3000, "--jobs-per-week", min=100, help="Synthetic jobs per week."
    ),
    generations: int = typer.Option(8, "--generations", min=1, help="Cross-entropy iterations."),
    population: int = typer.Option(10, "--population", min=2, help="Weight vectors per iteration."),
    checkpoint: Path | None = typer.Option(
        None, "--checkpoint", help="gat: evaluate this checkpoint (default: the shipped one)."
    ),
    retrain: bool = typer.Option(False, "--train", help="gat: train a new policy first."),
    updates: int = typer.Option(
        0, "--updates", min=0, help="gat: PPO updates after the warm start (step budget)."
    ),
    imitation: int = typer.Option(
        24, "--imitation", min=0, help="gat: windows cloned from the linear order first."
    ),
    save: Path | None = typer.Option(None, "--save", help="gat: write the trained checkpoint."),
    greedy: bool = typer.Option(
        False, "--greedy", help="gat: take the most likely job, not a seeded sample."
    ),
    energy_weight: float = typer.Option(
        0.0, "--energy-weight", min=0.0, help="Energy against wait in the reward."
    ),
    seed: int = typer.Option(0, "--seed", help="Training seed."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Fit a learned job scheduler on training weeks; compare it on held-out weeks.

    Against FIFO, SJF and EASY (and, for gat, the cross-entropy order); a recommendation
    only, Slurm's scheduler is never replaced.
    """
    from sim.batch.learn import LearnConfig, evaluate, train
    from sim.errors import InputError
    from wass_chat.batch.learned_eval import own_periods, synthetic_periods

    if policy not in ("cem", "gat"):
        raise InputError("--policy", [f"{policy!r} is not cem or gat"])
    began = time.process_time()
    if sacct_file is not None:
        train_set, test_set = own_periods(jobs_table(sacct_file), None, train_weeks, test_weeks)
    else:
        train_set, test_set = synthetic_periods(jobs_per_week, train_weeks, test_weeks)
    lc = LearnConfig(
        generations=generations, population=population, energy_weight=energy_weight, seed=seed
    )
    if policy == "gat":
        report = _learn_gat(
            train_set,
            test_set,
            lc,
            checkpoint,
            (updates, imitation) if retrain else None,
            save,
            greedy,
            as_json,
        )
    else:
        show = (
            None
            if as_json
            else (lambda g, r: err_console.print(f"generation {g}/{generations}: reward {r:.4f}"))
        )
        fitted = train(train_set, lc, progress=show)
        report = {
            "policy": "cem",
            "training_periods": [p.name for p in train_set],
            "held_out": evaluate(test_set, fitted["weights"], lc, seed=seed),
        }
        report.update(fitted)
    report["cpu_s"] = time.process_time() - began
    emit(report, as_json, _render_learn)


def _learn_gat(
    train_set: list[Any],
    test_set: list[Any],
    lc: Any,
    checkpoint: Path | None,
    budget: tuple[int, int] | None,
    save: Path | None,
    greedy: bool,
    as_json: bool,
) -> dict[str, Any]:
    """Train (``--train``: ``budget`` is (PPO updates, imitation windows)) or load the
    graph-attention policy; evaluate it held out."""
    from policy.batch_gat.evaluate import SHIPPED_CHECKPOINT, evaluate_policy
    from policy.batch_gat.model import load_checkpoint, save_checkpoint
    from policy.batch_gat.train import PPOConfig
    from policy.batch_gat.train import train as train_ppo

    if budget is not None:
        updates, imitation = budget
        cfg = PPOConfig(
            updates=updates,
            imitation_windows=imitation,
            energy_weight=lc.energy_weight,
            seed=lc.seed,
        )
        show = (
            None
            if as_json
            else lambda u, s: err_console.print(
                f"update {u}/{updates}: wait {s['wait_ratio']:.3f} of EASY's", end="\r"
            )
        )
        net, record = train_ppo(train_set, cfg, progress=show)
        if show is not None:
            err_console.print()  # end the progress line
        training = {k: v for k, v in record.items() if k != "history"}
        training["wait_ratio_history"] = [h["wait_ratio"] for h in record["history"]]
        training["training_periods"] = [p.name for p in train_set]
        if save is not None:
            save_checkpoint(net, str(save), training)
        source = str(save) if save is not None else "trained now, not saved"
    else:
        path = checkpoint or SHIPPED_CHECKPOINT
        net, training = load_checkpoint(str(path))
        source = str(path)
    evaluated = time.process_time()
    held_out = evaluate_policy(net, test_set, lc, seed=lc.seed, greedy=greedy)
    return {
        "policy": "gat",
        "choices": "greedy" if greedy else f"sampled, seed {lc.seed}",
        "checkpoint": source,
        "training": training,
        "held_out": held_out,
        "eval_cpu_s": time.process_time() - evaluated,
    }


def _render_learn(r: dict[str, Any]) -> None:
    from rich.table import Table

    if r["policy"] == "cem":
        console.print(
            f"learned weights {r['weights']} (train reward {r['train_reward']:.4f}, EASY = 1.0; "
            f"{r['replays']} replays per training period)"
        )
    else:
        t = r["training"]
        cloned = (t.get("imitation") or {}).get("decisions", 0)
        steps = [f"{cloned:,.0f} decisions of the linear order cloned"] if cloned else []
        if t.get("updates"):
            steps.append(
                f"{t['updates']} PPO updates ({t.get('episodes')} windows, "
                f"{t.get('decisions')} decisions)"
            )
        console.print(
            f"graph-attention policy from {r['checkpoint']}: "
            f"{', then '.join(steps) or 'untrained'}, "
            f"{float(t.get('train_cpu_s', 0.0)):.0f} s CPU to train; "
            f"held-out evaluation ({r['choices']}) {r['eval_cpu_s']:.1f} s CPU"
        )
    table = Table(title="held-out weeks: learned / baseline, geometric mean (95% CI) w/t/l")
    table.add_column("baseline")
    for col in ("mean wait", "energy", "p95 wait", "wide jobs' wait"):
        table.add_column(col)
    for base, c in r["held_out"]["learned_vs"].items():
        cells = [
            f"{c[k]['geomean_ratio']:.3f} ({c[k]['ci95'][0]:.3f}-{c[k]['ci95'][1]:.3f}) "
            f"{c[k]['wins']}/{c[k]['ties']}/{c[k]['losses']}"
            for k in ("wait", "energy", "p95_wait", "wide_wait")
        ]
        table.add_row(base, *cells)
    console.print(table)
    console.print(f"[dim]{r['cpu_s']:.1f} s CPU[/]")
