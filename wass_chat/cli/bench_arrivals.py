"""`wass-chat bench --arrivals`: many workflows at once on one cluster (policy.bench.arrivals)."""

from __future__ import annotations

import json
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from sim.atomic_files import write_atomic, write_output
from wass_chat.cli.output import console, emit

DEFAULT_PLATFORMS = "gpu:16"

ARRIVALS_HELP = (
    "Many workflows at once: stream sizes N,N,... (each a Poisson stream of generated workflows "
    "with GPU tasks arriving over --window seconds), or a CSV trace (columns time,workflow) to "
    "replay. Plots makespan, speedup and SLR against the load (docs/schedulers.md, 'Many "
    "workflows at once')."
)


def bench_arrivals(
    arrivals: str,
    window: float,
    stream_ccr: float,
    platforms: str,
    schedulers: str,
    seeds: int,
    network_model: str,
    jobs: int,
    json_path: Path | None,
    markdown_path: Path | None,
    plots: Path | None,
    as_json: bool,
    conflicting: dict[str, bool],
) -> None:
    """Run the arrivals bench; every bad flag is reported at once before any work."""
    from rich.markdown import Markdown
    from rich.progress import Progress

    from policy.bench.arrivals import (
        DEFAULT_ARRIVAL_SCHEDULERS,
        ArrivalInstance,
        ArrivalSpec,
        arrivals_markdown,
        check_scheduler_names,
        run_arrivals,
        summarize_arrivals,
    )
    from policy.bench.document import versions
    from policy.bench.matrix import BenchSpecError, parse_platforms
    from sim.arrivals import StreamSpec, read_trace

    problems = [f"{flag} does not apply to --arrivals" for flag, on in conflicting.items() if on]
    trace = arrivals if Path(arrivals).is_file() else None
    counts: tuple[int, ...] = ()
    if trace is None:
        items = [a.strip() for a in arrivals.split(",") if a.strip()]
        if not items or not all(a.isdigit() and int(a) >= 1 for a in items):
            problems.append(
                f"--arrivals {arrivals!r} is neither a trace file nor stream sizes like 10,50,150"
            )
        else:
            counts = tuple(sorted({int(a) for a in items}))
    if not window >= 0:
        problems.append(f"--window must be >= 0 seconds, got {window}")
    if not stream_ccr >= 0:
        problems.append(f"--stream-ccr must be >= 0, got {stream_ccr}")
    if network_model not in ("fair", "ideal"):
        problems.append(f"--network-model {network_model!r} is not fair or ideal")
    if problems:
        raise BenchSpecError("--arrivals", problems)
    names = check_scheduler_names(
        tuple(n.strip() for n in schedulers.split(",") if n.strip()) or DEFAULT_ARRIVAL_SCHEDULERS
    )
    platforms = platforms or DEFAULT_PLATFORMS
    sources = parse_platforms(platforms)
    if trace is not None:
        counts = (len(read_trace(trace)),)  # fails here, before any work, on a bad trace
    stream = StreamSpec(window=window, ccr=stream_ccr)
    spec = ArrivalSpec(counts, stream, trace, names, network_model)  # type: ignore[arg-type]
    instances = [ArrivalInstance(c, p, s) for c in counts for p in sources for s in range(seeds)]
    with Progress(console=console, transient=True) as bar:
        task = bar.add_task(f"{len(instances)} streams", total=len(instances))
        records = run_arrivals(
            instances, spec, jobs, lambda done, total: bar.update(task, completed=done)
        )
    summary = summarize_arrivals(records)
    title = f"wass-chat bench --arrivals ({network_model} network, {platforms})"
    settings = {"arrivals": arrivals, "platforms": platforms, "seeds": seeds, "jobs": jobs}
    document: dict[str, Any] = {
        "versions": versions(),
        "settings": settings,
        "run": asdict(replace(spec, counts=counts)),
        "records": [asdict(r) for r in records],
        "summary": summary,
    }
    markdown = arrivals_markdown(summary, title)
    if json_path:
        write_output(json_path, json.dumps(document, indent=2, default=str))
    if markdown_path:
        write_output(markdown_path, markdown)
    if plots:
        from policy.bench.plots import arrivals_plot

        write_atomic(plots / "arrivals.png", arrivals_plot(summary))
    emit(summary, as_json, lambda _: console.print(Markdown(markdown)))
