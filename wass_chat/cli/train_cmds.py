"""``wass-chat train``: the performance predictor and the GNN + PPO placement policy."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from policy.learned.config import TrainConfig
from policy.learned.run import HeldOutEvaluation
from wass_chat.cli.array_run import ARRAY_DIR_HELP, SLURM_ARRAY_HELP
from wass_chat.cli.output import console, emit, err_console
from wass_chat.cli.train_inputs import ccrs_of as _ccrs
from wass_chat.cli.train_inputs import recipes_of as _recipes
from wass_chat.slurm.arrays.config import EVALUATE_MEMORY_MB, ArrayConfig

if TYPE_CHECKING:
    from policy.learned.evaluate import Evaluation

train_app = typer.Typer(
    help="Train the learned placement policy and its RAG teacher, or the DQN scheduler."
)

RECIPES_HELP = "Comma-separated recipes to train on (default: all nine)."
TEACHER_INSTANCES = 36
"""Instances the RAG teacher's predictor is fitted on (`train policy`, `train predictor`)."""
_TRAIN = TrainConfig()
"""`train policy`'s defaults are the config's (tests/learned/test_train_config.py)."""
_HELD_OUT = HeldOutEvaluation()
_ARRAY = ArrayConfig()
_CCRS = ",".join(f"{c:g}" for c in _TRAIN.ccrs)


@train_app.command("policy")
def train_policy(
    no_rag: bool = typer.Option(
        not _TRAIN.use_rag, "--no-rag", help="Sparse reward only (the ablation)."
    ),
    budget: float | None = typer.Option(
        _TRAIN.budget_minutes,
        help="Optional wall-clock cap in minutes (expert iteration and PPO stop early when it is "
        "spent); default: none, training runs its --updates whatever the load.",
    ),
    updates: int = typer.Option(
        _TRAIN.updates, help="PPO updates: the step budget training stops on."
    ),
    instances: int = typer.Option(_TRAIN.train_instances, help="Distinct training instances."),
    recipes: str = typer.Option(None, help=RECIPES_HELP),
    holdout: str = typer.Option(
        None, "--holdout-recipes", help="Recipes kept out of training, evaluated separately."
    ),
    ccrs: str = typer.Option(_CCRS, help="Data regimes: 0 = WfCommons sizes, else a CCR."),
    seed: int = typer.Option(_TRAIN.seed, help="Training seed."),
    workers: int = typer.Option(_TRAIN.workers, help="Rollout processes."),
    out: Path = typer.Option(Path(_TRAIN.out_dir), help="Where checkpoint and metrics go."),
    eval_instances: int = typer.Option(
        _HELD_OUT.instances, help="Held-out instances to evaluate on."
    ),
    validation: int = typer.Option(
        _TRAIN.validation_instances,
        help="Validation instances (training seeds) that pick the kept weights; 0: last.",
    ),
    teacher_instances: int = typer.Option(
        TEACHER_INSTANCES, help="Instances the RAG teacher's predictor is trained and tested on."
    ),
    expert_iterations: int = typer.Option(
        _TRAIN.expert_iterations,
        help="Rounds of imitating the policy's own one-step lookahead before PPO.",
    ),
    expert_instances: int = typer.Option(
        _TRAIN.expert_instances, help="Instances the lookahead labels per round."
    ),
    init: Path = typer.Option(
        None, exists=True, dir_okay=False, help="Start from this checkpoint, not from scratch."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    reembed_kb: bool = typer.Option(
        False, "--reembed-kb", help="Then re-embed the knowledge base with the new encoder."
    ),
    estimates: str = typer.Option(
        _TRAIN.estimates,
        help="oracle: the exact setting; user: plan on walltime requests (RAG: "
        "calibrated by --history), run realised values.",
    ),
    history: Path = typer.Option(
        None, help="Realised executions for --estimates user (`wass-chat estimates seed`)."
    ),
    noise: float = typer.Option(
        _TRAIN.noise, min=0.0, help="Scale of realised spreads (--estimates)."
    ),
) -> None:
    """Train the policy (optional expert iteration, then PPO) and evaluate it held-out."""
    from policy.learned.run import run_train
    from sim.errors import InputError
    from wass_chat.cli.train_inputs import check_estimates
    from wass_chat.config import settings
    from wass_chat.learning_inputs import training_inputs

    held = _recipes(holdout) if holdout else ()
    names = tuple(r for r in _recipes(recipes) if r not in held)
    check_estimates(estimates, not no_rag, history)
    cfg = TrainConfig(
        seed=seed,
        recipes=names,
        train_instances=instances,
        updates=updates,
        ccrs=_ccrs(ccrs),
        budget_minutes=budget,
        use_rag=not no_rag,
        workers=workers,
        validation_instances=validation,
        expert_iterations=expert_iterations,
        expert_instances=expert_instances,
        init=str(init) if init else None,
        out_dir=str(out / ("norag" if no_rag else "rag") / f"seed{seed}"),
        estimates=estimates,
        noise=noise,
    )
    if problems := cfg.problems():
        raise InputError("train policy", problems)
    inputs = training_inputs(cfg, settings().kb_dir, history, eval_instances, teacher_instances)
    fit = inputs.fit
    if fit is not None:
        err_console.print(  # progress: stderr, so --json stays one document on stdout
            f"predictor (held-out episodes): R^2 {fit.r2:.3f} on log(makespan / time unit), "
            f"{fit.r2_log_makespan:.3f} on log(makespan); MAPE {fit.mape:.2%}"
        )
    run = run_train(
        cfg,
        None if as_json else _print_line,
        evaluation=HeldOutEvaluation(eval_instances, held),
        teacher=inputs.teacher,
        predictions=inputs.predictions,
    )
    data = run.document() | {
        "predictor": asdict(fit) if fit else None,
        "kb_reembed": _reembed_kb(run.train.checkpoint) if reembed_kb else None,
    }

    def render(d: dict[str, object]) -> None:
        for split, evs in run.evaluations.items():
            for regime, ev in evs.items():
                console.print(f"{split} {regime}: {_line(ev)}")
        if run.train.kept is not None:
            console.print(
                f"kept the weights of {run.train.kept} (validation makespan/HEFT "
                f"{run.train.validation_ratio:.4f})"
            )
        console.print(f"checkpoint {d['checkpoint']}")

    emit(data, as_json, render)


def _print_line(line: str) -> None:
    """A training progress line, on stdout as training always printed them."""
    print(line, flush=True)


@train_app.command("predictor")
def train_predictor(
    instances: int = typer.Option(
        TEACHER_INSTANCES, help="Training-seed instances to simulate decisions on."
    ),
    samples: int = typer.Option(3, help="Stochastic episodes per instance (plus one HEFT-led)."),
    recipes: str = typer.Option(None, help=RECIPES_HELP),
    ccrs: str = typer.Option(_CCRS, help="Data regimes: 0 = WfCommons sizes, else a CCR."),
    seed: int = typer.Option(0, help="Instance draw, sampling and split seed."),
    kb_dir: Path = typer.Option(None, "--kb", help="Knowledge base (default: WASS_HOME/kb)."),
    out: Path = typer.Option(None, help="Save the trained predictor here (.pt)."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Stage 2: fit the performance predictor on simulated decisions with retrieved cases.

    Reports R^2 and MAPE on held-out episodes (whole episodes are held out, so nothing of a
    test run leaks into training).
    """
    import torch

    from kb.store import KnowledgeBase
    from policy.learned.instances import sample_specs
    from sim.atomic_files import write_output
    from wass_chat.config import settings
    from wass_chat.learning import build_teacher

    specs = sample_specs(
        _recipes(recipes), instances, seed + 17, (50, 200), (8, 16, 32), ccrs=_ccrs(ccrs)
    )
    built = build_teacher(KnowledgeBase(kb_dir or settings().kb_dir), specs, "fair", seed, samples)
    if out is not None:
        import io

        buffer = io.BytesIO()
        torch.save(built.teacher.predictor.state_dict(), buffer)
        write_output(out, buffer.getvalue())
    data = {
        **asdict(built.fit),
        "episodes": built.episodes,
        "instances": instances,
        "saved": str(out) if out else None,
    }
    emit(
        data,
        as_json,
        lambda d: console.print(
            f"predictor on {d['test_rows']} decisions of held-out episodes ({d['episodes']} "
            f"episodes in all): R^2 {d['r2_log_makespan']:.3f} on log(makespan), {d['r2']:.3f} on "
            f"log(makespan / time unit); MAPE {d['mape']:.1%}"
        ),
    )


@train_app.command("evaluate")
def train_evaluate(
    checkpoint: Path = typer.Argument(None, help="A policy checkpoint (.pt)."),
    untrained: bool = typer.Option(
        False, "--untrained", help="Evaluate a fresh network (seed 0): the prior alone."
    ),
    instances: int = typer.Option(_HELD_OUT.instances, help="Held-out instances."),
    recipes: str = typer.Option(None, help=RECIPES_HELP),
    ccrs: str = typer.Option(_CCRS, help="Data regimes: 0 = WfCommons sizes, else a CCR."),
    seed: int = typer.Option(0, help="Evaluation draw seed."),
    lookahead: int = typer.Option(
        0, help="Score policy-lookahead over this many candidates instead (0: greedy)."
    ),
    workers: int = typer.Option(2, help="Processes for --lookahead (per array task)."),
    slurm_array: int = typer.Option(_ARRAY.tasks, "--slurm-array", min=0, help=SLURM_ARRAY_HELP),
    array_dir: Path | None = typer.Option(_ARRAY.directory, "--array-dir", help=ARRAY_DIR_HELP),
    memory_mb: int = typer.Option(EVALUATE_MEMORY_MB, "--slurm-mem", help="MB per array task."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Greedy policy (or its lookahead) against HEFT on instances from held-out seeds."""
    from policy.learned.evaluate import HeldOutDraw, evaluate_regimes
    from policy.learned.evaluate_array import evaluation_net
    from sim.errors import InputError

    if untrained == (checkpoint is not None):
        raise InputError("train evaluate", ["give a CHECKPOINT or --untrained, not both"])
    draw = HeldOutDraw(_recipes(recipes), instances, seed, (50, 200), (8, 16, 32), _ccrs(ccrs))
    if slurm_array:
        from wass_chat.cli.array_run import array_report
        from wass_chat.slurm.arrays.work import evaluate_on_slurm

        array = ArrayConfig(slurm_array, array_dir, memory_mb)
        with array_report() as report:
            evs = evaluate_on_slurm(checkpoint, draw, lookahead, workers, array, report)
    else:
        net = evaluation_net(checkpoint)
        evs = evaluate_regimes(net, draw, lookahead=lookahead, workers=workers)

    def render(_: object) -> None:
        for regime, ev in evs.items():
            console.print(f"{regime}: {_line(ev)}")

    emit({k: asdict(v) for k, v in evs.items()}, as_json, render)


@train_app.command("pool")
def train_pool(
    runs: list[Path] = typer.Argument(
        ..., help="JSON of `train policy --json` or `train evaluate --json`, one per seed."
    ),
    baseline: list[Path] = typer.Option(
        [], "--baseline", help="Runs to compare with instance by instance (repeatable)."
    ),
    split: str = typer.Option(
        "held_out", help="For `train policy` output: held_out or generalisation."
    ),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Pool several runs' held-out ratios to HEFT, per regime and in all; pair with a baseline."""
    from policy.learned.evaluate import pool_runs

    pooled = pool_runs([_ratios(p, split) for p in runs], [_ratios(p, split) for p in baseline])

    def render(_: object) -> None:
        for regime, p in pooled.items():
            line = (
                f"{regime}: {p.runs} runs, {p.instances} instances: makespan/HEFT "
                f"{p.ratio_gm:.4f} [95% CI {p.ci_low:.4f}, {p.ci_high:.4f}], wins/ties/losses "
                f"{p.wins}/{p.ties}/{p.losses}"
            )
            if p.paired is not None:
                gm, low, high = p.paired
                line += (
                    f"; against the baseline {gm:.4f} [{low:.4f}, {high:.4f}] on "
                    f"{p.paired_instances} paired"
                )
            console.print(line)

    emit({k: asdict(v) for k, v in pooled.items()}, as_json, render)


def _ratios(path: Path, split: str) -> dict[str, dict[str, float]]:
    """Regime -> instance -> ratio from a ``train policy`` or ``train evaluate`` JSON output."""
    import json

    from sim.errors import InputError

    try:
        text = path.read_text()
        data = json.loads(text[text.find("{") :])  # a progress line may precede the JSON
        regimes = data.get(split, data)
        out = {
            r: {str(k): float(v) for k, v in ev["per_instance"].items()}
            for r, ev in regimes.items()
            if isinstance(ev, dict) and "per_instance" in ev
        }
    except (OSError, ValueError, AttributeError, TypeError) as exc:
        raise InputError(str(path), [f"not a training or evaluation result: {exc}"]) from None
    if not out:
        raise InputError(
            str(path),
            [f"no per-instance ratios under {split!r} (rerun `train evaluate CKPT --json`)"],
        )
    return out


def _reembed_kb(checkpoint: Path) -> dict[str, object]:
    """Re-embed the settings' knowledge base with ``checkpoint``'s encoder (gnn-v1)."""
    from kb.embedding_gnn import GnnEmbedder
    from wass_chat.cli.kb_cmds import reembed_store
    from wass_chat.config import settings

    return reembed_store(settings(), GnnEmbedder(checkpoint))


def _line(ev: Evaluation) -> str:
    return (
        f"makespan/HEFT {ev.ratio_gm:.4f} [95% CI {ev.ci_low:.4f}, {ev.ci_high:.4f}], "
        f"wins/ties/losses {ev.wins}/{ev.ties}/{ev.losses} on {ev.instances} instances; "
        f"HEFT/lower bound {ev.heft_over_bound_gm:.3f} (within 0.2% on {ev.heft_near_bound})"
    )


def register(app: typer.Typer) -> None:
    """Add ``wass-chat train`` (``train dqn``, ``train decima`` and ``train bench`` live in
    their own modules)."""
    from wass_chat.cli.train_bench_cmds import train_bench
    from wass_chat.cli.train_decima_cmds import train_decima
    from wass_chat.cli.train_dqn_cmds import train_dqn

    train_app.command("bench")(train_bench)
    train_app.command("dqn")(train_dqn)
    train_app.command("decima")(train_decima)
    app.add_typer(train_app, name="train")
