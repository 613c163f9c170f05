"""`wass-chat estimates`: a history of realised executions, and how good each estimate is.

``estimates seed`` fills a knowledge base with realised executions of the bench's recipes and
platform kinds under history seeds (never the bench's), or with ``--runs N --first-seed 0`` the
earlier runs of the bench's own instances (a recurring workflow); ``estimates error`` reports,
on the bench's own instances, the error of user requests, per-category means and the knowledge
base's predictions against the realised compute times (MAPE over every task-node pair).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from wass_chat.cli.output import console, emit

if TYPE_CHECKING:
    from policy.bench.matrix import Instance
    from sim.uncertainty import RuntimePredictions

estimates_app = typer.Typer(
    help="Runtime estimates under uncertainty: seed a history, measure estimate errors.",
    no_args_is_help=True,
)

_RECIPES = "montage:60,genome:60,epigenomics:50"


def _sources(workflows: list[str], recipes: str) -> list[Any]:
    """Workflow files/directories and recipes (the default recipes when neither is given)."""
    from policy.bench.matrix import parse_recipes, parse_workflow_files

    return parse_workflow_files(workflows) + parse_recipes(recipes or _RECIPES * (not workflows))


def _config(noise: float, uncertainty_seed: int) -> Any:
    from sim.uncertainty import UncertaintyConfig

    return UncertaintyConfig(seed=uncertainty_seed).scaled(noise)


def predictions_for(
    kb_dir: Path | None,
    instances: Sequence[Instance],
    noise: float,
    uncertainty_seed: int,
    k: int = 8,
) -> dict[str, RuntimePredictions]:
    """Each instance's ``kb`` predictions from the knowledge base in ``kb_dir``."""
    from kb.estimate_bench import instance_predictions
    from kb.store import KnowledgeBase

    assert kb_dir is not None, "callers check --kb first"
    kb = KnowledgeBase(kb_dir)
    try:
        return instance_predictions(kb, instances, _config(noise, uncertainty_seed), k)
    finally:
        kb.close()


def perfect_predictions(
    instances: Sequence[Instance], noise: float, uncertainty_seed: int
) -> dict[str, RuntimePredictions]:
    """Each instance's predictions from a perfect history (``bench --perfect-history``)."""
    from policy.planning_views import perfect_history

    cfg = _config(noise, uncertainty_seed)
    return {
        i.id: perfect_history(i.workflow.build(i.seed), i.platform.build(i.seed), i.seed, cfg)
        for i in instances
    }


@estimates_app.command("seed")
def seed(
    kb_dir: Path = typer.Option(..., "--kb", help="Knowledge base directory (created if new)."),
    workflows: list[str] = typer.Option([], "--workflows", help="WfFormat files or directories."),
    recipes: str = typer.Option("", "--recipes", help=f"Recipes with task budgets ({_RECIPES})."),
    platforms: str = typer.Option("hetero:8", "--platforms", help="KIND:NODES specs."),
    seeds: int = typer.Option(10, "--seeds", min=1, help="History seeds per recipe/platform."),
    first_seed: int = typer.Option(1000, "--first-seed", min=0, help="First history seed."),
    noise: float = typer.Option(1.0, "--noise", min=0.0, help="Scale of realised spreads."),
    uncertainty_seed: int = typer.Option(0, "--uncertainty-seed"),
    runs: int = typer.Option(
        0,
        "--runs",
        min=0,
        help="Store runs 1..N of each instance, a recurring workflow's earlier runs (with "
        "--first-seed 0: the bench's own instances, whose run 0 the bench measures).",
    ),
    as_json: bool = typer.Option(False, "--print-json", help="Print the result as JSON."),
) -> None:
    """Store realised executions (HEFT on user requests, replayed on noisy values)."""
    from kb.estimate_bench import fill_history, history_matrix
    from kb.store import KnowledgeBase
    from policy.bench.matrix import parse_platforms

    sources = _sources(workflows, recipes)
    history = history_matrix(sources, parse_platforms(platforms), seeds, first_seed)
    kb = KnowledgeBase(kb_dir)
    try:
        added = fill_history(kb, history, _config(noise, uncertainty_seed), runs=runs)
        total = kb.count()
    finally:
        kb.close()
    result = {
        "planned": len(history) * max(runs, 1),
        "added": added,
        "cases": total,
        "kb": str(kb_dir),
    }
    emit(
        result,
        as_json,
        lambda r: console.print(
            f"{r['added']} realised executions added ({r['planned']} planned); {r['cases']} cases"
            f" in {r['kb']}"
        ),
    )


@estimates_app.command("error")
def error(
    kb_dir: Path | None = typer.Option(
        None, "--kb", help="Knowledge base filled by `estimates seed`."
    ),
    workflows: list[str] = typer.Option([], "--workflows", help="WfFormat files or directories."),
    recipes: str = typer.Option("", "--recipes", help=f"Recipes with task budgets ({_RECIPES})."),
    platforms: str = typer.Option("hetero:8", "--platforms", help="KIND:NODES specs."),
    seeds: int = typer.Option(3, "--seeds", min=1, help="Bench seeds 0..N-1."),
    noise: float = typer.Option(1.0, "--noise", min=0.0, help="Scale of realised spreads."),
    uncertainty_seed: int = typer.Option(0, "--uncertainty-seed"),
    k: int = typer.Option(8, "--k", min=1, help="Cases retrieved per instance."),
    perfect_history: bool = typer.Option(
        False, "--perfect-history", help="Instead of --kb: a perfect history's predictions."
    ),
    as_json: bool = typer.Option(False, "--print-json", help="Print the result as JSON."),
) -> None:
    """MAPE of user, per-category-mean and kb estimates against realised compute times (kb:
    from the knowledge base, or with --perfect-history what infinitely many runs would give)."""
    from kb.estimate_bench import estimate_errors
    from policy.bench.matrix import BenchSpecError

    if perfect_history == (kb_dir is not None):
        raise BenchSpecError("--kb", ["give either --kb DIR or --perfect-history"])
    if kb_dir is not None and not kb_dir.is_dir():
        raise BenchSpecError(
            "--kb", [f"no knowledge base at {str(kb_dir)!r}: run `wass-chat estimates seed` first"]
        )
    from policy.bench.matrix import build_matrix, parse_platforms

    instances = build_matrix(_sources(workflows, recipes), parse_platforms(platforms), seeds)
    if kb_dir is None:
        predictions = perfect_predictions(instances, noise, uncertainty_seed)
    else:
        predictions = predictions_for(kb_dir, instances, noise, uncertainty_seed, k)
    summary = estimate_errors(instances, _config(noise, uncertainty_seed), predictions)
    emit(summary, as_json, _render)


def _render(summary: dict[str, Any]) -> None:
    from rich.table import Table

    table = Table(title=f"{summary['instances']} instances: planned vs realised compute time")
    for column in ("estimates", "MAPE (95% CI)", "median |log ratio|", "bias (planned/actual)"):
        table.add_column(column, justify="left" if column == "estimates" else "right")
    for mode in ("user", "mean", "kb"):
        m = summary[mode]
        low, high = m["mape_ci"]
        table.add_row(
            mode,
            f"{100 * m['mape']:.1f}% ({100 * low:.1f}-{100 * high:.1f})",
            f"{m['median_abs_log_ratio']:.3f}",
            f"{m['bias']['value']:.3f}",
        )
    console.print(table)


@estimates_app.command("compare")
def compare(
    runs: list[str] = typer.Argument(
        ...,
        help="MODE=BENCH.json, one per estimate mode; repeat a MODE to pool runs (the n-th "
        "runs of two modes pair up).",
    ),
    schedulers: str = typer.Option("", "--schedulers", help="Only these (comma-separated)."),
    baseline: str = typer.Option(
        "", "--baseline", help="A MODE: also each scheduler over itself in that run."
    ),
    seeds: str = typer.Option(
        "",
        "--seeds",
        help="Only instances of these seeds, e.g. 3-11 or 0,2 (pick the development seeds "
        "out of a longer run).",
    ),
    expected: bool = typer.Option(
        False,
        "--expected",
        help="Compare the plans' mean makespans over fresh runs (bench --reruns N) instead "
        "of the one measured run: what each choice gives on average, not one run's luck.",
    ),
    as_json: bool = typer.Option(False, "--print-json", help="Print the result as JSON."),
) -> None:
    """Pair bench runs made under different estimates (or loads): ratios to HEFT (same and kb
    estimates), RAG over no-RAG, the guard against min(HEFT, PEFT), and with ``--baseline``
    each scheduler over itself in another run, with 95% CIs.

    A MODE given several times pools its runs (say an idle cluster and two loads): figures
    cover all of them and the CIs resample whole instances, so an instance under three loads
    counts once."""
    import json

    from policy.bench.compare import EXPECTED, compare_runs
    from policy.bench.matrix import BenchSpecError

    documents: dict[str, list[Any]] = {}
    problems = []
    for item in runs:
        mode, sep, path = item.partition("=")
        if not sep or not Path(path).is_file():
            problems.append(f"{item!r} is not MODE=FILE with an existing bench JSON file")
            continue
        try:
            document = json.loads(Path(path).read_text())
        except json.JSONDecodeError as exc:
            problems.append(f"{path}: not JSON ({exc.msg})")
            continue
        if not _is_bench_document(document):
            problems.append(
                f"{path}: not a bench JSON document (records of scheduler, instance and makespan)"
            )
            continue
        if expected and not any(r.get(EXPECTED) is not None for r in document["records"]):
            problems.append(f"{path}: no expected makespans (bench it with --reruns N)")
            continue
        documents.setdefault(mode, []).append(document)
    kept = _seed_set(seeds, problems)
    if kept is not None:
        documents = {mode: [_only_seeds(d, kept) for d in docs] for mode, docs in documents.items()}
        if documents and not any(d["records"] for docs in documents.values() for d in docs):
            problems.append(f"--seeds {seeds!r}: no instance of the runs has one of these seeds")
    if baseline and baseline not in documents and not problems:
        problems.append(f"--baseline {baseline!r} is none of the runs ({', '.join(documents)})")
    if problems:
        raise BenchSpecError("estimates compare", problems)
    chosen = tuple(s.strip() for s in schedulers.split(",") if s.strip())
    field = EXPECTED if expected else "makespan"
    emit(compare_runs(documents, chosen, baseline, field), as_json, _render_compare)


SeedRanges = list[tuple[int, int]]
"""Inclusive (first, last) seed ranges."""


def _seed_set(text: str, problems: list[str]) -> SeedRanges | None:
    """``3-11`` / ``0,2,5-7`` as inclusive seed ranges; None for no filter (an empty ``text``)."""
    if not text.strip():
        return None
    chosen: SeedRanges = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        low, dash, high = item.partition("-")
        try:
            first, last = int(low), int(high if dash else low)
        except ValueError:
            problems.append(f"--seeds {item!r} is not N or A-B")
            continue
        if first > last:
            problems.append(f"--seeds {item!r} runs backwards")
        chosen.append((first, last))
    return chosen


def _only_seeds(document: dict[str, Any], seeds: SeedRanges) -> dict[str, Any]:
    def kept(record: dict[str, Any]) -> bool:
        seed = record.get("seed")
        return isinstance(seed, int) and any(a <= seed <= b for a, b in seeds)

    return {**document, "records": [r for r in document["records"] if kept(r)]}


def _is_bench_document(document: Any) -> bool:
    records = document.get("records") if isinstance(document, dict) else None
    return isinstance(records, list) and all(
        isinstance(r, dict) and {"scheduler", "instance", "makespan"} <= r.keys() for r in records
    )


def _label(result: dict[str, Any], mode: str) -> str:
    runs = result.get("runs", {}).get(mode, 1)
    return f"{mode} ({runs} runs)" if runs > 1 else mode


def _cell(p: dict[str, Any]) -> str:
    return f"{p['value']:.3f} ({p['low']:.3f}-{p['high']:.3f}) {p['wins']}/{p['losses']}"


def _ratio(p: dict[str, Any]) -> str:
    return f"geometric mean {p['value']:.3f} ({p['low']:.3f}-{p['high']:.3f})"


def _render_compare(result: dict[str, Any]) -> None:
    from rich.table import Table

    modes = list(result["modes"])
    names = list(dict.fromkeys(s for m in modes for s in result["modes"][m]["over_heft"]))
    what = "mean makespan over reruns" if result.get("field") == "expected_makespan" else "makespan"
    table = Table(title=f"{what} / HEFT on the same estimates (95% CI) wins/losses")
    table.add_column("scheduler")
    for mode in modes:
        table.add_column(_label(result, mode), justify="right")
    for name in names:
        table.add_row(
            name,
            *(
                _cell(result["modes"][m]["over_heft"][name])
                if name in result["modes"][m]["over_heft"]
                else "n/a"
                for m in modes
            ),
        )
    console.print(table)
    for mode, cells in result["versus_baseline"].items():
        console.print(
            f"{mode} over the baseline, each scheduler over itself: "
            + "; ".join(f"{name} {_cell(cell)}" for name, cell in cells.items())
        )
    if result["versus_heft_on_kb"]:
        table = Table(title="makespan / HEFT planning on kb estimates")
        table.add_column("scheduler")
        for mode in result["versus_heft_on_kb"]:
            table.add_column(f"on {_label(result, mode)}", justify="right")
        for name in names:
            table.add_row(
                name,
                *(
                    _cell(cells[name]) if name in cells else "n/a"
                    for cells in result["versus_heft_on_kb"].values()
                ),
            )
        console.print(table)
    for mode, entry in result["modes"].items():
        if "rag_over_norag" in entry:
            console.print(
                f"{mode}: policy / policy-norag, paired: {_cell(entry['rag_over_norag'])}"
            )
        for key, label in (
            ("guard", "rag-guarded / min(HEFT, PEFT)"),
            ("chooser", "heft-or-peft / min(HEFT, PEFT)"),
            ("guard_over_chooser", "rag-guarded / heft-or-peft"),
        ):
            if guard := entry.get(key):
                console.print(
                    f"{mode}: {label}: {guard['losses']} losses of {guard['instances']}, "
                    f"worst {guard['worst']:.4f}, {_ratio(guard['ratio'])}"
                )
