"""`wass-chat whatif learn`: a learned queue order (the linear cross-entropy priority, or the
graph-attention policy) trained on past weeks and judged against FIFO, SJF and EASY on the
weeks that follow (docs/cluster-whatif.md, "The learned job scheduler"). Heavy libraries load
inside the command.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import typer

from sim.atomic_files import require_folder
from wass_chat.cli.output import console, emit, err_console, progress_done, progress_line
from wass_chat.cli.whatif_inputs import jobs_table


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
    if save is not None:
        require_folder(save)  # before the training, not after it
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
            else lambda u, s: progress_line(
                f"update {u}/{updates}: wait {s['wait_ratio']:.3f} of EASY's"
            )
        )
        net, record = train_ppo(train_set, cfg, progress=show)
        if show is not None:
            progress_done()
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
