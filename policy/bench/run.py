"""One `wass-chat bench` run as a library call: a typed :class:`BenchConfig`, checked into a
:class:`BenchPlan` (every bad flag found before any work), then :func:`run_bench`, which
simulates the matrix, optionally solves the optimality study, and returns the summary, the JSON
document and the Markdown. The CLI only parses flags into the config, writes files and prints.

Runtime predictions (``--kb``, ``--perfect-history``) and a Slurm job array come from higher
floors, so the caller passes them in: ``predictions`` and ``run_instances``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias, cast

if TYPE_CHECKING:  # the heavy modules load when a bench runs, not when the CLI starts
    from policy.bench.matrix import Instance
    from policy.bench.optimality import GapRecord
    from policy.bench.runner import InstanceOutcome, RunSpec
    from sim.background import BackgroundConfig
    from sim.schedule import NetworkModel
    from sim.uncertainty import RuntimePredictions

DEFAULT_RECIPES = "montage:60,genome:60,epigenomics:50"
DEFAULT_SCHEDULERS = "heft,cpop,peft,minmin,maxmin,sjf,ljf,slurm,wass,random"
DEFAULT_PLATFORMS = "hetero:8"
OPTIMALITY_INSTANCES = 50
"""Small random instances the optimality study solves exactly (``--optimal``)."""


@dataclass(frozen=True)
class BenchConfig:
    """What to bench; the defaults are `wass-chat bench`'s, each field one of its flags."""

    workflows: tuple[str, ...] = ()
    """WfFormat files or directories (``--workflows``, repeatable)."""
    recipes: str = ""
    """Recipes with task budgets, e.g. :data:`DEFAULT_RECIPES`, the default when neither this
    nor ``workflows`` is given (``--recipes``)."""
    platforms: str = ""
    """``KIND:NODES`` specs or platform files, comma-separated (``--platforms``); empty:
    :data:`DEFAULT_PLATFORMS` (empty, not the value itself, so ``bench --arrivals`` can tell a
    choice from its own default)."""
    schedulers: str = ""
    """Scheduler names, comma-separated (``--schedulers``); empty: :data:`DEFAULT_SCHEDULERS`."""
    seeds: int = 3
    """Seeds 0..N-1 per workflow and platform (``--seeds``)."""
    network_model: str = "fair"
    """``fair`` (contended links) or ``ideal`` (``--network-model``)."""
    jobs: int = 1
    """Worker processes (``--jobs``)."""
    peers: str = ""
    """``saga`` adds SAGA's schedulers as peers (``--peers``)."""
    optimal: bool = False
    """Also solve :data:`OPTIMALITY_INSTANCES` small instances exactly with CP-SAT: optimality
    gaps (``--optimal``)."""
    estimates: str = ""
    """``""``: the exact setting; ``user``, ``mean``, ``kb`` or ``oracle``: plan on those
    estimates, replay on realised values (``--estimates``)."""
    noise: float = 1.0
    """Scale of every realised-value spread; 0 makes actual = nominal (``--noise``)."""
    uncertainty_seed: int = 0
    """Seeds node-class slowdowns and request factors (``--uncertainty-seed``)."""
    load: str = ""
    """A background load, ``share=S,horizon=H,seed=K,seen=1``; empty: an idle cluster
    (``--load``, :func:`sim.background.parse_load`)."""
    kb_dir: Path | None = None
    """Knowledge base of realised executions for ``estimates="kb"``, and for the learned
    policy's own retrieval under ``estimates="user"`` (``--kb``)."""
    perfect_history: bool = False
    """Instead of ``kb_dir``: the predictions infinitely many earlier runs would give
    (``--perfect-history``)."""
    reruns: int = 0
    """Under estimates, also replay every plan on this many fresh runs of each instance and
    record its mean makespan (``--reruns``)."""

    def wants_kb_predictions(self) -> bool:
        """Whether the run plans on predictions retrieved from ``kb_dir``."""
        return not self.perfect_history and (
            self.estimates == "kb" or (self.estimates == "user" and self.kb_dir is not None)
        )

    def settings(self, background: BackgroundConfig | None) -> dict[str, Any]:
        """The config as the JSON document's ``settings`` records it."""
        return {
            "workflows": list(self.workflows),
            "recipes": self.recipes,
            "platforms": self.platforms,
            "seeds": self.seeds,
            "network_model": self.network_model,
            "jobs": self.jobs,
            "peers": self.peers,
            "optimal": self.optimal,
            "estimates": self.estimates,
            "noise": self.noise,
            "uncertainty_seed": self.uncertainty_seed,
            "load": asdict(background) if background else None,
            "kb": str(self.kb_dir) if self.kb_dir else None,
            "perfect_history": self.perfect_history,
            "reruns": self.reruns,
        }


@dataclass(frozen=True)
class BenchPlan:
    """A checked config: the instances and what to run on each."""

    instances: list[Instance]
    spec: RunSpec


@dataclass(frozen=True)
class BenchResult:
    """What a bench run produced."""

    outcomes: list[InstanceOutcome]
    summary: dict[str, Any]
    document: dict[str, Any]
    """Everything to reproduce and audit the run (:func:`policy.bench.document.bench_document`)."""
    markdown: str

    def printed_summary(self) -> dict[str, Any]:
        """The summary, with the optimality study when there was one: what the CLI prints."""
        optimality = self.document.get("optimality")
        return self.summary | ({"optimality": optimality} if optimality else {})


BenchProgress = Callable[[str, int, int], None]
"""Called with a stage's label, the units done and the total (from 0 at the stage's start)."""
InstanceRunner: TypeAlias = (
    "Callable[[list[Instance], RunSpec, Mapping[str, RuntimePredictions] | None], "
    "list[InstanceOutcome]]"
)
"""Runs the instances somewhere else (a Slurm job array) with :func:`run_matrix`'s result."""


def plan_bench(cfg: BenchConfig) -> BenchPlan:
    """Check ``cfg`` and build its instances; every problem raises before any simulation
    (:class:`~policy.bench.matrix.BenchSpecError`, or ServiceUnavailable without SAGA)."""
    from policy.bench.matrix import (
        BenchSpecError,
        build_matrix,
        parse_platforms,
        parse_recipes,
        parse_workflow_files,
    )
    from policy.bench.runner import RunSpec
    from policy.registry import canonical_name

    if cfg.network_model not in ("fair", "ideal"):
        raise BenchSpecError("--network-model", [f"{cfg.network_model!r} is not fair or ideal"])
    schedulers = cfg.schedulers or DEFAULT_SCHEDULERS
    names = tuple(canonical_name(n) for n in schedulers.split(",") if n.strip())
    peer_names = _peer_names(cfg.peers)
    sources = parse_workflow_files(list(cfg.workflows)) + parse_recipes(
        cfg.recipes or DEFAULT_RECIPES * (not cfg.workflows)
    )
    instances = build_matrix(
        sources, parse_platforms(cfg.platforms or DEFAULT_PLATFORMS), cfg.seeds
    )
    background = _check_uncertainty(cfg)
    idle_only = [f"saga-{p}" for p in peer_names]  # SAGA's conversions assume an idle machine
    if background is not None and idle_only:  # they would fail after minutes of work
        raise BenchSpecError("--load", [f"{n} plans on an idle cluster only" for n in idle_only])
    spec = RunSpec(
        names,
        cast("NetworkModel", cfg.network_model),
        peer_names,
        cfg.estimates,
        cfg.noise,
        cfg.uncertainty_seed,
        background,
        cfg.reruns,
    )
    return BenchPlan(instances, spec)


def run_bench(
    cfg: BenchConfig,
    progress: BenchProgress | None = None,
    *,
    plan: BenchPlan | None = None,
    predictions: Mapping[str, RuntimePredictions] | None = None,
    run_instances: InstanceRunner | None = None,
) -> BenchResult:
    """Run the bench ``cfg`` describes (``plan``: its :func:`plan_bench`, if already made).

    ``predictions`` maps instance ids to their runtime predictions (``--kb``,
    ``--perfect-history``); ``run_instances`` replaces the local run (its progress is its own).
    """
    from policy.bench.document import bench_document
    from policy.bench.report import gap_markdown, summarize, to_markdown
    from policy.bench.runner import run_matrix

    plan = plan or plan_bench(cfg)
    instances, spec = plan.instances, plan.spec
    if run_instances is not None:
        outcomes = run_instances(instances, spec, predictions)
    else:
        stage = f"{len(instances)} instances"
        report = _stage(progress, stage, len(instances))
        outcomes = run_matrix(instances, spec, cfg.jobs, report, predictions)
    gaps: list[GapRecord] | None = None
    if cfg.optimal:
        from policy.bench.optimality import optimality_study

        report = _stage(progress, "optimality gap (CP-SAT)", OPTIMALITY_INSTANCES)
        gaps = optimality_study(spec.schedulers, OPTIMALITY_INSTANCES, 0, cfg.jobs, report)
    summary = summarize(outcomes)
    document = bench_document(cfg.settings(spec.load), spec, outcomes, summary, gaps)
    markdown = to_markdown(summary, f"wass-chat bench ({cfg.network_model} network)")
    if gaps is not None:
        markdown += gap_markdown(document["optimality"])
    return BenchResult(outcomes, summary, document, markdown)


def _stage(progress: BenchProgress | None, label: str, total: int) -> Callable[[int, int], None]:
    """Announce a stage to ``progress`` and return the (done, total) callback for it."""
    if progress is None:
        return lambda done, total: None
    report = progress
    report(label, 0, total)
    return lambda done, total: report(label, done, total)


def _check_uncertainty(cfg: BenchConfig) -> BackgroundConfig | None:
    """Every problem with the uncertainty and load settings, as one BenchSpecError; the load."""
    from policy.bench.matrix import BenchSpecError
    from sim.background import parse_load
    from sim.errors import InputError
    from sim.uncertainty import ESTIMATE_MODES

    estimates, noise, kb_dir, reruns = cfg.estimates, cfg.noise, cfg.kb_dir, cfg.reruns
    problems = []
    if estimates and estimates not in ESTIMATE_MODES:
        problems.append(f"--estimates {estimates!r} is not one of {', '.join(ESTIMATE_MODES)}")
    if not noise >= 0:
        problems.append(f"--noise must be >= 0, got {noise}")
    background = None
    try:
        background = parse_load(cfg.load)
    except InputError as error:
        problems += [f"--load: {p}" for p in error.problems]
    if cfg.perfect_history:
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
    """SAGA's scheduler names if ``peers`` asks for them (an error if SAGA is missing)."""
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
