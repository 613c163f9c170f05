"""`wass-chat kb ...`: query, stats, prune, reembed and bench the knowledge base (seed and merge:
:mod:`wass_chat.cli.kb_seed_cmds`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from wass_chat.cli.output import console, emit, err_console
from wass_chat.learn.site_kb import open_kb

if TYPE_CHECKING:
    from kb.embedding import Embedder
    from wass_chat.config import Settings

kb_app = typer.Typer(help="Knowledge base of past executions (Chroma).", no_args_is_help=True)

KB_DIR = typer.Option(None, "--kb", help="Knowledge-base directory (default: WASS_HOME/kb).")
JSON = typer.Option(False, "--json", help="Print JSON.")


def comma_list(text: str) -> tuple[str, ...]:
    """The non-empty, stripped items of a comma-separated option."""
    return tuple(part.strip() for part in text.split(",") if part.strip())


def kb_opener(kb_dir: Path | None = None) -> Any:
    """The knowledge base runs are learned into (``--kb`` or the settings': ``WASS_HOME/kb`` or
    the site's served store), opened and closed around each use, only when a run has ended.

    An empty ``WASS_HOME/kb`` first gets the shipped demo store, as the app's first question
    installs it (:mod:`wass_chat.agent.facts.kb_build`), so whichever comes first, the app or a
    learned run, the store ends up the same."""
    from contextlib import closing

    from wass_chat.agent.cancellation import Work
    from wass_chat.agent.facts.kb_build import build_demo_kb, stored_cases
    from wass_chat.config import settings

    def opened() -> Any:
        cfg = settings()
        if kb_dir is None and cfg.chroma_mode != "http" and stored_cases(cfg.kb_dir) == 0:
            build_demo_kb(cfg.kb_dir, Work())
        return closing(open_kb(kb_dir))

    return opened


def _progress() -> Any:
    """A rich Progress on stderr showing count, rate, elapsed time and ETA."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        Task,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.text import Text

    class RateColumn(ProgressColumn):
        def render(self, task: Task) -> Text:
            speed = task.finished_speed or task.speed
            return Text(f"{speed:,.0f}/s" if speed else "-/s", style="progress.data.speed")

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        RateColumn(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=err_console,
    )


def _stage_callback(progress: Any) -> Callable[[str, int], Callable[[int], None]]:
    """``on_stage(name, total)``: a new bar in ``progress``, returning its ``advance(n)``."""

    def on_stage(name: str, total: int) -> Callable[[int], None]:
        task = progress.add_task(name, total=total)
        return lambda n: progress.advance(task, n)

    return on_stage


def comma_integers(option: str, text: str) -> tuple[int, ...]:
    """A comma-separated list of integers, or an InputError naming ``option``."""
    from sim.errors import InputError

    try:
        return tuple(int(s) for s in comma_list(text))
    except ValueError as exc:
        raise InputError(option, [f"{text!r} is not a comma-separated list of integers"]) from exc


@contextmanager
def progress_bar(label: str, total: int | None) -> Iterator[Callable[[int], None]]:
    """One progress bar on stderr; yields an ``advance(n)`` callback."""
    with _progress() as progress:
        yield _stage_callback(progress)(label, total or 0)


@kb_app.command("query")
def query_command(
    workflow: str = typer.Argument(..., help="WfFormat file or demo:<name>."),
    k: int = typer.Option(5, "--k", help="Cases to return."),
    platform: str = typer.Option("demo", "--platform", help="demo, homo-N, hetero-N or a file."),
    kb_dir: Path | None = KB_DIR,
    as_json: bool = JSON,
) -> None:
    """The stored cases most similar to running WORKFLOW on the platform."""
    from kb.seed import resolve_platform
    from sim.demo import resolve_workflow

    wf, pf = resolve_workflow(workflow), resolve_platform(platform)
    kb = open_kb(kb_dir, existing=True)
    try:
        hits = kb.query(wf, pf, k=k)
    finally:
        kb.close()
    data = [h.to_dict() for h in hits]

    def render(rows: list[dict[str, Any]]) -> None:
        from rich.table import Table

        table = Table(title=f"cases like {wf.name} on {pf.name}")
        for column in ("similarity", "scheduler", "makespan (s)", "workflow", "platform", "case"):
            table.add_column(column)
        for r in rows:
            table.add_row(
                f"{r['similarity']:.4f}",
                r["scheduler"],
                f"{r['makespan']:.1f}",
                r["workflow"],
                r["platform"],
                r["case_id"],
            )
        console.print(table)

    emit(data, as_json, render)


@kb_app.command("stats")
def stats_command(kb_dir: Path | None = KB_DIR, as_json: bool = JSON) -> None:
    """What the knowledge base holds, and which embedder its vectors come from."""
    from kb.curate import kb_stats
    from kb.embedders import registry_name

    kb = open_kb(kb_dir, existing=True)
    try:
        data = kb_stats(kb)
        data["embedder"]["spec"] = registry_name(kb.embedder)
    finally:
        kb.close()

    def render(d: dict[str, Any]) -> None:
        console.print(
            f"{d['cases']} cases ({d['workflows']} workflows), {d['decisions']} decisions"
            f" in {d['directory']} ({d['disk_bytes'] / 2**20:.1f} MiB)"
        )
        console.print(f"embedder {d['embedder']['spec']} (checksum {d['embedder']['checksum']})")
        console.print(f"by scheduler: {d['by_scheduler']}")
        console.print(f"by platform: {d['by_platform']}")
        console.print(f"case vectors by platform family (one collection each): {d['shards']}")
        console.print(f"by recipe or shape: {d['by_kind']}")
        console.print(
            f"by source: {d['by_source']} (slurm: real runs); "
            f"{d['failed_runs']} runs that did not complete kept apart"
        )
        console.print(f"makespan: {d['makespan']}")

    emit(data, as_json, render)


@kb_app.command("prune")
def prune_command(
    dry_run: bool = typer.Option(False, "--dry-run", help="Show what would change."),
    merge_tolerance: float = typer.Option(0.01, "--merge-tolerance"),
    dominated_factor: float = typer.Option(2.0, "--dominated-factor"),
    platforms: str = typer.Option(
        "", "--platforms", help="Current platforms: prune cases on nodes they lack."
    ),
    kb_dir: Path | None = KB_DIR,
    as_json: bool = JSON,
) -> None:
    """Merge near-duplicates, prune dominated cases and cases on vanished nodes."""
    from kb.curate import CurationConfig, apply_curation, plan_curation
    from kb.seed import resolve_platform

    current = {p.name: p for p in (resolve_platform(name) for name in comma_list(platforms))}
    kb = open_kb(kb_dir, existing=True)
    try:
        plan = plan_curation(
            kb.sidecar.case_rows(), CurationConfig(merge_tolerance, dominated_factor), current
        )
        removed = 0 if dry_run else apply_curation(kb, plan)
        remaining = kb.count()
    finally:
        kb.close()
    data = {**plan.to_dict(), "dry_run": dry_run, "removed_now": removed, "remaining": remaining}
    emit(
        data,
        as_json,
        lambda d: console.print(
            f"{'would remove' if dry_run else 'removed'} {d['removed']} cases: "
            f"{sum(len(v) for v in d['merged_into'].values())} merged, {len(d['dominated'])} "
            f"dominated, {len(d['outdated'])} outdated; {d['remaining']} stored"
        ),
    )


@kb_app.command("reembed")
def reembed_command(
    embedder: str = typer.Option(
        "structural-v0", "--embedder", help="structural-v0, gnn-v1 or gnn-v1:<checkpoint.pt>."
    ),
    checkpoint: Path | None = typer.Option(
        None, "--checkpoint", help="Policy checkpoint for gnn-v1 (default: the shipped one)."
    ),
    kb_dir: Path | None = KB_DIR,
    as_json: bool = JSON,
) -> None:
    """Re-embed every stored case and decision with EMBEDDER; later opens then use it."""
    from kb.embedders import embedder_by_name
    from sim.errors import InputError

    if checkpoint is not None:
        if embedder != "gnn-v1":
            raise InputError("--checkpoint", ["only the gnn-v1 embedder takes a checkpoint"])
        embedder = f"gnn-v1:{checkpoint}"
    data = reembed_store(kb_dir, embedder_by_name(embedder))
    emit(
        data,
        as_json,
        lambda d: console.print(
            f"{d['cases']} cases and {d['decisions']} decisions embedded with {d['embedder']}"
            f" (checksum {d['checksum']}) in {d['seconds']} s = {d['cases_per_second']} cases/s"
        ),
    )


def reembed_store(location: Path | Settings | None, target: Embedder) -> dict[str, Any]:
    """Re-embed the knowledge base at ``location`` (default: the settings') with ``target``
    under a progress bar, and make it the store's embedder; returns the new counts.

    The store is opened with ``target`` itself, so a store whose recorded embedder can no
    longer be built (a deleted checkpoint) can still be re-embedded.
    """
    import time

    from kb.embedders import registry_name

    kb = open_kb(location, embedder=target, repair=False)
    try:
        total = kb.count() + kb.sidecar.count("decisions")
        started = time.perf_counter()
        with progress_bar(f"re-embedding with {target.name}", total) as advance:
            kb.reembed(target, progress=advance)
        seconds = time.perf_counter() - started
        cases = kb.cases.count()
        return {
            "embedder": registry_name(target),
            "checksum": target.checksum,
            "cases": cases,
            "decisions": kb.decisions.count(),
            "seconds": round(seconds, 2),
            "cases_per_second": round(cases / seconds, 1) if seconds > 0 else None,
        }
    finally:
        kb.close()


@kb_app.command("bench")
def bench_command(
    cases: int = typer.Option(100_000, "--cases"),
    queries: int = typer.Option(200, "--queries"),
    noise: float = typer.Option(0.05, "--noise", help="Perturbation, in feature scales."),
    platforms: str = typer.Option(
        "demo,homo-16,hetero-8@0,hetero-16@1,hetero-32@2",
        "--platforms",
        help="Platforms the base workflows are embedded on (as for kb seed).",
    ),
    ef_search: int | None = typer.Option(None, "--ef-search"),
    ef_construction: int | None = typer.Option(None, "--ef-construction"),
    max_neighbors: int | None = typer.Option(None, "--max-neighbors"),
    directory: Path | None = typer.Option(None, "--dir", help="Store here (default: temp dir)."),
    ef_sweep: str = typer.Option(
        "", "--ef-sweep", help="More ef_search values to measure afterwards, e.g. 100,400."
    ),
    as_json: bool = JSON,
) -> None:
    """Insert rate, top-5 latency, recall@5 vs exact search, disk size and reopen time."""
    from dataclasses import replace

    from kb.bench import BenchConfig, run_bench
    from kb.chroma_client import HnswSettings
    from kb.seed import expand_platforms

    default = HnswSettings()
    hnsw = replace(
        default,
        ef_search=ef_search or default.ef_search,
        ef_construction=ef_construction or default.ef_construction,
        max_neighbors=max_neighbors or default.max_neighbors,
    )
    config = BenchConfig(
        cases=cases,
        queries=queries,
        noise=noise,
        platforms=expand_platforms(comma_list(platforms)),
        hnsw=hnsw,
        directory=directory,
        ef_sweep=comma_integers("--ef-sweep", ef_sweep),
    )
    with _progress() as progress:
        data = run_bench(config, _stage_callback(progress))
    emit(
        data,
        as_json,
        lambda d: console.print(
            f"{d['cases']:,} cases: insert {d['insert_per_second']:,.0f}/s; top-5 p50 "
            f"{d['query_ms']['p50']:.2f} ms, p95 {d['query_ms']['p95']:.2f} ms; recall@5 "
            f"{d['recall_at_5']:.3f}; disk {d['disk_bytes'] / 2**20:.0f} MiB; reopen "
            f"{d['reopen_seconds']:.2f} s\nvectors: {d['vectors']}"
            + "".join(
                f"\nef_search {r['ef_search']}: p50 {r['query_ms']['p50']:.2f} ms, p95 "
                f"{r['query_ms']['p95']:.2f} ms, recall@5 {r['recall_at_5']:.3f}"
                for r in d["ef_sweep"]
            )
        ),
    )


def register(app: typer.Typer) -> None:
    """Add this area's commands to ``app``."""
    app.add_typer(kb_app, name="kb")


@kb_app.command("backup")
def backup_command(
    directory: Path = typer.Argument(..., help="A new folder for the backup."),
    kb_dir: Path | None = KB_DIR,
    as_json: bool = JSON,
) -> None:
    """Copy every case, decision and failed run to DIRECTORY (consistent while in use)."""
    from kb.backup import backup

    kb = open_kb(kb_dir, existing=True, repair=False)
    try:
        counts = backup(kb, directory)
    finally:
        kb.close()
    emit(
        counts,
        as_json,
        lambda d: console.print(
            f"backed up {d['cases']} cases, {d['decisions']} decisions, {d['failed_cases']} failed"
            f" runs to {directory}"
        ),
    )


@kb_app.command("restore")
def restore_command(
    directory: Path = typer.Argument(..., help="A folder `kb backup` wrote."),
    kb_dir: Path | None = KB_DIR,
    as_json: bool = JSON,
) -> None:
    """Add the backup's records the knowledge base lacks, embedding their vectors again, once
    the backup has the size and digest its manifest names (else exit 2, nothing restored)."""
    from kb.backup import check_backup, restore

    total = check_backup(directory)["cases"]  # a broken backup: refused before the store opens
    kb = open_kb(kb_dir)
    try:
        with progress_bar("restoring cases", total) as advance:
            added = restore(kb, directory, advance)
    finally:
        kb.close()
    emit(
        added,
        as_json,
        lambda d: console.print(
            f"restored {d['cases']} cases, {d['decisions']} decisions, {d['failed_cases']} failed"
            f" runs from {directory}"
        ),
    )


@kb_app.command("verify")
def verify_command(
    delete: bool = typer.Option(False, "--delete", help="Delete the implausible cases."),
    kb_dir: Path | None = KB_DIR,
    as_json: bool = JSON,
) -> None:
    """List stored cases faster than their critical-path bound (forged or broken) with who
    wrote them; exit 1 while any is stored (``--delete`` removes them)."""
    from kb.verification import implausible_cases

    kb = open_kb(kb_dir, existing=True, repair=False)
    try:
        found = implausible_cases(kb)
        if delete and found:
            kb.delete_cases([c["case_id"] for c in found])
        total = kb.count()
    finally:
        kb.close()
    data = {"cases": total, "implausible": found, "deleted": delete and bool(found)}

    def render(d: dict[str, Any]) -> None:
        for c in d["implausible"]:
            console.print(
                f"{c['case_id']} ({c['source']}, by {c['written_by'] or 'unrecorded'}):"
                f" {c['problem']}"
            )
        verb = "deleted; cases left:" if d["deleted"] else "implausible of"
        console.print(f"{len(d['implausible'])} {verb} {d['cases']}")

    emit(data, as_json, render)
    if found and not delete:
        raise typer.Exit(1)
